"""File > New recipe, File > Recent recipes, and the title's modified mark ("*" while the
recipe differs from what was opened or saved)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from .i18n import tr
from .pages import PageId

SETTINGS_KEY = "recent_recipes"
MAX_RECENT = 8


class RecentRecipes:
    """The recipes opened or saved last, newest first; kept in QSettings when given one
    (the app), in memory otherwise (tests)."""

    def __init__(self, settings: QSettings | None = None) -> None:
        self.settings = settings
        stored = settings.value(SETTINGS_KEY, []) if settings is not None else []
        self.paths: list[str] = [str(p) for p in (stored if isinstance(stored, list)
                                                  else [stored]) if p]

    def add(self, path: str | Path) -> None:
        """Put `path` first."""
        text = str(Path(path).absolute())
        self.paths = [text] + [p for p in self.paths if p != text][:MAX_RECENT - 1]
        if self.settings is not None:
            self.settings.setValue(SETTINGS_KEY, self.paths)


def new_action(window: Any) -> QAction:
    """File > New recipe (Ctrl+N)."""
    action = QAction(tr("&New recipe"), window)
    action.setObjectName("new-recipe")
    action.setShortcut(QKeySequence.StandardKey.New)
    action.triggered.connect(lambda: new_recipe(window))
    return action


def recent_menu(window: Any, parent: QMenu) -> QMenu:
    """File > Recent recipes: one entry per file, filled each time it opens."""
    menu = QMenu(tr("Open &recent"), parent)
    menu.setObjectName("recent-recipes")

    def fill() -> None:
        menu.clear()
        for index, path in enumerate(window.recent.paths):
            action = menu.addAction(f"&{index + 1} {path}")
            action.triggered.connect(lambda _c=False, p=path: window.open_recipe(p))
        if not window.recent.paths:
            menu.addAction(tr("(none yet)")).setEnabled(False)

    menu.aboutToShow.connect(fill)
    fill()
    return menu


def new_recipe(window: Any) -> bool:
    """Start again from the default recipe for this machine, on Welcome."""
    wizard = window.wizard
    if wizard.build.running:
        window.show_error(tr("A build is running"),
                          tr("Start a new recipe when the build has ended."))
        return False
    if not window.may_drop_changes():
        return False
    state = wizard.state
    state.set_recipe(state.default_recipe())
    wizard.recipe_is_default = True
    state.edited = False
    mark_clean(window)
    wizard.setStartId(int(PageId.WELCOME))
    wizard.restart()
    return True


def mark_clean(window: Any) -> None:
    """The recipe as it is now is what is on disk (or the default): no modified mark."""
    window.clean_recipe = window.wizard.state.recipe
    window._changes_settled = False
    show_title(window)


def show_title(window: Any) -> None:
    """"tfwizard: PATH" (or "tfwizard"), with "*" while the recipe is modified."""
    recipe = window.wizard.state.recipe
    window.setWindowTitle(f"tfwizard: {recipe.path}[*]" if recipe.path else "tfwizard[*]")
    # a recipe the user changed; not the default a detection replaced by a better one
    window.setWindowModified(window.wizard.state.edited and recipe != window.clean_recipe)


def watch_recipe(window: Any) -> None:
    """Keep the title's mark true as the recipe changes (call again for a new wizard)."""
    window.wizard.state.recipeChanged.connect(lambda: show_title(window))
    # a change after a "Discard" on the way out is a new one: ask about it again
    window.wizard.state.recipeChanged.connect(lambda: setattr(window, "_changes_settled",
                                                              False))
