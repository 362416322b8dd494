"""The Install page: the wheel into a venv, pip's progress and log."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QWidget,
)
from qasync import asyncSlot

from tfwizard.core.errors import TfWizardError
from tfwizard.core.handoff import target_steps
from tfwizard.core.install.job import InstallTarget, base_python
from tfwizard.core.jobs import Job
from tfwizard.core.recipe import AND_CUDA

from .. import jobs
from ..i18n import tr
from ..state import WizardState
from ..widgets.browse import FILE, FOLDER, browse_button
from ..widgets.install_words import download_note, error_text
from ..widgets.logview import LogView
from ..widgets.network import RecipeFields, index_fields
from ..widgets.richtext import code_html
from ..widgets.wheelhouse import configured_url
from .base import RecipePage


def target_note(parent: QWidget, name: str) -> QLabel:
    """A framed note for a wheel built for another machine: what to run there."""
    label = QLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setFrameShape(QFrame.Shape.StyledPanel)
    label.setMargin(6)
    label.setVisible(False)
    return label


def show_target_note(label: QLabel, state: WizardState) -> None:
    """Fill the note from the core's steps (shown only with a target machine)."""
    label.setVisible(state.target_host is not None)
    if state.target_host is not None:
        label.setText(code_html(target_steps(state.recipe, state.wheel, state.target_path)))


