""""Start build" after a success: one click must
not start another multi-hour build of the same recipe without asking.

It asks only then: a first build, a build after a failure or a cancel, "Apply fix and
rebuild", and a build of a recipe changed since the success start at once.
"""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from tfwizard.core.recipe import Recipe
from tfwizard.core.vocab import duration_text

from ..dialogs import ask
from ..i18n import tr


class RebuildGuard:
    """Remembers the recipe of the last build and whether it made a wheel."""

    def __init__(self) -> None:
        self.built: Recipe | None = None
        self.result: Any = None

    def started(self, recipe: Recipe) -> None:
        """A build of `recipe` begins."""
        self.built = copy.deepcopy(recipe)
        self.result = None

    def finished(self, result: Any) -> None:
        """The build ended with `result` (a BuildResult)."""
        self.result = result

    def same_again(self, recipe: Recipe) -> bool:
        """True when the last build succeeded and `recipe` is the one it built."""
        return (self.result is not None and self.result.ok and self.built is not None
                and self.built == recipe)

    def button_text(self, recipe: Recipe) -> str:
        """The start button's text: "Build again…" when it would ask first."""
        return tr("Build again…") if self.same_again(recipe) else tr("Start build")

    async def confirm(self, parent: QWidget, recipe: Recipe) -> bool:
        """True to go on: asked only when the same recipe already built successfully."""
        if not self.same_again(recipe):
            return True
        box = QMessageBox(QMessageBox.Icon.Question, tr("Build again?"),
                          tr("This recipe already built successfully in {duration}: {wheel}\n"
                             "A new build takes about as long and makes the same wheel.")
                          .format(duration=duration_text(self.result.elapsed_s),
                                  wheel=self.result.wheel),
                          QMessageBox.StandardButton.Cancel, parent.window())
        box.setObjectName("rebuild-confirm")
        again = box.addButton(tr("Build again"), QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        await ask(box)
        return box.clickedButton() is again
