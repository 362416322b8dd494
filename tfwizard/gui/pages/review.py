"""The Review page: the recipe as TOML, the commands the build will run, every finding."""

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

from tfwizard.core.build.plan import make_plan
from tfwizard.core.build.render import render_commands
from tfwizard.core.errors import TfWizardError

from ..i18n import tr
from ..state import WizardState
from .base import RecipePage, mono


class ReviewPage(RecipePage):
    """Review: the recipe as TOML, the commands the build will run, and every finding."""

    keys = None  # every finding: this is the last stop before the build

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Review"), tr("The recipe, and exactly what the build will "
                                                 "run. Nothing has run yet."))
        self.setButtonText(QWizard.WizardButton.NextButton, tr("To the build >"))
        top = QHBoxLayout()
        self.save_button = QPushButton(tr("Save recipe…"), self.content)
        self.save_button.setObjectName("save-recipe")
        self.save_button.clicked.connect(self._save)
        top.addWidget(QLabel(tr("Recipe (TOML):"), self.content))
        top.addStretch(1)
        top.addWidget(self.save_button)
        self.body.addLayout(top)
        split = QSplitter(Qt.Orientation.Horizontal, self.content)
        self.toml_view = QPlainTextEdit(split)
        self.toml_view.setObjectName("review-toml")
        mono(self.toml_view)
        self.commands_view = QPlainTextEdit(split)
        self.commands_view.setObjectName("review-commands")
        mono(self.commands_view)
        split.addWidget(self.toml_view)
        split.addWidget(self.commands_view)
        split.setStretchFactor(1, 2)
        self.body.addWidget(split, 1)

    def sync(self) -> None:
        """Show the recipe and its plan's commands as they are now."""
        s = self.state
        self.toml_view.setPlainText(s.recipe.to_toml())
        try:
            plan = make_plan(s.recipe, build_host=s.build_host, target_host=s.target_host,
                             kb=s.kb,
                             recipe_dir=s.recipe.path.parent if s.recipe.path else None)
            text = render_commands(plan)
            if plan.notes:
                text += "\n# " + tr("Notes:") + "\n" + "".join(f"#   {n}\n" for n in plan.notes)
        except TfWizardError as exc:
            text = (tr("# No plan yet: {message}").format(message=exc.message)
                    + f"\n# {exc.hint}").rstrip("# \n") + "\n"
        self.commands_view.setPlainText(text)

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
