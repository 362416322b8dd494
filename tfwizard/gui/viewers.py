"""Files shown inside the app, so that nothing depends on a desktop launcher: a log (or
any text file) in a viewer window, the user guide, the About box; a folder goes to the
file manager, and where none answers a box says where it is."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from tfwizard.core.resources import guide_path

from .i18n import tr

#: the most of a file the viewer reads (its end: where a build failed); the rest is on disk
MAX_BYTES = 8 * 2**20


def _path_label(parent: QWidget, path: Path) -> QLabel:
    label = QLabel(str(path), parent)
    label.setObjectName("viewer-path")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def read_tail(path: Path, limit: int = MAX_BYTES) -> tuple[str, bool]:
    """The file's text (its last `limit` bytes, from a line start) and whether it was cut."""
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - limit))
        data = f.read()
    cut = size > limit
    if cut and b"\n" in data:
        data = data[data.index(b"\n") + 1:]
    return data.decode("utf-8", errors="replace"), cut


class TextFileViewer(QDialog):
    """A text file (a build log) read into a window: its path, its text at the end, and
    "Open with the desktop's viewer" for those who have one."""

    def __init__(self, path: Path, parent: QWidget | None, title: str = "") -> None:
        super().__init__(parent)
        self.path = path
        self.setObjectName("text-file-viewer")
        self.setWindowTitle(title or path.name)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        column = QVBoxLayout(self)
        column.addWidget(_path_label(self, path))
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("viewer-text")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        column.addWidget(self.text, 1)
        self.status = QLabel("", self)
        self.status.setObjectName("viewer-status")
        self.status.setWordWrap(True)
        column.addWidget(self.status)
        row = QHBoxLayout()
        desktop = QPushButton(tr("Open with the desktop's viewer"), self)
        desktop.setObjectName("viewer-desktop")
        desktop.clicked.connect(self.open_outside)
        row.addWidget(desktop)
        row.addStretch(1)
        close = QPushButton(tr("Close"), self)
        close.clicked.connect(self.close)
        row.addWidget(close)
        column.addLayout(row)
        self.resize(900, 600)
        self.load()

    def load(self) -> None:
        """Read the file (its end) into the view, scrolled to the last line's start."""
        try:
            text, cut = read_tail(self.path)
        except OSError as exc:
            self.text.setPlainText("")
            self.status.setText(tr("Cannot read {path}: {error}").format(
                path=self.path, error=exc.strerror or exc))
            return
        self.text.setPlainText(text)
        if cut:
            self.status.setText(tr("Only the last {mib} MiB are shown; the whole file is at "
                                   "the path above.").format(mib=MAX_BYTES // 2**20))
        self.text.verticalScrollBar().setValue(self.text.verticalScrollBar().maximum())
        self.text.horizontalScrollBar().setValue(0)

    def open_outside(self) -> bool:
        """Hand the file to the desktop's viewer; says where it is when none answers."""
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.path))):
            return True
        self.status.setText(tr("No desktop viewer answered. The file is {path}.").format(
            path=self.path))
        return False


def show_text_file(parent: QWidget, path: Path, title: str = "") -> TextFileViewer:
    """Show a text file in a viewer window (modeless)."""
    viewer = TextFileViewer(Path(path), parent, title)
    viewer.show()
    return viewer


def open_folder(parent: QWidget, path: Path) -> bool:
    """Show a folder in the file manager; a box says where it is when none answers."""
    if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return True
    box = QMessageBox(QMessageBox.Icon.Information, tr("Folder"),
                      tr("No file manager answered. The folder is:"),
                      QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("folder-box")
    box.setInformativeText(str(path))
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.open()
    return False


class GuideViewer(QDialog):
    """The user guide (docs/guide.md, shipped with tfwizard) read in the app: offline,
    with its links to the other documents followed inside it."""

    def __init__(self, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName("guide-viewer")
        self.setWindowTitle(tr("tfwizard user guide"))
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        column = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("guide-text")
        self.browser.setOpenExternalLinks(True)
        column.addWidget(self.browser, 1)
        path = guide_path()
        if path is None:
            self.browser.setPlainText(tr("The user guide is not in this installation; "
                                         "`tfwizard --help` lists the commands."))
        else:
            self.browser.setSearchPaths([str(path.parent)])
            self.browser.setSource(QUrl.fromLocalFile(str(path)))
            column.addWidget(_path_label(self, path))
        self.resize(900, 650)


def show_guide(parent: QWidget) -> GuideViewer:
    """Open the user guide in the app (F1)."""
    viewer = GuideViewer(parent)
    viewer.show()
    return viewer


def about_text() -> str:
    """The About box's text: the versions, the data folder and where builds are kept."""
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    from tfwizard import __version__
    from tfwizard.core.building.run.record import builds_dir
    from tfwizard.core.resources import find_resources_dir

    lines = [tr("tfwizard {version}: builds TensorFlow from source in Docker, installs "
                "the wheel and verifies it.").format(version=__version__), "",
             f"Python {platform.python_version()} ({sys.executable})",
             f"PySide6 {pyside_version}, Qt {qVersion()}",
             tr("Data: {path}").format(path=find_resources_dir() or "?"),
             tr("Build records: {path}").format(path=builds_dir()),
             tr("License: Apache-2.0")]
    return "\n".join(lines)


def show_about(parent: QWidget) -> QMessageBox:
    """Help > About tfwizard."""
    box = QMessageBox(QMessageBox.Icon.Information, tr("About tfwizard"), about_text(),
                      QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("about-box")
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.open()
    return box
