"""The wizard's page ids and the base of every page: a page over the shared recipe.

Every page reads the shared Recipe (`state.recipe`), writes through `state.update`, and
shows the findings about the keys it owns; Next is disabled while one of them is an error.
Which choices are sensible is decided by the core's rules, never here.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from ..i18n import tr
from ..state import WizardState
from ..widgets.findings import FindingsPanel
from ..widgets.fit import fit_scroll


class PageId(IntEnum):
    """The wizard's pages in order (QWizard page ids)."""

    WELCOME = 0
    SOURCE = 1
    BACKEND = 2
    TOOLCHAIN = 3
    COMPUTE = 4
    OPTIONS = 5
    REVIEW = 6
    BUILD = 7
    TEST = 8
    INSTALL = 9
    VERIFY = 10


PAGE_SLUGS = {
    PageId.WELCOME: "welcome",
    PageId.SOURCE: "source",
    PageId.BACKEND: "backend",
    PageId.TOOLCHAIN: "toolchain",
    PageId.COMPUTE: "compute",
    PageId.OPTIONS: "options",
    PageId.REVIEW: "review",
    PageId.BUILD: "build",
    PageId.TEST: "test",
    PageId.INSTALL: "install",
    PageId.VERIFY: "verify",
}


def split_words(text: str) -> list[str]:
    """A line of flags as the list the recipe keeps (shell-like quoting allowed)."""
    try:
        return shlex.split(text)
    except ValueError:  # an unfinished quote while typing
        return text.split()


def join_words(words: Iterable[str]) -> str:
    """A list of flags as one line, quoted where a word needs it (the inverse of split_words)."""
    return " ".join(shlex.quote(w) for w in words)


class RecipePage(QWizardPage):
    """A page over the shared recipe: sync widgets from it, show its findings."""

    #: recipe keys this page owns ("section." = the whole section); None = every key
    keys: tuple[str, ...] | None = ()
    show_findings = True
    #: the form scrolls (a FitColumn in a scroll area) rather than squeeze its wrapped
    #: rows when the window is short; for pages whose form is taller than 1024x700 allows
    scrolls = False

    def __init__(self, state: WizardState, title: str, subtitle: str = "") -> None:
        super().__init__()
        self.state = state
        self._syncing = False
        self.setTitle(title)
        if subtitle:
            self.setSubTitle(subtitle)
        outer = QVBoxLayout(self)
        # the form takes the room it needs; the findings as much as their rows need (their
        # own size hint), scrolling only when the page is too short for both
        self.content: QWidget
        if self.scrolls:
            # the whole page scrolls, its findings too (one scroll bar, nothing squeezed)
            area, column = fit_scroll(self, "page-scroll")
            outer.addWidget(area, 1)
            rows = QVBoxLayout(column)
            rows.setContentsMargins(0, 0, 0, 0)
            self.content = QWidget(column)
            rows.addWidget(self.content, 1)
            self.findings = FindingsPanel(state, self.keys, column, scrolls=False)
            rows.addWidget(self.findings, 0)
        else:
            self.content = QWidget(self)
            outer.addWidget(self.content, 1)
            self.findings = FindingsPanel(state, self.keys, self)
            outer.addWidget(self.findings, 0)
        self.body = QVBoxLayout(self.content)
        self.body.setContentsMargins(0, 0, 0, 0)
        self.findings.setVisible(self.show_findings)
        self.block_reason = QLabel(self)
        self.block_reason.setObjectName("block-reason")
        self.block_reason.setWordWrap(True)
        self.block_reason.setStyleSheet("color: #b00020;")
        self.block_reason.hide()
        outer.addWidget(self.block_reason)
        state.findingsChanged.connect(self.completeChanged.emit)
        state.recipeChanged.connect(self._recipe_changed)
        state.hostsChanged.connect(self._recipe_changed)

    # -- for subclasses ---------------------------------------------------------------
    def sync(self) -> None:
        """Show the recipe's current values (called with change handlers muted)."""

    def set(self, changes: dict[str, Any]) -> None:
        """Write answers to the shared recipe, unless we are the ones showing it."""
        if self._syncing:
            return
        self.block_reason.hide()
        self.state.update(changes)

    def block(self, reason: str) -> bool:
        """Show why Next cannot go on; returns False (for validatePage)."""
        self.block_reason.setText(reason)
        self.block_reason.show()
        return False

    def show_recipe(self) -> None:
        """Show the recipe, hosts and findings as they are now (a page shown again by Back)."""
        self._run_sync()

    def retranslate(self) -> None:
        """After a language switch: make again what the page makes from the recipe (its
        fixed texts were put into the new language already: retranslate.py)."""
        self._run_sync()

    # -- QWizardPage ------------------------------------------------------------------
    def _run_sync(self) -> None:
        self._syncing = True
        try:
            self.sync()
        finally:
            self._syncing = False

    def _recipe_changed(self) -> None:
        wizard = self.wizard()
        if wizard is not None and wizard.currentPage() is self:
            self._run_sync()

    def initializePage(self) -> None:
        """Qt: the page is entered; fill it from the recipe."""
        self.block_reason.hide()
        self._run_sync()

    def cleanupPage(self) -> None:
        """Qt: Back (or a restart) leaves the page. Qt's default resets the registered
        fields to their first values, and their change signals then wrote those into the
        recipe (Back from Source, or opening a recipe, silently made a 2.18.0 recipe
        2.21.0); the recipe holds the choices, so nothing is reset."""

    def isComplete(self) -> bool:
        """Qt: Next is enabled while none of the page's keys has an error."""
        return super().isComplete() and not self.state.errors_for(self.keys)

    def validatePage(self) -> bool:
        """Qt: Next was clicked; refuse (saying why) while one of the page's keys has an error."""
        errors = self.state.errors_for(self.keys)
        if errors:
            return self.block(tr("Fix first: {message}").format(message=errors[0].message))
        return True


def mono(widget: QPlainTextEdit) -> None:
    """Make a text view read-only, in a fixed-width font, without line wrapping."""
    from PySide6.QtGui import QFontDatabase

    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    widget.setReadOnly(True)
    widget.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
