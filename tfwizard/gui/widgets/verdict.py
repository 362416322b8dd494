"""The verdict banner at the top of Review: ready, ready with warnings, or blocked, and
whether the official wheel already serves (core/views/review_verdict.py decides)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from tfwizard.core.views.review_verdict import BLOCKED, READY, WARNINGS, Verdict

from ..i18n import tr
from .richtext import code_html

_STYLE = {READY: "background: #e6f4ea; color: #1e5631;",
          WARNINGS: "background: #fff4e0; color: #8a5300;",
          BLOCKED: "background: #fdecea; color: #b00020;"}
_WORD = {READY: "ready", WARNINGS: "warnings", BLOCKED: "blocked"}


class VerdictBanner(QLabel):
    """One bold, coloured sentence; the status is also a property, for tests and styles."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(tr("Checking…"), parent)
        self.setObjectName("review-verdict")
        self.setWordWrap(True)
        self.setMargin(6)
        self.setTextFormat(Qt.TextFormat.RichText)  # `commands` as code
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.verdict: Verdict | None = None

    def show_verdict(self, verdict: Verdict) -> None:
        """Show `verdict` in its colours."""
        self.verdict = verdict
        self.setText(code_html(verdict.text))
        self.setProperty("status", _WORD[verdict.status])
        self.setStyleSheet(_STYLE[verdict.status] + "font-weight: bold;")
