"""The Review page: the build in plain words first (versions, GPUs, time, sizes, where the
wheel and the record go), then, under "Details", the recipe as TOML and the commands the
build will run; every finding."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QWizard,
)

from tfwizard.core.building.plan.plan import BuildPlan, make_plan
from tfwizard.core.building.plan.render import render_commands
from tfwizard.core.building.report import cost as costmod
from tfwizard.core.building.report import history
from tfwizard.core.building.run import record
from tfwizard.core.errors import TfWizardError
from tfwizard.core.views.review_verdict import official_advice, review_verdict

from ..i18n import tr
from ..state import WizardState
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


class ReviewPage(RecipePage):
    """Review: the build in plain words, the recipe and commands under Details, and every
    finding."""

    keys = None  # every finding: this is the last stop before the build
    scrolls = True  # the summary, the details and every finding: too tall for 1024x700

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Review"), tr("What the build will make, what it will cost, "
                                                 "and where it goes. Nothing has run yet."))
        self.setButtonText(QWizard.WizardButton.NextButton, tr("&Next: the build >"))
        self._add_summary()
        self._add_details()

    def _add_summary(self) -> None:
        self.verdict = VerdictBanner(self.content)
        self.body.addWidget(self.verdict)
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
        self._show_verdict()
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

    def _show_verdict(self) -> None:
        """The verdict on every finding, and whether the official wheel already serves."""
        s = self.state
        self.verdict.show_verdict(review_verdict(
            s.findings, official_advice(s.kb, s.recipe, s.build_host, s.target_host)))

    def _show_summary(self, plan: BuildPlan) -> None:
        if self.state.build_host is None:
            self.summary.show_message(tr("The build machine is not known yet: no estimate."))
            return
        cost, lines = plan_summary(self.state, plan)
        self.summary.show_lines(lines, cost)

    def _save(self) -> None:
        window = self.window()
        save = getattr(window, "save_recipe_as", None)
        if callable(save):
            save()
            return
        path, _ = QFileDialog.getSaveFileName(self, tr("Save recipe"), f"{self.state.recipe.name}"
                                              ".toml", tr("Recipes (*.toml)"))
        if path:
            from tfwizard.core.recipe import save_recipe

            try:
                save_recipe(self.state.recipe, path)
            except TfWizardError as exc:
                QMessageBox.warning(self, tr("Cannot save the recipe"), str(exc))
