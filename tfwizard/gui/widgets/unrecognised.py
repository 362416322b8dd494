"""The card of a failure no rule knows: "Not recognised", the log's root-cause lines with
the tool that printed each, and the search query with a button that copies it.

It looks unlike a diagnosis on purpose (a question mark, a dashed frame, no cause and no
fix): the core found no cause, only the lines to read (core/diagnosis/unrecognised.py).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from tfwizard.core.diagnosis.text import unrecognised_heading, unrecognised_lines

from ..i18n import tr


class UnrecognisedCard(QFrame):
    """A failure the diagnosis does not know: its root-cause lines and a search query."""

    def __init__(self, unknown: Any, parent: QWidget) -> None:
        super().__init__(parent)
        self.unknown = unknown
        self.setObjectName("unrecognised")
        self.setStyleSheet("#unrecognised { border: 1px dashed #7a7a7a; }")
        row = QHBoxLayout(self)
        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(
            QStyle.StandardPixmap.SP_MessageBoxQuestion).pixmap(20, 20))
        row.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout()
        self.heading = QLabel(unrecognised_heading(), self)
        self.heading.setObjectName("unrecognised-heading")
        self.heading.setWordWrap(True)
        self.heading.setStyleSheet("font-weight: bold;")
        column.addWidget(self.heading)
        self.text = QLabel("\n".join(unrecognised_lines(unknown)), self)
        self.text.setObjectName("unrecognised-lines")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.text)
        row.addLayout(column, 1)
        self.copy_button: QPushButton | None = None
        if getattr(unknown, "query", ""):
            self.copy_button = QPushButton(tr("Copy search query"), self)
            self.copy_button.setObjectName("unrecognised-copy")
            self.copy_button.setToolTip(unknown.query)
            self.copy_button.clicked.connect(self.copy_query)
            row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)

    def copy_query(self) -> None:
        """Put the search query on the clipboard."""
        clipboard = QApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.unknown.query)