class InstallPage(RecipePage):
    """Install: the wheel into a venv with pip, its progress and log, cancellable."""

    keys = ("install.",)
    scrolls = True  # the fields, the index group and pip's log: taller than 1024x700

    def __init__(self, state: WizardState, factory: jobs.InstallFactory | None = None) -> None:
        super().__init__(state, tr("Install"),
                         tr("Install the wheel into a virtual environment (created when "
                            "missing). The wheel's tags are checked against that interpreter "
                            "first."))
        self.factory = factory or jobs.default_install
        self.task: asyncio.Task[Any] | None = None
        self.job: Job | None = None
        self.result: Any = None
        self.argv: list[str] = []  # pip's, from the install's start (install.json keeps it)
        self.target_note = target_note(self.content, "install-target-note")
        self.body.addWidget(self.target_note)
        form = QFormLayout()
        form.addRow(tr("Wheel:"), self._wheel_row())
        form.addRow(tr("Interpreter:"), self._python_row())
        row = QHBoxLayout()
        self.venv_edit = QLineEdit(self.content)
        self.venv_edit.setObjectName("venv")
        self.venv_edit.setPlaceholderText("~/.venvs/tensorflow")
        self.registerField("venv", self.venv_edit)
        self.venv_edit.textEdited.connect(lambda t: self.set({"install.venv": t.strip()}))
        row.addWidget(self.venv_edit, 1)
        row.addWidget(browse_button(self.venv_edit, FOLDER, tr("Virtualenv folder"),
                                    lambda path: self.set({"install.venv": path})))
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
        links_row = QHBoxLayout()
        links_row.addWidget(self.links_edit, 1)
        links_row.addWidget(browse_button(self.links_edit, FOLDER, tr("Offline package folder"),
                                          self._links))
        form.addRow(tr("Offline package folder:"), links_row)
        self.body.addLayout(form)
        self.index = RecipeFields(state, self.content, tr("Package index"), "package-index",
                                  index_fields())
        self.body.addWidget(self.index)
        self._wheelhouse_row()
        self._download_line()
        buttons = QHBoxLayout()
        self.install_button = QPushButton(tr("Install"), self.content)
        self.install_button.setObjectName("install")
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
        self.progress.setFormat(tr("pip's progress"))  # labelled: not a text field
        self.body.addWidget(self.progress)
        self.log = LogView(self.content, max_blocks=2000)
        self.log.setMinimumHeight(200)  # in the scrolling page: a readable log, not a strip
        self.body.addWidget(self.log, 1)

    @property
    def running(self) -> bool:
        """An install is under way."""
        return self.task is not None and not self.task.done()

    def _wheel_row(self) -> QHBoxLayout:
        """The wheel: the build's, a file, or a requirement pip downloads."""
        row = QHBoxLayout()
        self.wheel_edit = QLineEdit(self.content)
        self.wheel_edit.setObjectName("wheel")
        self.wheel_edit.setPlaceholderText(tr("the wheel the build made, or one you have"))
        row.addWidget(self.wheel_edit, 1)
        row.addWidget(browse_button(self.wheel_edit, FILE, tr("Wheel"), lambda _p: None,
                                    tr("Wheels (*.whl)")))
        self.wheel_edit.setToolTip(tr("A .whl file, or a requirement pip downloads first, "
                                      "e.g. tensorflow-cpu==2.20.0"))
        return row

    def _python_row(self) -> QHBoxLayout:
        """install.python: the interpreter that creates the venv (or, without a venv, the
        one the wheel goes into); its tags are checked before anything is made."""
        row = QHBoxLayout()
        self.python_edit = QLineEdit(self.content)
        self.python_edit.setObjectName("install-python")
        self.python_edit.setPlaceholderText(base_python(InstallTarget(Path())).as_posix())
        self.python_edit.setToolTip(tr("The Python that creates the venv (empty: the one "
                                       "shown); without a venv, the wheel goes into it"))
        self.python_edit.textEdited.connect(lambda t: self.set({"install.python": t.strip()}))
        row.addWidget(self.python_edit, 1)
        row.addWidget(browse_button(self.python_edit, FILE, tr("Interpreter"),
                                    lambda path: self.set({"install.python": path})))
        return row

    def _wheelhouse_row(self) -> None:
        """The team's wheelhouse: its URL (the recipe's, else TFWIZARD_WHEELHOUSE) and the
        button that installs its best wheel for this machine instead of the wheel above."""
        row = QHBoxLayout()
        row.addWidget(QLabel(tr("Team's wheelhouse:"), self.content))
        self.house_edit = QLineEdit(self.content)
        self.house_edit.setObjectName("wheelhouse-url")
        self.house_edit.setPlaceholderText("http://wheels.example:8080/simple/")
        self.house_edit.setToolTip(tr("The team's wheelhouse: a simple index URL or a folder"))
        row.addWidget(self.house_edit, 1)
        self.house_button = QPushButton(tr("Install from the team's wheelhouse"), self.content)
        self.house_button.setObjectName("install-wheelhouse")
        self.house_button.setToolTip(tr("Install the wheelhouse's wheel that serves this "
                                        "machine (with [and-cuda] for a CUDA build); its "
                                        "provenance goes into the install record"))
        self.house_button.clicked.connect(self.start_wheelhouse)
        row.addWidget(self.house_button)
        self.body.addLayout(row)

    def _extras(self, on: bool) -> None:
        extras = [e for e in self.state.recipe.install.extras if e != AND_CUDA]
        self.set({"install.extras": ([AND_CUDA] + extras) if on else extras})

    def _links(self, text: str) -> None:
        self.state.install_find_links = text.strip()

    def _download_line(self) -> None:
        """What Install will download, said before it is pressed (UX review)."""
        self.download = QLabel("", self.content)
        self.download.setObjectName("install-download")
        self.download.setWordWrap(True)
        self.body.addWidget(self.download)
        self.wheel_edit.textChanged.connect(self._say_download)
        self.and_cuda.toggled.connect(self._say_download)
        self.links_edit.textChanged.connect(self._say_download)

    def _say_download(self, *_args: object) -> None:
        self.download.setText(download_note(self.wheel_edit.text().strip(),
                                            self.and_cuda.isChecked(),
                                            bool(self.links_edit.text().strip())))

    def sync(self) -> None:
        """Fill the fields from the recipe and the wheel the build made."""
        r = self.state.recipe
        if self.state.wheel:
            self.wheel_edit.setText(self.state.wheel)
        self.links_edit.setText(self.state.install_find_links)
        self.venv_edit.setText(r.install.venv)
        self.python_edit.setText(r.install.python)
        # the recipe's [and-cuda] follows its backend (Recipe.implied_changes), so the box
        # does too; a CPU recipe that asks for it anyway can still untick it
        on = AND_CUDA in r.install.extras
        self.and_cuda.setChecked(on)
        self.and_cuda.setEnabled(r.backend.kind == "cuda" or on)
        show_target_note(self.target_note, self.state)
        self.index.sync()
        if not self.house_edit.text().strip():
            self.house_edit.setText(configured_url(self.state))
        self._say_download()

    def isComplete(self) -> bool:
        # installing is optional: an existing venv can be verified too
        """Qt: Next unless an install runs (installing is optional)."""
        return super().isComplete() and not self.running

    @asyncSlot()
    async def start(self) -> None:
        """Run the core installer and show its events."""
        await self.run_install()

    @asyncSlot()
    async def start_wheelhouse(self) -> None:
        """Install the wheelhouse's best wheel for this machine (the core's job)."""
        url = self.house_edit.text().strip()
        if not url:
            self.say(tr("Name the team's wheelhouse first (a simple index URL or a folder)."),
                     error=True)
            return
        await self.run_install(make_job=lambda: jobs.wheelhouse_install(self.state, url))

    async def run_install(self, *, wheel_only: bool = False,
                          make_job: Callable[[], Job] | None = None) -> None:
        """Install the wheel in the field, or the job `make_job` makes; `wheel_only` (a
        rebuild into a venv that has its dependencies): replace only the TensorFlow wheel,
        resolve nothing."""
        wheel = self.wheel_edit.text().strip()
        if self.running:
            return
        if not wheel and make_job is None:
            self.status.setText(tr("Build a wheel first, or choose one."))
            return
        self.task = asyncio.current_task()
        self.install_button.setEnabled(False)
        self.house_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.completeChanged.emit()
        self.log.clear()
        self.progress.setFormat("")  # the last run's "[resolve] …" is stale now
        self.progress.setRange(0, 0)  # pip does not say how much is left: busy
        self.say(tr("Installing…"))
        try:
            if make_job is not None:
                self.job = make_job()
            elif wheel_only and self.factory is jobs.default_install:
                self.log.append_line(tr("reinstalling only the TensorFlow wheel: {python} has "
                                        "its dependencies").format(
                                            python=jobs.target_python(self.state)))
                self.job = jobs.default_install(self.state, wheel, wheel_only=True)
            else:
                self.job = self.factory(self.state, wheel)
            async for event in self.job.events():
                self.show_event(event)
        except TfWizardError as exc:
            self.say(error_text(exc), error=True)
        except asyncio.CancelledError:
            self.status.setText(tr("Cancelled."))
        finally:
            self.task = None
            self.log.flush_all()
            if self.progress.maximum() == 0:
                self.progress.setRange(0, 1)
            self.install_button.setEnabled(True)
            self.house_button.setEnabled(True)
            self.cancel_button.setEnabled(False)
            self.completeChanged.emit()

    def say(self, text: str, *, error: bool = False) -> None:
        """The status line; a failure in the error colour."""
        self.status.setText(text)
        self.status.setProperty("error", error)
        self.status.setStyleSheet("color: #b00020;" if error else "")

    def cancel(self) -> None:
        """Stop pip (the job's cancel()); the result then says "cancelled"."""
        if self.job is not None and self.running:
            self.status.setText(tr("Cancelling…"))
            self.cancel_button.setEnabled(False)
            self.job.cancel()

    def show_event(self, event: Any) -> None:
        """Show one install event in the widgets."""
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
            self.argv = list(getattr(event, "argv", ()))
        elif kind == "finished":
            result = event.result
            self.result = result
            if self.factory is jobs.default_install:  # a real install: the record keeps it
                jobs.record_install(self.state, result, self.argv)
            self.progress.setRange(0, 1)
            self.progress.setValue(1 if result.ok else 0)
            self.say(result.message, error=result.status == "failed")
            if result.ok:
                self.state.installed_python = result.python
