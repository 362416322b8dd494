"""The live findings panel: the core's rules, re-evaluated on every change, one row each."""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tfwizard.core.findings import Finding
from tfwizard.core.i18n import ngettext

from ..i18n import tr
from ..state import WizardState, key_matches
from .fit import FitColumn
from .richtext import code_html, grey

SEVERITY_ICON = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
}


def severity_icon(widget: QWidget, severity: str) -> QIcon:
    """The standard icon for a severity (error, warning, info)."""
    return widget.style().standardIcon(SEVERITY_ICON.get(severity, SEVERITY_ICON["info"]))


class FindingRow(QFrame):
    """One finding: icon, its message in words (the recipe key after it, in grey), the
    sources folded under a toggle, and a button when the core offers a fix."""

    fixClicked = Signal(object)

    def __init__(self, finding: Finding, source_titles: list[str], parent: QWidget) -> None:
        super().__init__(parent)
        self.finding = finding
        self.setObjectName(f"finding-{finding.code}")
        self.setProperty("severity", finding.severity)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        icon = QLabel(self)
        icon.setPixmap(severity_icon(self, finding.severity).pixmap(20, 20))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        layout.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)  # level with the first line
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        text = QLabel(self)
        text.setObjectName("message")
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        where = f" {grey(html.escape(f'({finding.key})'))}" if finding.key else ""
        text.setText(code_html(finding.message) + where)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)  # a new policy drops the wrapped label's own flag
        text.setSizePolicy(policy)
        column.addWidget(text)
        self.message = text
        self.sources: QLabel | None = None
        if source_titles:
            self._add_sources(column, source_titles)
        layout.addLayout(column, 1)
        self.fix_button: QPushButton | None = None
        if finding.fix is not None:
            button = QPushButton(finding.fix.label, self)
            button.setObjectName(f"fix-{finding.code}")
            button.setToolTip(tr("Change the recipe: {changes}").format(changes=", ".join(
                f"{k} = {v!r}" for k, v in finding.fix.changes.items())))
            button.clicked.connect(lambda: self.fixClicked.emit(self.finding))
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            self.fix_button = button

    def _add_sources(self, column: QVBoxLayout, titles: list[str]) -> None:
        """Where the finding comes from: one small toggle, the list folded under it."""
        toggle = QToolButton(self)
        toggle.setObjectName("sources-toggle")
        toggle.setCheckable(True)
        toggle.setAutoRaise(True)
        toggle.setStyleSheet("QToolButton { color: #6b6b6b; padding: 0; }")
        sources = QLabel(tr("Sources: {titles}").format(titles="; ".join(titles)), self)
        sources.setObjectName("sources")
        sources.setWordWrap(True)
        sources.setTextFormat(Qt.TextFormat.PlainText)
        sources.setStyleSheet("color: #6b6b6b;")
        sources.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sources.setVisible(False)

        def show(shown: bool) -> None:
            sources.setVisible(shown)
            n = len(titles)
            label = ngettext("{count} source ▾", "{count} sources ▾", n) if shown else \
                ngettext("{count} source ▸", "{count} sources ▸", n)
            toggle.setText(label.format(count=n))

        toggle.toggled.connect(show)
        show(False)
        column.addWidget(toggle, 0, Qt.AlignmentFlag.AlignLeft)
        column.addWidget(sources)
        self.sources = sources


class _FitScroll(QScrollArea):
    """A scroll area that asks for its content's height, so the page gives it no more
    and no less than the rows need; the page's layout may squeeze it, then it scrolls."""

    def sizeHint(self) -> QSize:
        """Qt: as tall as the rows at the current width."""
        hint = super().sizeHint()
        body = self.widget()
        layout = body.layout() if body is not None else None
        if layout is None:
            return hint
        height = layout.heightForWidth(max(self.viewport().width(), 200))
        return QSize(hint.width(), max(height, 0) + 2 * self.frameWidth())

    def minimumSizeHint(self) -> QSize:
        """Qt: a few lines, however many rows there are (the rest scrolls)."""
        hint = self.sizeHint()
        return QSize(0, min(hint.height(), self.minimumHeight() or hint.height()))


