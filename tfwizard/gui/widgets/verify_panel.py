"""The verification panel: one overall verdict, one row per check (pass, fail or info),
diagnosis cards with their fixes, and a box to paste a program's output for diagnosis."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from tfwizard.core.errors import TfWizardError
from tfwizard.core.fixes import fix_text
from tfwizard.core.views.verify_panel import PanelRow, panel_rows, verdict_text

from ..i18n import tr
from ..state import WizardState
from .findings import severity_icon
from .richtext import diagnosis_html
from .unrecognised import UnrecognisedCard

#: a row's status -> the severity icon that shows it (pass: a check mark; skip: none)
_ICONS = {"fail": "error", "info": "info"}
_VERDICT_STYLE = {"passed": "background: #e6f4ea; color: #1e5631;",
                  "failed": "background: #fce8e6; color: #8a1c12;",
                  "cancelled": "background: #fef7e0; color: #6b4e00;"}


def _row_icon(widget: QWidget, status: str) -> QIcon:
    if status == "pass":
        return widget.style().standardIcon(QStyle.StandardPixmap.SP_DialogApplyButton)
    if status == "skip":  # not run: a check that came after one that failed
        return QIcon()
    return severity_icon(widget, _ICONS.get(status, "info"))


class DiagnosisCard(QFrame):
    """One runtime diagnosis: its title, evidence, cause and next step, and "Apply fix"
    when a recipe change fixes it."""

    def __init__(self, diagnosis: Any, parent: QWidget,
                 apply_fix: Callable[[Any], None] | None = None) -> None:
        super().__init__(parent)
        self.diagnosis = diagnosis
        self.setObjectName(f"verify-diagnosis-{diagnosis.id}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        row = QHBoxLayout(self)
        icon = QLabel(self)
        icon.setPixmap(severity_icon(self, diagnosis.severity).pixmap(20, 20))
        row.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        self.text = QLabel(diagnosis_html(diagnosis, quotes=3), self)
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.text, 1)
        self.fix_button: QPushButton | None = None
        if diagnosis.recipe_fix and apply_fix is not None:
            self.fix_button = QPushButton(tr("Apply fix to the recipe"), self)
            self.fix_button.setObjectName(f"verify-fix-{diagnosis.id}")
            self.fix_button.setToolTip(tr("Change the recipe: {changes}").format(
                changes=fix_text(diagnosis.recipe_fix)))
            self.fix_button.clicked.connect(lambda: apply_fix(diagnosis))
            row.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignTop)


class DiagnosisCards(QWidget):
    """A column of diagnosis cards, replaced as a whole."""

    def __init__(self, parent: QWidget, apply_fix: Callable[[Any], None] | None = None) -> None:
        super().__init__(parent)
        self.apply_fix = apply_fix
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.cards: list[DiagnosisCard] = []

    def show_diagnoses(self, diagnoses: Sequence[Any]) -> None:
        """Show these diagnoses (root causes first, as the core ordered them)."""
        for card in self.cards:
            card.deleteLater()
        self.cards = [DiagnosisCard(d, self, self.apply_fix) for d in diagnoses]
        for card in self.cards:
            self.column.addWidget(card)


class VerifyPanel(QWidget):
    """The verdict on top, one row per check, then the diagnosis cards."""

    def __init__(self, state: WizardState, parent: QWidget) -> None:
        super().__init__(parent)
        self.state = state
        self.rows: list[PanelRow] = []
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.verdict = QLabel(tr("Run the verification to see whether TensorFlow works."), self)
        self.verdict.setObjectName("verify-verdict")
        self.verdict.setWordWrap(True)
        self.verdict.setMargin(6)
        column.addWidget(self.verdict)
        self.grid_box = QWidget(self)
        self.grid = QGridLayout(self.grid_box)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setColumnStretch(2, 1)
        column.addWidget(self.grid_box)
        self.fix_status = QLabel("", self)
        self.fix_status.setObjectName("verify-fix-status")
        self.fix_status.setWordWrap(True)
        self.cards = DiagnosisCards(self, self.apply_fix)
        column.addWidget(self.cards)
        column.addWidget(self.fix_status)

    def show_report(self, report: Any) -> None:
        """Show a core VerifyReport: verdict, rows and diagnoses."""
        self.verdict.setText(verdict_text(report))
        self.verdict.setStyleSheet(_VERDICT_STYLE.get(report.status, "") + "font-weight: bold;")
        while self.grid.count():
            item = self.grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.rows = panel_rows(report)
        for index, row in enumerate(self.rows):
            icon = QLabel(self.grid_box)
            icon.setPixmap(_row_icon(self, row.status).pixmap(16, 16))
            icon.setObjectName(f"verify-row-{row.key}-{row.status}")
            label = QLabel(row.label, self.grid_box)
            detail = QLabel(row.detail, self.grid_box)
            detail.setWordWrap(True)
            detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.grid.addWidget(icon, index, 0, Qt.AlignmentFlag.AlignTop)
            self.grid.addWidget(label, index, 1, Qt.AlignmentFlag.AlignTop)
            self.grid.addWidget(detail, index, 2)
        self.cards.show_diagnoses(report.diagnoses)

    def apply_fix(self, diagnosis: Any) -> None:
        """Apply a diagnosis's recipe change; says why when it cannot."""
        try:
            self.state.apply_recipe_fix(diagnosis.recipe_fix)
        except TfWizardError as exc:
            self.fix_status.setText(tr("The fix was not applied: {why}").format(why=exc.message))
            return
        self.fix_status.setText(tr("The recipe was changed: {changes}. Build again to use "
                                   "it.").format(changes=fix_text(diagnosis.recipe_fix)))


