"""The Welcome page: the build host (detected in a thread) and an optional target."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
)
from qasync import asyncSlot

from tfwizard.core.errors import TfWizardError
from tfwizard.core.host import HostProfile
from tfwizard.core.views.readiness import readiness

from ..i18n import tr
from ..state import WizardState
from ..widgets.advice import AdviceBox
from ..widgets.readiness import ReadinessList
from .base import PageId, RecipePage
from .hostview import host_html


class WelcomePage(RecipePage):
    """Welcome: the build host (detected in a thread) and an optional target profile."""

    #: host-level findings (Docker...) show here; they block at Review, not here, so a
    #: recipe can still be prepared on a machine that cannot build it
    keys = ("target.", "host.")
    blocking_keys = ("target.",)
    scrolls = True  # six checklist rows and the host table do not fit 1024x700 unscrolled

    def __init__(self, state: WizardState, detect: Callable[[], HostProfile] | None) -> None:
        super().__init__(state, tr("Welcome to tfwizard"),
                         tr("tfwizard builds a TensorFlow wheel from source in Docker. "
                            "First, the machine it builds on, and the one it builds for."))
        self.detect = detect
        #: what a finished detection does; the wizard sets its own (which may also refit
        #: an untouched recipe to the host)
        self.on_host_detected: Callable[[HostProfile], None] = state.set_build_host
        self.detecting = False
        # the checklist says how this machine stands: no "No problems found" beside its
        # warnings (the UX review); findings about the target still show here
        self.findings.quiet_when_clean = True
        self.findings.refresh()
        self._add_readiness()
        self.build_label = QLabel(self.content)
        self.build_label.setObjectName("build-host")
        self.build_label.setTextFormat(Qt.TextFormat.RichText)
        self.build_label.setWordWrap(True)
        self.build_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(self.build_label)
        self.target_label = QLabel(self.content)
        self.target_label.setObjectName("target-host")
        self.target_label.setTextFormat(Qt.TextFormat.RichText)
        self.target_label.setWordWrap(True)
        self.body.addWidget(self.target_label)
        buttons = QHBoxLayout()
        self.refresh_button = QPushButton(tr("Refresh"), self.content)
        self.refresh_button.setObjectName("refresh")
        self.refresh_button.setToolTip(tr("Detect this machine again (GPUs, driver, Docker, RAM)"))
        self.refresh_button.setEnabled(detect is not None)
        self.refresh_button.clicked.connect(self.refresh)
        buttons.addWidget(self.refresh_button)
        self.import_button = QPushButton(tr("Import target machine profile…"), self.content)
        self.import_button.setObjectName("import-target")
        self.import_button.setToolTip(tr("Build for another machine: a file written there by "
                                         "`tfwizard detect --json > target.json`"))
        self.import_button.clicked.connect(self.choose_target)
        buttons.addWidget(self.import_button)
        self.local_button = QPushButton(tr("Build for this machine"), self.content)
        self.local_button.setObjectName("clear-target")
        self.local_button.clicked.connect(lambda: self.state.set_target(None))
        buttons.addWidget(self.local_button)
        buttons.addStretch(1)
        self.body.addLayout(buttons)
        self.status = QLabel(self.content)
        self.status.setObjectName("detect-status")
        self.body.addWidget(self.status)
        self.advice = AdviceBox(state, self.content, self.skip_to_install)
        self.body.addWidget(self.advice)
        self.jump: PageId | None = None  # the next page once, instead of Source
        self.body.addStretch(1)
        self._render()

    def sync(self) -> None:
        """Show the hosts as they are now."""
        self._render()

    # -- the readiness checklist ----------------------------------------------------------
    def _add_readiness(self) -> None:
        self.readiness = ReadinessList(self.content)
        self.body.addWidget(self.readiness)
        self.state.hostsChanged.connect(self._render_readiness)
        self.state.recipeChanged.connect(self._render_readiness)

    def _render_readiness(self) -> None:
        s = self.state
        self.readiness.show_checks(readiness(s.recipe, s.build_host, s.target_host, s.kb,
                                             s.target_path))

    def isComplete(self) -> bool:
        """Qt: Next waits only for the target's errors (host ones block at Review)."""
        return not self.state.errors_for(self.blocking_keys)

    def validatePage(self) -> bool:
        """Qt: Next; refuse while the target profile has an error."""
        errors = self.state.errors_for(self.blocking_keys)
        if errors:
            return self.block(tr("Fix first: {message}").format(message=errors[0].message))
        return True

    def _render(self) -> None:
        s = self.state
        self.build_label.setText(host_html(s.build_host, s,
                                           tr("This machine (builds the wheel)")))
        if s.target_host is None:
            self.target_label.setText(tr("<b>Target machine</b>: this machine. Import another "
                                         "machine's profile to build a wheel for it."))
        else:
            self.target_label.setText(host_html(
                s.target_host, s,
                tr("Target machine (runs the wheel): {path}").format(path=s.target_path)))
        self.local_button.setEnabled(s.target_host is not None)
        self._render_readiness()
        self.advice.refresh()

    def nextId(self) -> int:
        """Qt: Source, or Install once when the advice's buttons skip the build."""
        return int(self.jump) if self.jump is not None else super().nextId()

    def skip_to_install(self, wheel: str) -> None:
        """Go straight to Install with `wheel` (a file, or a requirement; "" to choose one)."""
        if wheel:
            self.state.wheel = wheel
        wizard = self.wizard()
        self.jump = PageId.INSTALL
        try:
            if wizard is not None:
                wizard.next()
        finally:
            self.jump = None

    @asyncSlot()
    async def refresh(self) -> None:
        """Detect this machine off the GUI thread (NVML, Docker and disks can be slow)."""
        if self.detect is None or self.detecting:
            return
        self.detecting = True
        self.refresh_button.setEnabled(False)
        self.status.setText(tr("Detecting this machine…"))
        try:
            host = await asyncio.get_running_loop().run_in_executor(None, self.detect)
        finally:
            self.detecting = False
            self.refresh_button.setEnabled(True)
        self.status.setText("")
        self.on_host_detected(host)
        self._render()

    def choose_target(self) -> None:
        """Ask for a target machine profile (a JSON file) and import it."""
        path, _ = QFileDialog.getOpenFileName(self, tr("Import target machine profile"), "",
                                              tr("Host profiles (*.json);;All files (*)"))
        if path:
            self.import_target(path)

    def import_target(self, path: str) -> bool:
        """Use the profile at `path` as the target; says why not and returns False when it cannot."""
        try:
            self.state.load_target_profile(path, fit=True)
        except TfWizardError as exc:
            self._import_failed(exc.message)
            return False
        done = tr("Building for the machine described in {path}.").format(path=path)
        self.status.setText(done)
        window = self.window()
        if isinstance(window, QMainWindow):  # seen from every page, not only this one
            window.statusBar().showMessage(done, 8000)
        self._render()
        return True

    def _import_failed(self, message: str) -> None:
        """A profile that cannot be read: a dialog over whatever page is shown."""
        self.status.setText("")
        box = QMessageBox(QMessageBox.Icon.Warning, tr("Cannot import the target machine profile"),
                          message, QMessageBox.StandardButton.Ok, self.window())
        box.setObjectName("import-error-box")
        box.open()  # window-modal without a nested loop: asyncio keeps running
