"""The Review page: the build in plain words first (versions, GPUs, time, sizes, where the
wheel and the record go), then, under "Details", the recipe as TOML and the commands the
build will run; every finding, and the preflight's.

The preflight is the core's (core/session.py, the same call `tfwizard build` makes): it
runs in a worker thread each time the page shows the recipe, and the verdict says
"checking" until it answers, so a recipe the build would refuse is never called ready."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
    QWizard,
)

from tfwizard.core.building.plan.plan import BuildPlan, make_plan
from tfwizard.core.building.plan.render import render_commands
from tfwizard.core.building.report import cost as costmod
from tfwizard.core.building.report import history
from tfwizard.core.building.run import record
from tfwizard.core.errors import TfWizardError
from tfwizard.core.findings import Finding
from tfwizard.core.session import Prepared
from tfwizard.core.session import prepare as prepare_build
from tfwizard.core.views.review_verdict import BLOCKED, Verdict, official_advice, review_verdict

from .. import jobs
from ..i18n import tr
from ..state import WizardState
from ..widgets.findings import FindingRow
from ..widgets.summary import Details, PlainSummary
from ..widgets.verdict import VerdictBanner
from .base import RecipePage, mono


def plan_summary(state: WizardState, plan: BuildPlan
                 ) -> tuple[costmod.BuildCost, list[costmod.SummaryLine]]:
    """The plan's cost on the build host (calibrated by this machine's records) and its
    plain summary."""
    try:
        past = history.history()
    except OSError:
        past = []
    assert state.build_host is not None  # callers show "not known yet" first
    cost = costmod.build_cost(state.kb, state.build_host, plan, past)
    lines = costmod.plain_summary(plan, cost, wheel_dir=state.recipe.resolve_path("output.dir"),
                                  builds_dir=record.builds_dir())
    return cost, lines


class PreflightBox(QWidget):
    """The preflight's findings under the verdict: a line that says where it stands, one
    row per finding."""

    def __init__(self, state: WizardState, parent: QWidget) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("preflight")
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.status = QLabel("", self)
        self.status.setObjectName("preflight-status")
        self.status.setWordWrap(True)
        self.column.addWidget(self.status)
        self.rows: list[FindingRow] = []

    def show_findings(self, status: str, findings: list[Finding]) -> None:
        """`status` in words, then a row per finding (errors first, as the core sorted)."""
        for row in self.rows:
            row.hide()
            row.deleteLater()
        self.status.setText(status)
        kb = self.state.kb
        self.rows = [FindingRow(f, [kb.sources[x].title for x in f.sources if x in kb.sources],
                                self) for f in findings]
        for row in self.rows:
            row.fixClicked.connect(self.state.apply_fix)
            self.column.addWidget(row)


class _Relay(QObject):
    """Carries the worker thread's answer to the GUI thread (a queued signal)."""

    #: (generation, the Prepared, or the message of the TfWizardError that stopped it)
    answered = Signal(int, object)


