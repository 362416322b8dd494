"""The Welcome page's readiness checklist: one pass, warn or fail row per host-level need.

What each row says is decided by the core (`core/views/readiness.py`); this only draws it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QStyle, QWidget

from tfwizard.core.views.readiness import FAIL, PASS, WARN, Check

from ..i18n import tr

STATUS_ICON = {
    PASS: QStyle.StandardPixmap.SP_DialogApplyButton,
    WARN: QStyle.StandardPixmap.SP_MessageBoxWarning,
    FAIL: QStyle.StandardPixmap.SP_MessageBoxCritical,
}


class ReadinessList(QGroupBox):
    """A grid of rows: status icon, what is checked (bold), what it means (wrapped)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("Ready to build?"), parent)
        self.setObjectName("readiness")
        self.grid = QGridLayout(self)
        self.grid.setColumnStretch(2, 1)
        self.checks: list[Check] = []

    def show_checks(self, checks: list[Check]) -> None:
        """Replace the rows with `checks` (none: "detecting")."""
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:  # hidden now: deleteLater waits for the event loop
                widget.hide()
                widget.deleteLater()
        self.checks = list(checks)
        if not checks:
            self.grid.addWidget(QLabel(tr("Detecting…"), self), 0, 0, 1, 3)
            return
        words = {PASS: tr("pass"), WARN: tr("warning"), FAIL: tr("fail")}
        for row, check in enumerate(checks):
            icon = QLabel(self)
            icon.setObjectName(f"readiness-{check.key}-icon")
            icon.setPixmap(self.style().standardIcon(STATUS_ICON[check.status]).pixmap(18, 18))
            icon.setToolTip(words[check.status])
            icon.setAlignment(Qt.AlignmentFlag.AlignTop)
            title = QLabel(check.title, self)
            title.setStyleSheet("font-weight: bold;")
            title.setAlignment(Qt.AlignmentFlag.AlignTop)
            text = QLabel(check.text, self)
            text.setObjectName(f"readiness-{check.key}")
            text.setProperty("status", check.status)
            text.setWordWrap(True)
            text.setTextFormat(Qt.TextFormat.PlainText)
            text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if check.status == FAIL:
                text.setStyleSheet("color: #b00020;")
            for column, widget in enumerate((icon, title, text)):
                self.grid.addWidget(widget, row, column)
                # shown now, not by the layout's queued call: a page that fits its height
                # to its rows (widgets/fit.py) must see them when it measures
                if self.isVisible():
                    widget.show()

    def status_of(self, key: str) -> str | None:
        """The status shown for a row (tests, and the page's own summary)."""
        return next((c.status for c in self.checks if c.key == key), None)