class FindingsPanel(QWidget):
    """Findings about the keys a page owns (all keys when `keys` is None).

    The summary line says why Next is disabled while an error stands; a finding's fix
    button applies the core's fix to the shared recipe.
    """

    def __init__(self, state: WizardState, keys: Iterable[str] | None = None,
                 parent: QWidget | None = None, show_info: bool = True,
                 scrolls: bool = True) -> None:
        super().__init__(parent)
        self.state = state
        self.keys = tuple(keys) if keys is not None else None
        self.show_info = show_info
        self.quiet_when_clean = False
        #: the page shows other findings beside these (Review: the preflight's), so a clean
        #: summary says it is the recipe's, not that nothing at all is wrong
        self.recipe_only = False
        self.setObjectName("findings")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        self.summary = QLabel(self)
        self.summary.setObjectName("findings-summary")
        self.summary.setWordWrap(True)
        head.addWidget(self.summary, 1)
        self.fix_all = QPushButton(tr("Apply all fixes"), self)
        self.fix_all.setObjectName("fix-all")
        self.fix_all.setToolTip(tr("Apply the suggested fix of every error on this page, in turn"))
        self.fix_all.clicked.connect(self._apply_all)
        head.addWidget(self.fix_all)
        outer.addLayout(head)
        self.notes_toggle = QToolButton(self)
        self.notes_toggle.setObjectName("notes-toggle")
        self.notes_toggle.setCheckable(True)
        self.notes_toggle.setAutoRaise(True)
        self.notes_toggle.setToolTip(tr("Show or hide the notes: background that needs no action"))
        self.notes_toggle.toggled.connect(self._notes_toggled)
        # in a page that scrolls as a whole, the rows are part of it: a second scroll area
        # inside would squeeze them (or the page) to a strip when the notes open
        self.scroll_area: QWidget
        if scrolls:
            area = _FitScroll(self)
            area.setWidgetResizable(True)
            area.setFrameShape(QFrame.Shape.NoFrame)
            area.setMinimumHeight(90)
            self.scroll_area = area
        self.body = FitColumn(self.scroll_area if scrolls else self)
        self.rows_layout = QVBoxLayout(self.body)
        self.rows_layout.setContentsMargins(0, 0, 0, 0)
        self.rows_layout.setSpacing(3)
        self.rows_layout.addWidget(self.notes_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.rows_layout.addStretch(1)
        if scrolls:
            area.setWidget(self.body)
        else:
            self.scroll_area = self.body
        outer.addWidget(self.scroll_area, 1)
        self.rows: list[FindingRow] = []
        state.findingsChanged.connect(self.refresh)
        self.refresh()

    def visible_findings(self) -> list[Finding]:
        """The findings this panel shows: its keys, and notes only when asked."""
        return [f for f in self.state.findings if key_matches(f.key, self.keys)
                and (self.show_info or f.severity != "info")]

    def errors(self) -> list[Finding]:
        """The shown findings that are errors."""
        return [f for f in self.visible_findings() if f.severity == "error"]

    def refresh(self) -> None:
        """Rebuild the rows from the state's findings."""
        for row in self.rows:
            self.rows_layout.removeWidget(row)
            row.hide()  # deleteLater waits for the event loop; do not paint it meanwhile
            row.deleteLater()
        self.rows = []
        kb = self.state.kb
        findings = self.visible_findings()
        # errors, warnings, then the notes (folded under the toggle), in the core's order
        findings = [f for f in findings if f.severity != "info"] + \
            [f for f in findings if f.severity == "info"]
        for i, finding in enumerate(findings):
            titles = [kb.sources[s].title for s in finding.sources if s in kb.sources]
            row = FindingRow(finding, titles, self.body)
            row.fixClicked.connect(self.state.apply_fix)
            # notes go under the toggle, before the closing stretch
            at = i if finding.severity != "info" else self.rows_layout.count() - 1
            self.rows_layout.insertWidget(at, row)
            self.rows.append(row)
        self._show_notes(self.notes_toggle.isChecked())
        self.scroll_area.setVisible(bool(findings))  # no rows: no 90 px of empty room
        self._summarise(findings)
        self.fix_all.setVisible(any(f.fix is not None and f.severity == "error"
                                    for f in findings))

    def speak_of_the_recipe(self) -> None:
        """The page shows other findings beside these (Review: the preflight's): the
        summary says it is the recipe's, from now on."""
        self.recipe_only = True
        self._summarise(self.visible_findings())

    def _summarise(self, findings: list[Finding]) -> None:
        """The line above the rows: what stops Next, never a copy of a row's text."""
        errors = [f for f in findings if f.severity == "error"]
        warnings = [f for f in findings if f.severity == "warning"]
        if errors:
            self.summary.setText(tr("Next is disabled: fix the error below.") if len(errors) == 1
                                 else tr("Next is disabled: fix the {count} errors below.")
                                 .format(count=len(errors)))
            self.summary.setStyleSheet("color: #b00020; font-weight: bold;")
        elif warnings and self.recipe_only:  # whether it can go ahead is the preflight's
            self.summary.setText(ngettext("{count} warning in the recipe.",
                                          "{count} warnings in the recipe.",
                                          len(warnings)).format(count=len(warnings)))
            self.summary.setStyleSheet("")
        elif warnings:
            self.summary.setText(ngettext("{count} warning; the build can go ahead.",
                                          "{count} warnings; the build can go ahead.",
                                          len(warnings)).format(count=len(warnings)))
            self.summary.setStyleSheet("")
        elif findings:
            self.summary.setText(tr("No problems in the recipe; notes below.") if self.recipe_only
                                 else tr("No problems found; notes below."))
            self.summary.setStyleSheet("")
        else:
            self.summary.setText(tr("No problems in the recipe.") if self.recipe_only
                                 else tr("No problems found."))
            self.summary.setStyleSheet("")
        # a page with a status of its own (Welcome's checklist) says nothing when clean
        self.summary.setVisible(bool(findings) or not self.quiet_when_clean)

    def _notes_toggled(self, shown: bool) -> None:
        self._show_notes(shown)

    def _show_notes(self, shown: bool) -> None:
        """Show or fold the info rows; the toggle says how many there are."""
        notes = [row for row in self.rows if row.finding.severity == "info"]
        for row in notes:
            row.setVisible(shown)
        self.body.fit()
        count = len(notes)
        if count == 1:
            label = tr("1 note ▾") if shown else tr("1 note ▸")
        else:
            label = (tr("{count} notes ▾") if shown else tr("{count} notes ▸")).format(count=count)
        self.notes_toggle.setText(label)
        self.notes_toggle.setVisible(count > 0)
        self.scroll_area.updateGeometry()

    def row(self, code: str) -> FindingRow | None:
        """The row of the finding with this code, or None."""
        for row in self.rows:
            if row.finding.code == code:
                return row
        return None

    def codes(self) -> list[str]:
        """The codes of the findings shown, in order."""
        return [row.finding.code for row in self.rows]

    def _apply_all(self) -> None:
        self.state.apply_all_fixes(self.keys)
