"""The main window: the wizard, a File menu, drag and drop of recipes, and closing safely."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
)
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMessageBox, QWidget

from tfwizard.core.errors import TfWizardError
from tfwizard.core.host import HostProfile
from tfwizard.core.i18n import LANGUAGES, language
from tfwizard.core.recipe import Recipe, load_recipe, save_recipe

from . import i18n
from .app import explained
from .attach import follow_build
from .file_menu import RecentRecipes, mark_clean, new_action, recent_menu, watch_recipe
from .help import add_help_menu
from .history import HistoryDialog
from .i18n import tr
from .icons import app_icon
from .jobs import Jobs
from .pages import PageId
from .recipe_excerpt import excerpt_html, toml_excerpt
from .retranslate import Memory, retranslate
from .window_fit import fit_frame, place, remember
from .wizard import BuildWizard

#: what the user chose when closing during a build
CLOSE_CANCEL, CLOSE_DETACH, CLOSE_STAY = "cancel", "detach", "stay"
#: what the user chose for a recipe with unsaved changes
SAVE, DISCARD, KEEP_OPEN = "save", "discard", "keep"


class MainWindow(QMainWindow):
    """Holds the wizard; File > Open/Save recipe; a .toml dropped on it is opened."""

    #: emitted once the window has really closed (the app's main coroutine waits for it)
    closed = Signal()

    def __init__(self, *, host: HostProfile | None = None, target: HostProfile | None = None,
                 target_path: str = "", recipe: Recipe | None = None,
                 jobs: Jobs | None = None,
                 ask_close: Callable[[], str] | None = None,
                 ask_save: Callable[[], str] | None = None,
                 remember: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs or Jobs()
        #: the language, recent recipes and window size are kept here (QSettings) when
        #: `remember` (the app does, tests do not)
        self.settings = i18n.settings() if remember else None
        self.wizard = BuildWizard(host=host, target=target, target_path=target_path,
                                  recipe=recipe, jobs=self.jobs, parent=self)
        self.wizard.setWindowFlags(Qt.WindowType.Widget)
        self.wizard.review.save_as = lambda: self.save_recipe_as()  # the File menu's Save As
        self.setCentralWidget(self.wizard)
        self.recent = RecentRecipes(self.settings)
        mark_clean(self)
        watch_recipe(self)
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.ask_close = ask_close or self._ask_close
        self.ask_save = ask_save or self._ask_save
        self._closing_task: asyncio.Task[Any] | None = None
        self._may_close = False
        self._changes_settled = False  # saved or dropped on the way out: ask once
        self.detached = False
        #: what the last language switch made of each text (retranslate.py)
        self.translations: Memory = {}
        self._menus()
        #: shown maximised, as it was left
        self.maximised = place(self, self.settings)

    def show_first(self) -> None:
        """Show the window as it was left (maximised or not), inside the screen."""
        if self.maximised:
            self.showMaximized()
        else:
            self.show()
            # the window manager's frame is known only once the window is mapped
            QTimer.singleShot(0, lambda: fit_frame(self))

    @property
    def state(self) -> Any:
        """The wizard's state."""
        return self.wizard.state

    def _menus(self) -> None:
        self.menuBar().clear()
        menu = self.menuBar().addMenu(tr("&File"))
        menu.addAction(new_action(self))
        for text, shortcut, slot in (
            (tr("&Open recipe…"), QKeySequence.StandardKey.Open, self.open_recipe_dialog),
            (tr("&Save recipe"), QKeySequence.StandardKey.Save, self.save_recipe),
            (tr("Save recipe &as…"), QKeySequence.StandardKey.SaveAs, self.save_recipe_as),
        ):
            action = QAction(text, self)
            action.setShortcut(shortcut)
            action.triggered.connect(slot)
            menu.addAction(action)
            if slot == self.open_recipe_dialog:
                menu.addMenu(recent_menu(self, menu))
        menu.addSeparator()
        target = QAction(tr("Import &target machine profile…"), self)
        target.triggered.connect(lambda: self.wizard.welcome.choose_target())
        menu.addAction(target)
        menu.addAction(self._history_action())
        menu.addSeparator()
        quit_action = QAction(tr("&Quit"), self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        menu.addAction(quit_action)
        languages = self.menuBar().addMenu(tr("&Language"))
        languages.setObjectName("language-menu")
        group = QActionGroup(self)
        self.language_actions: dict[str, QAction] = {}
        for code, name in LANGUAGES.items():
            action = QAction(name, self)  # each language in its own words: not translated
            action.setObjectName(f"language-{code}")
            action.setCheckable(True)
            action.setChecked(code == language())
            action.triggered.connect(lambda _c=False, c=code: self.set_language(c))
            group.addAction(action)
            languages.addAction(action)
            self.language_actions[code] = action
        self.guide_action = add_help_menu(self)

    def _history_action(self) -> QAction:
        action = QAction(tr("Build &history…"), self)
        action.setObjectName("build-history")
        action.triggered.connect(self.show_history)
        return action

    def show_history(self) -> Any:
        """The build history dialog (past builds from their records), shown modeless."""
        dialog = HistoryDialog(self, attach=lambda build_id: follow_build(self, build_id))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    # -- language -------------------------------------------------------------------------
    def set_language(self, code: str) -> bool:
        """Switch the whole window to another language now, in place: every page keeps
        its state (a finished build its log, result and Back), even while a build runs.

        The texts on screen are put into the new language (retranslate.py); what the
        pages make from the recipe, the hosts and the findings they make again.
        """
        if self.settings is not None:
            i18n.save_language(code)
        old = language()
        new = i18n.install(code)
        if new == old:
            return True
        retranslate(self, old, new, self.translations)
        self._menus()
        self.wizard.retranslate()
        return True

    # -- recipes ------------------------------------------------------------------------
    def open_recipe_dialog(self) -> None:
        """Ask for a recipe file and open it."""
        path, _ = QFileDialog.getOpenFileName(self, tr("Open recipe"), "",
                                              tr("Recipes (*.toml)"))
        if path:
            self.open_recipe(path)

    def open_recipe(self, path: str | Path) -> bool:
        """Load a recipe and show what it will run (the Review page) before anything runs."""
        if self.wizard.build.running:
            self._error(tr("A build is running"), tr("Open the recipe when the build has ended."))
            return False
        if not self.may_drop_changes():
            return False
        try:
            recipe = load_recipe(path)
        except TfWizardError as exc:
            self._error(tr("Cannot open the recipe"), str(exc), toml_excerpt(path))
            return False
        profile = recipe.resolve_path("target.host_profile")
        if profile is not None:
            try:
                self.state.load_target_profile(profile)
            except TfWizardError as exc:
                self._error(tr("Cannot read the recipe's target profile"), str(exc))
        else:
            self.state.set_target(None)
        self.wizard.set_recipe(recipe)
        self.recent.add(path)
        self._changes_settled = False
        mark_clean(self)
        reached = self.wizard.go_to(PageId.REVIEW)
        if reached != PageId.REVIEW:  # say why this page and not Review
            self.statusBar().showMessage(tr("The recipe has an error on this page ({page}): "
                                            "fix it to go on to Review.").format(
                page=self.wizard.page(int(reached)).title()))
        else:
            self.statusBar().clearMessage()
        return True

    def save_recipe(self) -> bool:
        """Save the recipe to its file (asking for one when it has none); whether it was saved."""
        path = self.state.recipe.path
        if path is None:
            return self.save_recipe_as()
        return self.save_to(path)

    def save_recipe_as(self) -> bool:
        """Ask for a file and save the recipe there; whether it was saved."""
        default = str(self.state.recipe.path or f"{self.state.recipe.name}.toml")
        path, _ = QFileDialog.getSaveFileName(self, tr("Save recipe"), default,
                                              tr("Recipes (*.toml)"))
        return self.save_to(path) if path else False

    def save_to(self, path: str | Path) -> bool:
        """Save the recipe to `path`, saying why not in a box; whether it was saved."""
        try:
            saved = save_recipe(self.state.recipe, path)
        except (TfWizardError, OSError) as exc:
            self._error(tr("Cannot save the recipe"), str(explained(exc)))
            return False
        self.wizard.mark_user_changed()
        self.recent.add(saved)
        mark_clean(self)
        self.statusBar().showMessage(tr("Saved {path}").format(path=saved), 5000)
        return True

    def show_error(self, title: str, text: str) -> None:
        """A warning box, window-modal (asyncio keeps running)."""
        self._error(title, text)

    def _error(self, title: str, text: str, excerpt: str = "") -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok,
                          self)
        box.setObjectName("error-box")
        box.setInformativeText(excerpt_html(excerpt))  # the line and a caret, monospace
        box.open()  # window-modal without a nested loop: asyncio keeps running

    # -- drag and drop ----------------------------------------------------------------------
    @staticmethod
    def _dropped_recipe(event: QDragEnterEvent | QDropEvent) -> str | None:
        mime = event.mimeData()
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile().endswith(".toml"):
                return url.toLocalFile()
        return None

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_recipe(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        path = self._dropped_recipe(event)
        if path:
            event.acceptProposedAction()
            self.open_recipe(path)

    # -- closing -------------------------------------------------------------------------------
    def _ask_close(self) -> str:
        box = QMessageBox(QMessageBox.Icon.Question, tr("A build is running"),
                          tr("Closing the window stops watching the build."), parent=self)
        box.setInformativeText(tr("Cancel the build (its containers are stopped and removed), "
                                  "or detach: the window closes and the build runs on to its "
                                  "end, its log kept in the build record."))
        cancel = box.addButton(tr("Cancel the build"), QMessageBox.ButtonRole.DestructiveRole)
        detach = box.addButton(tr("Detach"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(tr("Keep the window"), QMessageBox.ButtonRole.RejectRole)
        box.exec()
        clicked = box.clickedButton()
        return CLOSE_CANCEL if clicked is cancel else CLOSE_DETACH if clicked is detach \
            else CLOSE_STAY

    def _ask_save(self) -> str:
        box = QMessageBox(QMessageBox.Icon.Question, tr("Unsaved changes"),
                          tr("The recipe has changes that are not saved in a file."),
                          parent=self)
        box.setObjectName("unsaved-box")
        box.setInformativeText(tr("Save them before they are dropped?"))
        save = box.addButton(QMessageBox.StandardButton.Save)
        discard = box.addButton(QMessageBox.StandardButton.Discard)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(save)
        box.exec()
        clicked = box.clickedButton()
        return SAVE if clicked is save else DISCARD if clicked is discard else KEEP_OPEN

    def may_drop_changes(self) -> bool:
        """Whether the recipe shown may be replaced or closed: it has no unsaved changes,
        or the user saved them or chose to drop them (Cancel keeps everything)."""
        if self._may_close or self._changes_settled or not self.isWindowModified():
            return True
        answer = self.ask_save()
        if answer == SAVE:
            return self.save_recipe()
        return answer == DISCARD

    def closeEvent(self, event: QCloseEvent) -> None:
        build = self.wizard.build
        if not self.may_drop_changes():
            event.ignore()
            return
        self._changes_settled = True  # a build's question may follow: this one is done
        if self._may_close or not build.running:
            self.wizard.verify.cancel()  # a probe never outlives the window
            remember(self, self.settings)
            event.accept()
            self.closed.emit()
            return
        event.ignore()
        if self._closing_task is not None:
            return  # already cancelling
        choice = self.ask_close()
        if choice == CLOSE_CANCEL:
            self._closing_task = asyncio.ensure_future(self._cancel_then_close())
        elif choice == CLOSE_DETACH:
            self._detach()

    async def _cancel_then_close(self) -> None:
        self.statusBar().showMessage(tr("Cancelling the build…"))
        await self.wizard.build.cancel_and_wait()
        self._may_close = True
        self.close()

    def _detach(self) -> None:
        """Hide the window; the build's task runs on and the app quits when it ends."""
        self.detached = True
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setQuitOnLastWindowClosed(False)
        self.hide()
        task = self.wizard.build.task
        if task is not None:
            task.add_done_callback(lambda _t: self._close_after_detach())
        else:
            self._close_after_detach()

    def _close_after_detach(self) -> None:
        self._may_close = True
        self.close()
