"""The Build page: the build runner's events as a phase, a progress bar, the log and
the diagnosis, with "Apply fix and rebuild".
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizard,
)
from qasync import asyncSlot

from tfwizard.core.building.run.events import (
    Artifact,
    BuildEvent,
    Finished,
    LogLines,
    PhaseChanged,
    Progress,
)
from tfwizard.core.building.run.progress import CacheSummary, cache_summary_text
from tfwizard.core.diagnosis.types import DiagnosisEvent, UnrecognisedEvent
from tfwizard.core.errors import TfWizardError
from tfwizard.core.fixes import fix_text
from tfwizard.core.vocab import build_title, eta_text, phase_name

from .. import jobs
from ..app import explained
from ..consent import confirm_secrets
from ..i18n import tr
from ..state import WizardState
from ..widgets.bundle import BundleSaver
from ..widgets.findings import severity_icon
from ..widgets.logview import LogView
from ..widgets.rebuild import RebuildGuard
from ..widgets.richtext import diagnosis_html
from ..widgets.unrecognised import UnrecognisedCard
from ..widgets.wheelhouse import PublishRow
from .base import RecipePage
from .build_watch import BuildWatch
from .rebuild import RebuildBar


class DiagnosisRow(QFrame):
    """A known failure found in the build log, with "Apply fix and rebuild" when it has one."""

    def __init__(self, finding: DiagnosisEvent, parent: QWidget) -> None:
        super().__init__(parent)
        self.finding = finding
        self.setObjectName(f"diagnosis-{finding.id}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        row = QHBoxLayout(self)
        icon = QLabel(self)
        icon.setPixmap(severity_icon(self, finding.severity).pixmap(20, 20))
        row.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        # the log's words are quoted for a warning (e.g. what the cache server said); an
        # error's log lines are in the log view
        quotes = 4 if finding.severity == "warning" else 0
        text = QLabel(diagnosis_html(finding, quotes=quotes), self)
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        row.addWidget(text, 1)
        self.fix_button: QPushButton | None = None
        if finding.recipe_fix:
            self.fix_button = QPushButton(tr("Apply fix and rebuild"), self)
            self.fix_button.setObjectName(f"rebuild-{finding.id}")
            self.fix_button.setToolTip(tr("Change the recipe: {changes}").format(
                changes=fix_text(finding.recipe_fix)))
            row.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignTop)


class BuildPage(RecipePage):
    """Build: start and cancel the build, show its phase, progress, log, diagnosis and result."""

    keys = None
    show_findings = False  # the Review page showed them; here the diagnosis matters

    buildFinished = Signal(object)  # the BuildResult, or None when the build could not start

    def __init__(self, state: WizardState, factory: jobs.BuildFactory | None = None) -> None:
        super().__init__(state, tr("Build"), tr("The build runs in Docker; its whole log is "
                                                "kept on disk. Closing the window asks whether "
                                                "to cancel the build."))
        self.factory = factory or jobs.default_build_job
        self.job: jobs.BuildJob | None = None
        self.stop_asked = False  # cancel() before the job existed (its image was probed)
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.again = RebuildGuard()
        top = QHBoxLayout()
        self.phase_label = QLabel(tr("Not started"), self.content)
        self.phase_label.setObjectName("phase")
        font = self.phase_label.font()
        font.setBold(True)
        self.phase_label.setFont(font)
        top.addWidget(self.phase_label)
        self.eta_label = QLabel("", self.content)
        self.eta_label.setObjectName("eta")
        top.addWidget(self.eta_label)
        top.addStretch(1)
        self.start_button = QPushButton(tr("Start build"), self.content)
        self.start_button.setObjectName("start-build")
        self.start_button.clicked.connect(self.start)
        top.addWidget(self.start_button)
        self.cancel_button = QPushButton(tr("Cancel build"), self.content)
        self.cancel_button.setObjectName("cancel-build")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        top.addWidget(self.cancel_button)
        self.body.addLayout(top)
        self.rebuilder = RebuildBar(self, self.content)
        self.body.addWidget(self.rebuilder)
        self.progress = QProgressBar(self.content)
        self.progress.setObjectName("progress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat(tr("%p % · %v / %m actions"))
        # shown once Bazel says how many actions there are: "0 / 1 actions" before a
        # build, or after one that failed before Bazel ran, is no figure at all
        self.progress.setVisible(False)
        self.body.addWidget(self.progress)
        self.action_label = QLabel("", self.content)
        self.action_label.setObjectName("action")
        self.action_label.setTextFormat(Qt.TextFormat.PlainText)
        self.body.addWidget(self.action_label)
        self.log = LogView(self.content)
        self.watch = BuildWatch(state, self.content, self.log)
        self.body.addWidget(self.watch)
        self.body.addWidget(self.log, 1)
        self.result_label = QLabel("", self.content)
        self.result_label.setObjectName("build-result")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(self.result_label)
        self.cache_label = QLabel("", self.content)
        self.cache_label.setObjectName("cache-summary")
        self.cache_label.setWordWrap(True)
        self.body.addWidget(self.cache_label)
        self.diagnosis_box = QWidget(self.content)
        self.diagnosis_layout = QVBoxLayout(self.diagnosis_box)
        self.diagnosis_layout.setContentsMargins(0, 0, 0, 0)
        self.body.addWidget(self.diagnosis_box)
        self.diagnoses: list[DiagnosisRow] = []
        #: a failure no signature explains: the log's lines to read (not a diagnosis)
        self.unrecognised: UnrecognisedCard | None = None
        self.bundle = BundleSaver(state, self.content, "save-bundle")
        self.body.addWidget(self.bundle)
        self.publish = PublishRow(state, self.content)
        self.body.addWidget(self.publish)

    @property
    def running(self) -> bool:
        """A build is under way."""
        return self.task is not None and not self.task.done()

    def sync(self) -> None:
        """Before a build: its steps and estimated cost (none while one runs or ended)."""
        if not self.running and self.result is None:
            self.watch.show_plan()
        self.start_button.setText(self.again.button_text(self.state.recipe))
        self.rebuilder.sync()

    def isComplete(self) -> bool:
        """Qt: Next once a build made a wheel (and none runs)."""
        return not self.running and self.state.wheel is not None

    # -- running ---------------------------------------------------------------------------
    @asyncSlot()
    async def start(self) -> None:
        """Start the build (asking first when it would repeat a success) and show its
        events until it ends."""
        if self.running:
            return
        if not await self.again.confirm(self, self.state.recipe):
            return
        await self.run_build(self.factory)

    async def run_build(self, factory: jobs.BuildFactory) -> None:
        """Build with `factory` (the page's own, or the warm one: RebuildBar)."""
        if self.running:
            return
        if not await confirm_secrets(self, self.state.recipe):
            return
        self.task = asyncio.current_task()
        try:
            await self._run(factory)
        finally:
            self.task = None
            self.start_button.setEnabled(True)
            self.start_button.setText(self.again.button_text(self.state.recipe))
            self.cancel_button.setEnabled(False)
            self.completeChanged.emit()
            self.rebuilder.sync()
            self._hold_back(False)

    def _hold_back(self, hold: bool) -> None:
        """No Back while a build runs (its events belong to this page); set after Qt's own
        button update, which completeChanged triggers."""
        wizard = self.wizard()
        if wizard is not None:
            wizard.button(QWizard.WizardButton.BackButton).setEnabled(not hold)

    async def _run(self, factory: jobs.BuildFactory) -> None:
        self._reset()
        self.again.started(self.state.recipe)
        self.start_button.setEnabled(False)
        self.completeChanged.emit()
        self.rebuilder.sync()
        self._hold_back(True)
        self.phase_label.setText(tr("Starting…"))
        self.stop_asked, self.job = False, None
        try:  # off the GUI thread: a remote build asks its image first (a short container)
            job = await asyncio.get_running_loop().run_in_executor(None, factory, self.state)
        except (TfWizardError, OSError) as exc:
            self._stopped(tr("Could not start"), exc)
            return
        if self.stop_asked:  # cancelled (or the window closed) while it was being made
            self.phase_label.setText(tr("Cancelled"))
            self.buildFinished.emit(None)
            return
        self.job = job
        self.cancel_button.setEnabled(True)
        self.watch.started()
        try:
            async for event in self.job.events():
                self.show_event(event)
        except (TfWizardError, OSError) as exc:
            self._stopped(tr("Failed"), exc)
        finally:
            self.log.flush_all()
            self.watch.finished(self.result)

    def _stopped(self, phase: str, exc: Exception) -> None:
        """The build ended on an error of the user's to fix (a read-only or full data
        folder: the CLI's message); any other error goes on to the error dialog."""
        shown = explained(exc)
        if not isinstance(shown, TfWizardError):
            raise exc
        self.phase_label.setText(phase)
        self.result_label.setText(str(shown))
        self.buildFinished.emit(None)

    def cancel(self) -> None:
        """Ask the build to stop (its containers are removed); the page shows it ending."""
        self.stop_asked = True
        if self.job is not None and self.running:
            self.phase_label.setText(tr("Cancelling…"))
            self.cancel_button.setEnabled(False)
            self.job.cancel()

    async def cancel_and_wait(self, timeout: float = 30.0) -> None:
        """Cancel and wait until the runner has cleaned up (used when the window closes)."""
        task = self.task
        self.cancel()
        if task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), timeout)

    def _reset(self) -> None:
        self.result = None
        self.state.wheel = None
        self.log.clear()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setVisible(False)
        self.eta_label.setText("")
        self.action_label.setText("")
        self.result_label.setText("")
        self.cache_label.setText("")
        self.publish.offer(None)
        for row in self.diagnoses:
            row.deleteLater()
        self.diagnoses = []
        if self.unrecognised is not None:
            self.unrecognised.deleteLater()
            self.unrecognised = None

    # -- events -> widgets -------------------------------------------------------------------
    def show_event(self, event: BuildEvent) -> None:
        """Show one build event in the widgets."""
        if isinstance(event, LogLines):
            self.log.append_lines(event.lines)
        elif isinstance(event, Progress):
            self.phase_label.setText(tr("Phase: {phase}").format(phase=phase_name(event.phase)))
            if event.total:
                self.progress.setVisible(True)
                self.progress.setRange(0, event.total)
                self.progress.setValue(event.done or 0)
                self.eta_label.setText(eta_text(event.eta_s))
            self.watch.progress(event)
            if event.message and self.result is None:
                self.action_label.setText(event.message[:200])
        elif isinstance(event, PhaseChanged):
            self.phase_label.setText(
                tr("Phase: {phase}").format(phase=phase_name(event.phase))
                + (tr(" (step {step})").format(step=event.step) if event.step else ""))
        elif isinstance(event, DiagnosisEvent):
            row = DiagnosisRow(event, self.diagnosis_box)
            if row.fix_button is not None:
                row.fix_button.clicked.connect(lambda _c=False, f=event: self.fix_and_rebuild(f))
            self.diagnosis_layout.addWidget(row)
            self.diagnoses.append(row)
        elif isinstance(event, UnrecognisedEvent):  # no known cause: the lines to read
            self.unrecognised = UnrecognisedCard(event, self.diagnosis_box)
            self.diagnosis_layout.addWidget(self.unrecognised)
        elif isinstance(event, Artifact):
            if event.kind == "record":
                self.state.record_dir = event.path
                self.log.set_full_log(Path(event.path) / "log.txt")
            elif event.kind == "wheel":
                self.state.wheel = event.path
        elif isinstance(event, Finished):
            result = event.result
            self.result = result
            self.again.finished(result)
            self.phase_label.setText(build_title(result.status))
            self.action_label.setText("")  # the last action line is stale now
            if result.ok and result.actions:
                self.progress.setVisible(True)
                self.progress.setRange(0, result.actions)
                self.progress.setValue(result.actions)
            self.eta_label.setText("")  # "Took …" under the chart says how long
            # a wheel is shown with "Open folder" above; its path is not repeated here
            said = "" if result.ok and result.wheel else result.message + "\n"
            self.result_label.setText(
                (said + (tr("Record: {path}").format(path=result.record_dir)
                         if result.record_dir else "")).strip())
            if result.wheel:
                self.state.wheel = result.wheel
            if result.cache:
                self.cache_label.setText(cache_summary_text(CacheSummary(**result.cache)))
            self.bundle.sync()
            self.publish.offer(result)
            self.buildFinished.emit(result)

    def fix_and_rebuild(self, finding: DiagnosisEvent) -> None:
        """Apply the diagnosis's fix (values the core resolved for this build), then build
        again (warm when the recipe can: RebuildBar); a fix that cannot apply leaves the
        recipe as it was and says why."""
        try:
            self.state.apply_recipe_fix(finding.recipe_fix)
        except TfWizardError as exc:
            self.result_label.setText(tr("The fix was not applied: {why}").format(
                why=exc.message))
            return
        self.rebuilder.rebuild()