class ReviewPage(RecipePage):
    """Review: the build in plain words, the recipe and commands under Details, and every
    finding."""

    keys = None  # every finding: this is the last stop before the build
    scrolls = True  # the summary, the details and every finding: too tall for 1024x700

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Review"), tr("What the build will make, what it will cost, "
                                                 "and where it goes. Nothing has run yet."))
        self.setButtonText(QWizard.WizardButton.NextButton, tr("&Next: the build >"))
        #: the preflight's answer for the recipe shown: a Prepared, or why it stopped
        self.prepared: Prepared | str | None = None
        self.generation = 0  # answers of an older recipe are dropped
        #: Save's action when the page sits in the main window (its Save As, which keeps the
        #: recent recipes and the window's title); None: a file dialog of its own
        self.save_as: Callable[[], object] | None = None
        self._relay = _Relay(self)
        self._relay.answered.connect(self._preflight_answered)
        self.findings.speak_of_the_recipe()  # the preflight's findings have their own box
        self._add_summary()
        self._add_details()

    def _add_summary(self) -> None:
        self.verdict = VerdictBanner(self.content)
        self.body.addWidget(self.verdict)
        self.preflight = PreflightBox(self.state, self.content)
        self.body.addWidget(self.preflight)
        self.state.findingsChanged.connect(self._findings_changed)
        self.summary = PlainSummary(self.content, "review-summary")
        self.body.addWidget(self.summary)

    def _add_details(self) -> None:
        """The TOML and the commands, folded under "Details"."""
        self.details = Details(self.content, tr("Details: the recipe and the commands"),
                               "review-details")
        top = QHBoxLayout()
        self.save_button = QPushButton(tr("Save recipe…"), self.content)
        self.save_button.setObjectName("save-recipe")
        self.save_button.clicked.connect(self._save)
        top.addWidget(self.details.toggle)
        top.addStretch(1)
        top.addWidget(self.save_button)
        self.body.addLayout(top)
        self.details.body_layout.addWidget(QLabel(tr("Recipe (TOML):"), self.details.body))
        split = QSplitter(Qt.Orientation.Horizontal, self.details.body)
        self.toml_view = QPlainTextEdit(split)
        self.toml_view.setObjectName("review-toml")
        mono(self.toml_view)
        self.commands_view = QPlainTextEdit(split)
        self.commands_view.setObjectName("review-commands")
        mono(self.commands_view)
        split.addWidget(self.toml_view)
        split.addWidget(self.commands_view)
        split.setStretchFactor(1, 2)
        split.setMinimumHeight(280)  # the page scrolls: the two views keep a readable height
        self.details.body_layout.addWidget(split, 1)
        self.body.addWidget(self.details, 1)

    def sync(self) -> None:
        """Show the recipe and its plan's commands as they are now."""
        s = self.state
        self._start_preflight()
        self.toml_view.setPlainText(s.recipe.to_toml())
        try:
            plan = make_plan(s.recipe, build_host=s.build_host, target_host=s.target_host,
                             kb=s.kb,
                             recipe_dir=s.recipe.path.parent if s.recipe.path else None)
            self._show_summary(plan)
            text = render_commands(plan)
            if plan.notes:
                text += "\n# " + tr("Notes:") + "\n" + "".join(f"#   {n}\n" for n in plan.notes)
        except TfWizardError as exc:
            self.summary.show_message(exc.message)
            text = (tr("# No plan yet: {message}").format(message=exc.message)
                    + f"\n# {exc.hint}").rstrip("# \n") + "\n"
        self.commands_view.setPlainText(text)

    def _findings_changed(self) -> None:
        wizard = self.wizard()
        if wizard is not None and wizard.currentPage() is self:  # advise only when seen
            self._show_verdict()

    def _start_preflight(self) -> None:
        """Run the session's prepare for the recipe as it is now, in a worker thread; the
        verdict says "checking" until it answers."""
        self.generation += 1
        self.prepared = None
        self.preflight.show_findings(tr("The preflight is checking what `tfwizard build` "
                                        "checks before it starts…"), [])
        self._show_verdict()
        generation, inputs, relay = self.generation, jobs.prepare_inputs(self.state), self._relay

        def work() -> None:
            answer: Prepared | str
            try:
                answer = prepare_build(**inputs)
            except TfWizardError as exc:
                answer = exc.message
            try:
                relay.answered.emit(generation, answer)
            except RuntimeError:  # the page was closed meanwhile: nobody to tell
                pass

        QThreadPool.globalInstance().start(work)

    def _preflight_answered(self, generation: int, answer: Any) -> None:
        if generation != self.generation:
            return  # the recipe changed since: its own preflight is under way
        self.prepared = answer
        if isinstance(answer, Prepared):
            shown = list(answer.preflight)
            status = (tr("The preflight found these (as `tfwizard build` would):") if shown
                      else tr("The preflight found no problems."))
            self.preflight.show_findings(status, shown if answer.preflight_ran else [])
        else:
            self.preflight.show_findings(answer, [])
        self._show_verdict()

    def _show_verdict(self) -> None:
        """The verdict on every finding and the preflight's, and whether the official wheel
        already serves."""
        s = self.state
        advice = official_advice(s.kb, s.recipe, s.build_host, s.target_host)
        answer = self.prepared
        if isinstance(answer, str):  # no plan: the session said why
            self.verdict.show_verdict(Verdict(BLOCKED, tr("Not ready to build: {reason}")
                                              .format(reason=answer)))
            return
        preflight = list(answer.preflight) if answer is not None else []
        self.verdict.show_verdict(review_verdict([*s.findings, *preflight], advice,
                                                 pending=answer is None))

    def _show_summary(self, plan: BuildPlan) -> None:
        if self.state.build_host is None:
            self.summary.show_message(tr("The build machine is not known yet: no estimate."))
            return
        cost, lines = plan_summary(self.state, plan)
        self.summary.show_lines(lines, cost)

    def _save(self) -> None:
        if self.save_as is not None:
            self.save_as()
            return
        path, _ = QFileDialog.getSaveFileName(self, tr("Save recipe"), f"{self.state.recipe.name}"
                                              ".toml", tr("Recipes (*.toml)"))
        if path:
            from tfwizard.core.recipe import save_recipe

            from ..app import explained

            try:
                save_recipe(self.state.recipe, path)
            except (TfWizardError, OSError) as exc:
                QMessageBox.warning(self, tr("Cannot save the recipe"), str(explained(exc)))