class OutputDiagnosis(QWidget):
    """Paste a program's output; the runtime diagnosis (joined with the target machine's
    profile) shows what it recognises as cards. Text where it finds nothing and a build
    signature does (a build's log pasted here) is read as a build's log, as `tfwizard
    diagnose` reads a program's output given as a build log."""

    def __init__(self, state: WizardState, parent: QWidget) -> None:
        super().__init__(parent)
        self.state = state
        self.diagnoses: list[Any] = []
        self.read_as_build = False  # the last text was read as a build's log
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(QLabel(tr("Diagnose a program's output: paste what your own "
                                   "TensorFlow program printed (or a build's log)."), self))
        self.edit = QPlainTextEdit(self)
        self.edit.setObjectName("runtime-output")
        self.edit.setPlaceholderText(tr("e.g. Could not load dynamic library "
                                        "'libcudart.so.11.0' …"))
        self.edit.setMaximumHeight(120)
        column.addWidget(self.edit)
        row = QHBoxLayout()
        self.button = QPushButton(tr("Diagnose output"), self)
        self.button.setObjectName("diagnose-output")
        self.button.clicked.connect(self.diagnose)
        row.addWidget(self.button)
        # which machine printed it: the severities depend on its GPUs, as with
        # `tfwizard diagnose --runtime` (this machine) and its --target PROFILE
        self.machine = QComboBox(self)
        self.machine.setObjectName("diagnose-machine")
        self.machine.addItem(tr("It ran on this machine"), "build")
        self.machine.addItem(tr("It ran on the target machine"), "target")
        self.machine.setVisible(False)
        row.addWidget(self.machine)
        self.status = QLabel("", self)
        self.status.setObjectName("diagnose-output-status")
        self.status.setWordWrap(True)
        row.addWidget(self.status, 1)
        column.addLayout(row)
        self.cards = DiagnosisCards(self)
        column.addWidget(self.cards)
        self.unknown: UnrecognisedCard | None = None  # shown when nothing is recognised
        self.column = column

    def ran_on(self) -> Any:
        """The profile of the machine the output came from (this one unless the target
        is chosen); offered only when a target machine is imported."""
        s = self.state
        self.machine.setVisible(s.target_host is not None)
        if s.target_host is not None and self.machine.currentData() == "target":
            return s.target_host
        return s.build_host

    def diagnose(self) -> None:
        """Run the core's runtime diagnosis on the pasted text and show its cards; when it
        knows nothing, the build signatures' (their fixes resolved against the recipe), and
        when they know nothing either, the output's root-cause lines (not a diagnosis)."""
        from tfwizard.core.diagnosis import build
        from tfwizard.core.diagnosis.runtime import diagnose_log
        from tfwizard.core.diagnosis.unrecognised import root_lines
        from tfwizard.core.fixes import resolve_diagnoses

        text = self.edit.toPlainText()
        if not text.strip():
            self.status.setText(tr("Paste a program's output first."))
            return
        lines = text.splitlines()
        self.diagnoses = diagnose_log(lines, self.ran_on(), kb=self.state.kb)
        self.read_as_build = False
        if not self.diagnoses:
            found = build.diagnose(lines)
            if build.recognised(found):
                self.diagnoses = resolve_diagnoses(found, recipe=self.state.recipe)
                self.read_as_build = True
        self.cards.show_diagnoses(self.diagnoses)
        if self.unknown is not None:
            self.unknown.deleteLater()
            self.unknown = None
        if not self.diagnoses:
            self.unknown = UnrecognisedCard(root_lines(lines, "runtime", kb=self.state.kb),
                                            self)
            self.column.addWidget(self.unknown)
        if self.read_as_build:
            self.status.setText(tr("No known runtime message; read as a build's log, known "
                                   "problems found: {count}.").format(count=len(self.diagnoses)))
        else:
            self.status.setText(tr("Known problems found: {count}.").format(
                count=len(self.diagnoses)) if self.diagnoses else
                tr("No known problem in this output."))
