"""Browse… beside a path field: a file dialog that fills the field.

The dialog is opened window-modal with open(), never exec(): a nested event loop would
stall the asyncio tasks qasync runs (see gui/dialogs.py). The button is named
`browse-<field's object name>`, so tests (and people reading the widget tree) find it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLineEdit, QPushButton

from ..i18n import tr

#: what a field holds: a folder, or a file (any file; filters narrow the list)
FOLDER = "folder"
FILE = "file"


def browse_button(edit: QLineEdit, kind: str, caption: str,
                  on_chosen: Callable[[str], object], filters: str = "") -> QPushButton:
    """A "Browse…" button for `edit`; the chosen path is written to it and to on_chosen."""
    button = QPushButton(tr("Browse…"), edit.parentWidget())
    button.setObjectName(f"browse-{edit.objectName()}")
    button.setToolTip(caption)

    def chosen(path: str) -> None:
        edit.setText(path)
        on_chosen(path)

    button.clicked.connect(lambda: open_dialog(edit, kind, caption, chosen, filters))
    return button


def open_dialog(edit: QLineEdit, kind: str, caption: str, chosen: Callable[[str], object],
                filters: str = "") -> QFileDialog:
    """Open the file dialog for `edit`, starting where its text points."""
    dialog = QFileDialog(edit.window(), caption, edit.text().strip(), filters)
    dialog.setObjectName("browse-dialog")
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if kind == FOLDER:
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
    else:
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.fileSelected.connect(chosen)
    dialog.open()
    return dialog
