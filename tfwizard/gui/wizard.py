"""The wizard: eleven pages over one shared Recipe."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget, QWizard

from tfwizard.core.defaults import default_recipe
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import KnowledgeBase, load_knowledge
from tfwizard.core.recipe import Recipe

from .i18n import tr
from .jobs import Jobs
from .pages import (
    BackendPage,
    BuildPage,
    ComputePage,
    InstallPage,
    OptionsPage,
    PageId,
    RecipePage,
    ReviewPage,
    SourcePage,
    TestPage,
    ToolchainPage,
    VerifyPage,
    WelcomePage,
)
from .state import WizardState
from .widgets.stepbar import StepBar


class BuildWizard(QWizard):
    """Welcome -> source -> backend -> toolchain -> GPUs -> options -> review -> build ->
    test (optional) -> install -> verify. Hosts are injected (tests, a saved profile) or detected in a thread.
    """

    def __init__(self, *, host: HostProfile | None = None, target: HostProfile | None = None,
                 target_path: str = "", recipe: Recipe | None = None,
                 jobs: Jobs | None = None, kb: KnowledgeBase | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        kb = kb or load_knowledge()
        jobs = jobs or Jobs()
        #: True until the user (or a file) picks the recipe: a detection may then replace it
        self.recipe_is_default = recipe is None
        start = recipe if recipe is not None else default_recipe(
            host, kb, target=target, target_path=target_path)
        self.state = WizardState(start, host, target, target_path, kb, parent=self)
        self.state.name_follows = recipe is None
        self.setWindowTitle(tr("tfwizard: build TensorFlow from source"))
        # Qt's own texts for these come from qtbase's catalog; ours keep both languages
        # complete even where PySide6 ships no Qt translation
        for button, text in ((QWizard.WizardButton.BackButton, tr("< &Back")),
                             (QWizard.WizardButton.NextButton, tr("&Next >")),
                             (QWizard.WizardButton.FinishButton, tr("&Finish")),
                             (QWizard.WizardButton.CancelButton, tr("Cancel"))):
            self.setButtonText(button, text)
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.setOption(QWizard.WizardOption.NoCancelButton, False)  # Cancel closes (asks
        # first while a build runs: MainWindow.closeEvent)
        self.pages_by_id: dict[PageId, RecipePage] = {}
        self.welcome = WelcomePage(self.state, jobs.detect)
        self.welcome.on_host_detected = self.host_detected
        self.source = SourcePage(self.state)
        self.backend = BackendPage(self.state)
        self.toolchain = ToolchainPage(self.state)
        self.compute = ComputePage(self.state)
        self.options_page = OptionsPage(self.state)
        self.review = ReviewPage(self.state)
        self.build = BuildPage(self.state, jobs.build)
        self.test = TestPage(self.state, jobs.test)
        self.install = InstallPage(self.state, jobs.install)
        self.verify = VerifyPage(self.state, jobs.verify)
        for page_id, page in (
            (PageId.WELCOME, self.welcome), (PageId.SOURCE, self.source),
            (PageId.BACKEND, self.backend), (PageId.TOOLCHAIN, self.toolchain),
            (PageId.COMPUTE, self.compute), (PageId.OPTIONS, self.options_page),
            (PageId.REVIEW, self.review), (PageId.BUILD, self.build), (PageId.TEST, self.test),
            (PageId.INSTALL, self.install), (PageId.VERIFY, self.verify),
        ):
            self.setPage(int(page_id), page)
            self.pages_by_id[page_id] = page
        self.setStartId(int(PageId.WELCOME))
        self._add_step_bar()

    def _add_step_bar(self) -> None:
        self.step_bar = StepBar(self)
        self.setSideWidget(self.step_bar)
        #: every page reached since the start (Back keeps them: the step list jumps there)
        self.reached: set[int] = {self.startId()}
        self._shown = self.startId()
        self.currentIdChanged.connect(self._page_changed)
        self.step_bar.stepClicked.connect(self.jump_to)
        self._show_steps()

    def _show_steps(self) -> None:
        self.step_bar.show_steps(self.currentId() if self.currentId() >= 0 else self.startId(),
                                 self.visitedIds() or [self.startId()], self.reached)

    def _page_changed(self, page_id: int) -> None:
        """A page is shown: mark the steps; a page shown again by Back shows the recipe as
        it is now (Qt initialises a page only on the way forward)."""
        back = 0 <= page_id < self._shown
        self._shown = page_id
        if page_id >= 0:
            self.reached.add(page_id)
        self._show_steps()
        page = self.currentPage()
        if back and isinstance(page, RecipePage):
            page.show_recipe()

    def jump_to(self, page_id: int) -> PageId:
        """Go to a page reached before (the step list): back through the pages, or on
        through each one as Next would (a page with an error stops the way); returns the
        page shown."""
        target = int(page_id)
        if target not in self.reached or target == self.currentId():
            return PageId(self.currentId())
        while self.currentId() > target and target in self.visitedIds():
            self.back()
        for _ in range(len(PageId)):
            current = self.currentId()
            page = self.currentPage()
            if current == target or page is None or not page.isComplete():
                break
            self.next()  # validates the page, as the button does
            if self.currentId() in (current, -1) or self.currentId() > target:
                break
        return PageId(self.currentId())

    def retranslate(self) -> None:
        """After a language switch (MainWindow.set_language): the step names, and what
        each page makes from the recipe, the hosts and the findings, made again."""
        self.setWindowTitle(tr("tfwizard: build TensorFlow from source"))
        self.state.retranslate()
        self._show_steps()
        for page in self.pages_by_id.values():
            page.retranslate()

    def page_for(self, page_id: PageId) -> RecipePage:
        """The page with this id."""
        return self.pages_by_id[page_id]

    def host_detected(self, host: HostProfile) -> None:
        """A detection finished: show it, and start from a recipe fit for it if untouched
        (not opened from a file, not edited on any page)."""
        self.state.set_build_host(host)
        if self.recipe_is_default and not self.state.edited:
            self.state.set_recipe(self.state.default_recipe())

    def set_recipe(self, recipe: Recipe) -> None:
        """Show another recipe (it is no longer the default one)."""
        self.recipe_is_default = False
        self.state.name_follows = False  # a file's recipe keeps its own name
        self.state.set_recipe(recipe)

    def mark_user_changed(self) -> None:
        """Note that the person changed the recipe."""
        self.recipe_is_default = False

    def go_to(self, page_id: PageId) -> PageId:
        """Walk forward from the start to `page_id`, stopping where a page blocks.

        Each page on the way is initialised from the recipe and validated, as if the
        user had clicked Next; returns the page reached.
        """
        self.restart()
        guard = 0
        while self.currentId() != int(page_id) and guard < len(PageId):
            guard += 1
            before = self.currentId()
            page = self.currentPage()
            if page is None or not page.isComplete():
                break
            self.next()
            if self.currentId() == before:
                break
        return PageId(self.currentId())

    def done(self, result: int) -> None:
        """Finish or Escape: close the window when embedded, else the dialog's own done."""
        # embedded in the main window: Finish/Escape close the window (which asks first
        # when a build runs) instead of hiding the wizard and leaving an empty frame
        window = self.window()
        if window is not None and window is not self:
            window.close()
        else:
            super().done(result)

    def reject(self) -> None:
        """Escape: as done(0)."""
        self.done(0)
