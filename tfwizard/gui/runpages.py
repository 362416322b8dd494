"""The pages that run things: Build, Install, Verify.

They adapt the core's jobs to widgets: the build runner's events to a phase label, a
progress bar, the log view and the diagnosis; the verifier's report to text. The jobs
themselves (and every decision in them) live in the core.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from qasync import asyncSlot

from tfwizard.core.build.events import (
    Artifact,
    BuildEvent,
    DiagnosisEvent,
    Finished,
    LogLines,
    PhaseChanged,
    Progress,
)
from tfwizard.core.build.progress import CacheSummary, cache_summary_text
from tfwizard.core.diagnosis_text import diagnosis_lines
from tfwizard.core.errors import TfWizardError
from tfwizard.core.fixes import fix_text
from tfwizard.core.vocab import build_title, duration_text, eta_text, phase_name

from . import jobs
from .dialogs import save_file_name
from .findings import severity_icon
from .i18n import tr
from .logview import LogView
from .pages import RecipePage, mono
from .state import WizardState


def unavailable_banner(parent: QWidget, reason: str) -> QLabel:
    label = QLabel(tr("Not available in this build: {reason}").format(reason=reason), parent)
    label.setObjectName("unavailable")
    label.setWordWrap(True)
    label.setStyleSheet("color: #8a5300; font-weight: bold;")
    return label


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
        text = QLabel("\n".join([finding.title, *diagnosis_lines(finding, quotes=quotes)]),
                      self)
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.PlainText)
        row.addWidget(text, 1)
        self.fix_button: QPushButton | None = None
        if finding.recipe_fix:
            self.fix_button = QPushButton(tr("Apply fix and rebuild"), self)
            self.fix_button.setObjectName(f"rebuild-{finding.id}")
            self.fix_button.setToolTip(tr("Change the recipe: {changes}").format(
                changes=fix_text(finding.recipe_fix)))
            row.addWidget(self.fix_button, 0, Qt.AlignmentFlag.AlignTop)


class BundleSaver(QWidget):
    """"Save diagnostics bundle…": the core's bundle of the last build record, secrets masked.

    A button and a status label; enabled once the state names a build record folder.
    """

    def __init__(self, state: WizardState, parent: QWidget, name: str,
                 reports: Callable[[], dict[str, Any]] | None = None) -> None:
        super().__init__(parent)
        self.state = state
        #: () -> {"verify.json": ...} for reports the record does not keep
        self.reports: Callable[[], dict[str, Any]] = reports or dict
        self.saved: Path | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.button = QPushButton(tr("Save diagnostics bundle…"), self)
        self.button.setObjectName(name)
        self.button.setToolTip(tr("One archive with the recipe, plan, host, log tail, failed "
                                  "actions, diagnosis and reports, to attach to a question or "
                                  "a bug report. Secrets are masked."))
        self.button.clicked.connect(self.choose_and_save)
        row.addWidget(self.button)
        self.status = QLabel("", self)
        self.status.setObjectName(f"{name}-status")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.status, 1)
        self.sync()

    def record(self) -> Path | None:
        folder = self.state.record_dir
        return Path(folder) if folder and Path(folder).is_dir() else None

    def sync(self) -> None:
        self.button.setEnabled(self.record() is not None)

    @asyncSlot()
    async def choose_and_save(self) -> None:
        record = self.record()
        if record is None:
            return
        from tfwizard.core.build.bundle import default_bundle_name

        # awaited, not exec()'d: this runs in a task (a rebuild may be running meanwhile)
        path = await save_file_name(
            self, tr("Save diagnostics bundle"),
            str(Path.home() / default_bundle_name(record.name)), tr("Archives (*.tar.gz *.zip)"))
        if path:
            await self.save(Path(path))

    async def save(self, path: Path) -> None:
        """Write the bundle in a thread (diagnosing a long log takes a moment)."""
        record = self.record()
        if record is None:
            self.status.setText(tr("No build record to bundle yet."))
            return
        from tfwizard.core.build.bundle import make_bundle

        self.button.setEnabled(False)
        self.status.setText(tr("Saving…"))
        loop = asyncio.get_running_loop()
        try:
            bundle = await loop.run_in_executor(
                None, lambda: make_bundle(record, path, host=self.state.build_host,
                                          reports=self.reports()))
        except (TfWizardError, OSError) as exc:
            self.status.setText(tr("Could not save the bundle: {error}").format(error=exc))
            return
        finally:
            self.sync()
        self.saved = bundle.path
        self.status.setText(tr("Saved {path} ({size} KiB, secrets masked).").format(
            path=bundle.path, size=f"{bundle.size / 1024:.0f}"))


class BuildPage(RecipePage):
    keys = None
    show_findings = False  # the Review page showed them; here the diagnosis matters

    buildFinished = Signal(object)  # the BuildResult, or None when the build could not start

    def __init__(self, state: WizardState, factory: jobs.BuildFactory | None = None) -> None:
        super().__init__(state, tr("Build"), tr("The build runs in Docker; its whole log is "
                                                "kept on disk. Closing the window asks whether "
                                                "to cancel the build."))
        self.factory = factory or jobs.default_build_job
        self.job: jobs.BuildJob | None = None
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.unavailable = None if factory is not None else jobs.missing_core_module("runner")
        if self.unavailable:
            self.body.addWidget(unavailable_banner(self.content, self.unavailable))
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
        self.start_button.setEnabled(not self.unavailable)
        self.start_button.clicked.connect(self.start)
        top.addWidget(self.start_button)
        self.cancel_button = QPushButton(tr("Cancel build"), self.content)
        self.cancel_button.setObjectName("cancel-build")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        top.addWidget(self.cancel_button)
        self.body.addLayout(top)
        self.progress = QProgressBar(self.content)
        self.progress.setObjectName("progress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat(tr("%v / %m actions"))
        self.body.addWidget(self.progress)
        self.action_label = QLabel("", self.content)
        self.action_label.setObjectName("action")
        self.action_label.setTextFormat(Qt.TextFormat.PlainText)
        self.body.addWidget(self.action_label)
        self.log = LogView(self.content)
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
        self.bundle = BundleSaver(state, self.content, "save-bundle")
        self.body.addWidget(self.bundle)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def isComplete(self) -> bool:
        return not self.running and self.state.wheel is not None

    # -- running ---------------------------------------------------------------------------
    @asyncSlot()
    async def start(self) -> None:
        """Start the build and show its events until it ends."""
        if self.running or self.unavailable:
            return
        self.task = asyncio.current_task()
        try:
            await self._run()
        finally:
            self.task = None
            self.start_button.setEnabled(True)
            self.cancel_button.setEnabled(False)
            self.completeChanged.emit()

    async def _run(self) -> None:
        self._reset()
        self.start_button.setEnabled(False)
        self.completeChanged.emit()
        try:
            self.job = self.factory(self.state)
        except TfWizardError as exc:
            self.phase_label.setText(tr("Could not start"))
            self.result_label.setText(str(exc))
            self.buildFinished.emit(None)
            return
        self.cancel_button.setEnabled(True)
        self.phase_label.setText(tr("Starting…"))
        try:
            async for event in self.job.events():
                self.show_event(event)
        except TfWizardError as exc:
            self.phase_label.setText(tr("Failed"))
            self.result_label.setText(str(exc))
            self.buildFinished.emit(None)
        finally:
            self.log.flush_all()

    def cancel(self) -> None:
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
        self.eta_label.setText("")
        self.action_label.setText("")
        self.result_label.setText("")
        self.cache_label.setText("")
        for row in self.diagnoses:
            row.deleteLater()
        self.diagnoses = []

    # -- events -> widgets -------------------------------------------------------------------
    def show_event(self, event: BuildEvent) -> None:
        if isinstance(event, LogLines):
            self.log.append_lines(event.lines)
        elif isinstance(event, Progress):
            self.phase_label.setText(tr("Phase: {phase}").format(phase=phase_name(event.phase)))
            if event.total:
                self.progress.setRange(0, event.total)
                self.progress.setValue(event.done or 0)
                self.eta_label.setText(eta_text(event.eta_s))
            if event.message:
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
        elif isinstance(event, Artifact):
            if event.kind == "record":
                self.state.record_dir = event.path
                self.log.set_full_log(Path(event.path) / "log.txt")
            elif event.kind == "wheel":
                self.state.wheel = event.path
        elif isinstance(event, Finished):
            result = event.result
            self.result = result
            self.phase_label.setText(build_title(result.status))
            if result.ok and result.actions:
                self.progress.setRange(0, result.actions)
                self.progress.setValue(result.actions)
            self.eta_label.setText(duration_text(result.elapsed_s))
            self.result_label.setText(
                result.message + ("\n" + tr("Record: {path}").format(path=result.record_dir)
                                  if result.record_dir else ""))
            if result.wheel:
                self.state.wheel = result.wheel
            if result.cache:
                self.cache_label.setText(cache_summary_text(CacheSummary(**result.cache)))
            self.bundle.sync()
            self.buildFinished.emit(result)

    def fix_and_rebuild(self, finding: DiagnosisEvent) -> None:
        """Apply the diagnosis's fix (values the core resolved for this build), then build
        again; a fix that cannot apply leaves the recipe as it was and says why."""
        try:
            self.state.apply_recipe_fix(finding.recipe_fix)
        except TfWizardError as exc:
            self.result_label.setText(tr("The fix was not applied: {why}").format(
                why=exc.message))
            return
        self.start()


class InstallPage(RecipePage):
    keys = ("install.",)

    def __init__(self, state: WizardState, factory: jobs.InstallFactory | None = None) -> None:
        super().__init__(state, tr("Install"),
                         tr("Install the wheel into a virtual environment (created when "
                            "missing). The wheel's tags are checked against that interpreter "
                            "first."))
        self.factory = factory or jobs.default_install
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.unavailable = None if factory is not None else jobs.missing_core_module("install")
        if self.unavailable:
            self.body.addWidget(unavailable_banner(self.content, self.unavailable))
        form = QFormLayout()
        wheel_row = QHBoxLayout()
        self.wheel_edit = QLineEdit(self.content)
        self.wheel_edit.setObjectName("wheel")
        self.wheel_edit.setPlaceholderText(tr("the wheel the build made, or one you have"))
        wheel_row.addWidget(self.wheel_edit, 1)
        pick = QPushButton(tr("Choose wheel…"), self.content)
        pick.clicked.connect(self._pick_wheel)
        wheel_row.addWidget(pick)
        form.addRow(tr("Wheel:"), wheel_row)
        row = QHBoxLayout()
        self.venv_edit = QLineEdit(self.content)
        self.venv_edit.setObjectName("venv")
        self.venv_edit.setPlaceholderText("~/.venvs/tensorflow")
        self.registerField("venv", self.venv_edit)
        self.venv_edit.textEdited.connect(lambda t: self.set({"install.venv": t.strip()}))
        row.addWidget(self.venv_edit, 1)
        browse = QPushButton(tr("Browse…"), self.content)
        browse.clicked.connect(self._browse)
        row.addWidget(browse)
        form.addRow(tr("Virtualenv:"), row)
        self.and_cuda = QCheckBox(tr("Install the [and-cuda] extra (NVIDIA's CUDA libraries "
                                     "from pip)"), self.content)
        self.and_cuda.setObjectName("and-cuda")
        self.and_cuda.toggled.connect(self._extras)
        form.addRow("", self.and_cuda)
        self.links_edit = QLineEdit(self.content)
        self.links_edit.setObjectName("offline-packages")
        self.links_edit.setPlaceholderText(
            tr("empty: pip's index; a folder: install offline from it"))
        self.links_edit.setToolTip(tr("A folder of wheels to install from instead of an index "
                                      "(pip --no-index --find-links FOLDER)."))
        self.links_edit.textEdited.connect(self._links)
        form.addRow(tr("Offline package folder:"), self.links_edit)
        self.body.addLayout(form)
        buttons = QHBoxLayout()
        self.install_button = QPushButton(tr("Install"), self.content)
        self.install_button.setObjectName("install")
        self.install_button.setEnabled(not self.unavailable)
        self.install_button.clicked.connect(self.start)
        buttons.addWidget(self.install_button)
        self.cancel_button = QPushButton(tr("Cancel"), self.content)
        self.cancel_button.setObjectName("cancel-install")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.cancel_button)
        self.status = QLabel("", self.content)
        self.status.setObjectName("install-status")
        self.status.setWordWrap(True)
        buttons.addWidget(self.status, 1)
        self.body.addLayout(buttons)
        self.progress = QProgressBar(self.content)
        self.progress.setObjectName("pip-progress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("")
        self.body.addWidget(self.progress)
        self.log = LogView(self.content, max_blocks=2000)
        self.body.addWidget(self.log, 1)

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def _pick_wheel(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("Wheel"), "", tr("Wheels (*.whl)"))
        if path:
            self.wheel_edit.setText(path)

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, tr("Virtualenv folder"))
        if path:
            self.venv_edit.setText(path)
            self.set({"install.venv": path})

    def _extras(self, on: bool) -> None:
        extras = [e for e in self.state.recipe.install.extras if e != "and-cuda"]
        self.set({"install.extras": (["and-cuda"] + extras) if on else extras})

    def _links(self, text: str) -> None:
        self.state.install_find_links = text.strip()

    def sync(self) -> None:
        r = self.state.recipe
        if self.state.wheel:
            self.wheel_edit.setText(self.state.wheel)
        self.links_edit.setText(self.state.install_find_links)
        self.venv_edit.setText(r.install.venv)
        self.and_cuda.setChecked("and-cuda" in r.install.extras)
        self.and_cuda.setEnabled(r.backend.kind == "cuda")

    def isComplete(self) -> bool:
        # installing is optional: an existing venv can be verified too
        return super().isComplete() and not self.running

    @asyncSlot()
    async def start(self) -> None:
        """Run the core installer and show its events."""
        wheel = self.wheel_edit.text().strip()
        if self.running or self.unavailable:
            return
        if not wheel:
            self.status.setText(tr("Build a wheel first, or choose one."))
            return
        self.task = asyncio.current_task()
        self.install_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.completeChanged.emit()
        self.log.clear()
        self.progress.setRange(0, 0)  # pip does not say how much is left: busy
        self.status.setText(tr("Installing…"))
        try:
            async for event in self.factory(self.state, wheel):
                self.show_event(event)
        except TfWizardError as exc:
            self.status.setText(str(exc))
        except asyncio.CancelledError:
            self.status.setText(tr("Cancelled."))
        finally:
            self.task = None
            self.log.flush_all()
            if self.progress.maximum() == 0:
                self.progress.setRange(0, 1)
            self.install_button.setEnabled(True)
            self.cancel_button.setEnabled(False)
            self.completeChanged.emit()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def show_event(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "log":
            self.log.append_line(event.line)
        elif kind == "progress":
            self.progress.setFormat(event.summary())
            if event.phase == "done":
                self.progress.setRange(0, 1)
                self.progress.setValue(1)
        elif kind == "venv":
            self.log.append_line(tr("created the venv {path}").format(path=event.path))
        elif kind == "started":
            self.log.append_line("pip install " + event.requirement)
        elif kind == "finished":
            result = event.result
            self.result = result
            self.progress.setRange(0, 1)
            self.progress.setValue(1 if result.ok else 0)
            self.status.setText(result.message)
            if result.ok:
                self.state.installed_python = result.python


class VerifyPage(RecipePage):
    keys = ()
    show_findings = False

    def __init__(self, state: WizardState, verify: jobs.VerifyFunction | None = None) -> None:
        super().__init__(state, tr("Verify"),
                         tr("Import TensorFlow in the target interpreter, list its devices, run "
                            "ops on each, and explain what went wrong."))
        self.verify_fn = verify or jobs.default_verify
        self.unavailable = None if verify is not None else jobs.missing_core_module("verify")
        self.report: Any = None
        if self.unavailable:
            self.body.addWidget(unavailable_banner(self.content, self.unavailable))
        form = QFormLayout()
        self.python_edit = QLineEdit(self.content)
        self.python_edit.setObjectName("verify-python")
        self.python_edit.setPlaceholderText(tr("the python of the venv the wheel went into"))
        form.addRow(tr("Interpreter:"), self.python_edit)
        self.body.addLayout(form)
        row = QHBoxLayout()
        self.run_button = QPushButton(tr("Run verification"), self.content)
        self.run_button.setObjectName("run-verify")
        self.run_button.setEnabled(not self.unavailable)
        self.run_button.clicked.connect(self.run_verify)
        row.addWidget(self.run_button)
        self.copy_button = QPushButton(tr("Copy report"), self.content)
        self.copy_button.setObjectName("copy-report")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_report)
        row.addWidget(self.copy_button)
        self.status = QLabel("", self.content)
        self.status.setObjectName("verify-status")
        row.addWidget(self.status, 1)
        self.body.addLayout(row)
        self.report_view = QPlainTextEdit(self.content)
        self.report_view.setObjectName("verify-report")
        mono(self.report_view)
        self.body.addWidget(self.report_view, 1)
        self.bundle = BundleSaver(state, self.content, "save-bundle-verify",
                                  reports=self._reports)
        self.body.addWidget(self.bundle)

    def sync(self) -> None:
        if not self.python_edit.text():
            self.python_edit.setText(jobs.target_python(self.state))
        self.bundle.sync()

    def _reports(self) -> dict[str, Any]:
        """The report shown here goes into the bundle when the record has none."""
        to_dict = getattr(self.report, "to_dict", None)
        return {"verify.json": to_dict()} if to_dict is not None else {}

    @asyncSlot()
    async def run_verify(self) -> None:
        """Run the probe in a thread: importing TensorFlow takes seconds, and may hang."""
        python = self.python_edit.text().strip()
        if not python:
            self.status.setText(tr("Choose the interpreter to verify."))
            return
        self.run_button.setEnabled(False)
        self.status.setText(tr("Probing TensorFlow in {python}…").format(python=python))
        loop = asyncio.get_running_loop()
        try:
            report = await loop.run_in_executor(None, self.verify_fn, self.state, python)
        except TfWizardError as exc:
            self.status.setText(str(exc))
            return
        finally:
            self.run_button.setEnabled(True)
        self.show_report(report)

    def show_report(self, report: Any) -> None:
        self.report = report
        try:
            text = jobs.render_verify_report(report)
        except (ImportError, AttributeError, TypeError):
            text = report.to_json() if hasattr(report, "to_json") else str(report)
        self.report_view.setPlainText(text)
        self.status.setText(tr("All checks passed.") if getattr(report, "ok", False)
                            else tr("Some checks failed: see the diagnosis below."))
        self.copy_button.setEnabled(True)

    def copy_report(self) -> None:
        QGuiApplication.clipboard().setText(self.report_view.toPlainText())
