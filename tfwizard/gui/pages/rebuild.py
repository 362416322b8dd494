"""The Build page's edit -> rebuild -> reinstall -> verify loop: "Rebuild" in the
recipe's warm workspace (the WarmRunner, as `tfwizard build` without --fresh), "Rebuild on
save" (a SourceWatcher over tensorflow.source_dir), and "Reinstall and verify", which walks
the Install page (only the TensorFlow wheel when the venv has its dependencies) and the
Verify page again with one click.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QWidget
from qasync import asyncSlot

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.errors import TfWizardError

from .. import jobs
from ..i18n import tr
from ..widgets.source_watch import SourceWatcher


def warm_build_job(state: Any) -> jobs.BuildJob:
    """The real build job on the warm path."""
    return jobs.default_build_job(state, warm=True)


class RebuildBar(QWidget):
    """Rebuild, Rebuild on save and Reinstall and verify, for the Build page `page`."""

    def __init__(self, page: Any, parent: QWidget) -> None:
        super().__init__(parent)
        self.page = page
        self.state = page.state
        #: the build job of a rebuild: the warm runner, or the page's own stand-in (tests)
        self.factory: jobs.BuildFactory = (
            warm_build_job if page.factory is jobs.default_build_job else page.factory)
        self.pending = False  # a save came during a build: rebuild once it ends
        self.rebuilds = 0  # rebuilds started (by the button, a save or a fix)
        self.watcher = SourceWatcher(self)
        self.watcher.saved.connect(self._saved)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.rebuild_button = QPushButton(tr("Rebuild"), self)
        self.rebuild_button.setObjectName("rebuild")
        self.rebuild_button.clicked.connect(self.rebuild)
        row.addWidget(self.rebuild_button)
        self.on_save = QCheckBox(tr("Rebuild on save"), self)
        self.on_save.setObjectName("rebuild-on-save")
        self.on_save.setToolTip(tr("Rebuild when a file in the source folder is saved "
                                   "(Bazel's bazel-* links, .git and editor temp files "
                                   "do not count)"))
        self.on_save.toggled.connect(self._watch)
        row.addWidget(self.on_save)
        self.reinstall_button = QPushButton(tr("Reinstall and verify"), self)
        self.reinstall_button.setObjectName("reinstall-verify")
        self.reinstall_button.setToolTip(tr("Install the new wheel into the same venv (only "
                                            "the wheel when its dependencies are there), "
                                            "then run the verification again"))
        self.reinstall_button.clicked.connect(self.reinstall_and_verify)
        row.addWidget(self.reinstall_button)
        self.status = QLabel("", self)
        self.status.setObjectName("rebuild-status")
        self.status.setWordWrap(True)
        row.addWidget(self.status, 1)
        self.sync()

    # -- state ------------------------------------------------------------------------------
    def source_dir(self) -> Path | None:
        """The recipe's source folder (a rebuild needs one)."""
        return self.state.recipe.resolve_path("tensorflow.source_dir")

    def cold_reason(self) -> str | None:
        """Why a rebuild of this recipe cannot take the warm path, or None when it can."""
        if self.source_dir() is None:
            return tr("Rebuild needs a recipe with a source folder (tensorflow.source_dir).")
        if self.factory is not warm_build_job:
            return None
        from tfwizard.core.building.warm.run import cold_reason

        s = self.state
        try:
            plan = make_plan(s.recipe, build_host=s.build_host, target_host=s.target_host,
                             kb=s.kb, recipe_dir=s.recipe.path.parent if s.recipe.path else None)
        except TfWizardError as exc:
            return exc.message
        return cold_reason(plan)

    def sync(self) -> None:
        """Enable what can run now."""
        running = bool(self.page.running)
        has_source = self.source_dir() is not None
        self.rebuild_button.setEnabled(has_source and not running)
        self.rebuild_button.setToolTip(
            tr("Build again in the recipe's warm container: the Bazel server, its analysis "
               "cache and the outputs are kept, so only what changed is rebuilt")
            if has_source else tr("Rebuild needs a recipe with a source folder "
                                  "(tensorflow.source_dir)."))
        self.on_save.setEnabled(has_source)
        result = self.page.result
        self.reinstall_button.setEnabled(
            not running and bool(self.state.wheel) and result is not None and result.ok)
        if self.watcher.active and self.watcher.root != self.source_dir():
            self._watch(self.on_save.isChecked())  # the recipe's folder changed

    # -- rebuild ----------------------------------------------------------------------------
    @asyncSlot()
    async def rebuild(self) -> None:
        """Build again on the warm path (cold, saying why, when the recipe cannot take it);
        during a build, once it ends."""
        if self._queued():
            return
        why = self.cold_reason()
        factory = self.factory
        if why is not None:
            factory = self.page.factory
            self.status.setText(tr("A cold build: {reason}").format(reason=why))
        else:
            self.status.setText(tr("Rebuilding in the warm container…"))
        self.rebuilds += 1
        await self.page.run_build(factory)
        if self.pending:
            self.pending = False
            await self.rebuild()

    def _queued(self) -> bool:
        """During a build: a rebuild is noted to follow it (True)."""
        if self.page.running:
            self.pending = True
            self.status.setText(tr("A rebuild follows the build that runs now."))
        return bool(self.page.running)

    def _watch(self, on: bool) -> None:
        self.watcher.stop()
        source = self.source_dir()
        if not on or source is None:
            self.status.setText("")
            return
        count = self.watcher.start(source)
        self.status.setText(tr("Watching {count} files and folders in {path}").format(
            count=count, path=source))
        self.status.setToolTip("")
        if self.watcher.skipped:
            from .rebuild_limit import say_watch_limit

            say_watch_limit(self.status, self.watcher, source)

    def _saved(self, path: str) -> None:
        if not self.on_save.isChecked() or self._queued():
            return
        self.status.setText(tr("{path} was saved: rebuilding").format(path=path))
        self.rebuild()

    # -- reinstall and verify ---------------------------------------------------------------
    @asyncSlot()
    async def reinstall_and_verify(self) -> None:
        """The Install page again with the new wheel (only the wheel when the venv has its
        dependencies), then the Verify page; the wizard shows each."""
        wizard = self.page.wizard()
        wheel = self.state.wheel
        if wizard is None or not wheel or self.page.running:
            return
        install, verify = wizard.install, wizard.verify
        python = jobs.target_python(self.state)
        alone = await self._deps_present(wheel, python)
        while wizard.currentPage() is not install and wizard.currentPage() is not verify:
            before = wizard.currentId()
            wizard.next()
            if wizard.currentId() == before:
                return
        if wizard.currentPage() is verify:
            wizard.back()
        install.wheel_edit.setText(wheel)
        done = install.result
        await install.run_install(wheel_only=alone)
        if install.result is done or not install.result.ok:
            self.status.setText(tr("The reinstall did not succeed: see the Install page."))
            return
        wizard.next()
        verify.python_edit.setText(self.state.installed_python or python)
        await verify.run_verify()
        # the panel's verdict (the status beside Verify's buttons is empty after a report)
        self.status.setText(verify.panel.verdict.text() or verify.status.text())

    async def _deps_present(self, wheel: str, python: str) -> bool:
        """The venv has every dependency of `wheel` (core/install/reinstall.py; in a thread)."""
        if not python or not Path(python).exists() or not Path(wheel).is_file():
            return False
        from tfwizard.core.install.reinstall import deps_present

        extras = list(self.state.recipe.install.extras)
        return await asyncio.get_running_loop().run_in_executor(
            None, deps_present, Path(wheel), python, extras)
