"""The Verify page: the probe's report, cancellable, copyable, and bundled."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWizard,
)
from qasync import asyncSlot

from tfwizard.core import session
from tfwizard.core.errors import TfWizardError
from tfwizard.core.handoff import finish_summary
from tfwizard.core.jobs import Job

from .. import jobs
from ..i18n import tr
from ..state import WizardState
from ..widgets.browse import FILE, browse_button
from ..widgets.bundle import BundleSaver
from ..widgets.summary import Details, PlainSummary
from ..widgets.verify_panel import OutputDiagnosis, VerifyPanel
from .base import PageId, RecipePage, mono
from .install import show_target_note, target_note

if TYPE_CHECKING:
    from tfwizard.core.verify.report import VerifyReport


class VerifyPage(RecipePage):
    """Verify: run the core's verification in the chosen interpreter, show its report;
    Cancel stops the probe at once (a TensorFlow import may hang)."""

    keys = ()
    show_findings = False
    scrolls = True  # the checks, the diagnosis cards, the summary: taller than 1024x700

    def __init__(self, state: WizardState, verify: jobs.VerifyFactory | None = None) -> None:
        super().__init__(state, tr("Verify"),
                         tr("Import TensorFlow in an interpreter on this machine, list its "
                            "devices, run ops on each, and explain what went wrong."))
        self.factory = verify or jobs.default_verify
        self.report: VerifyReport | None = None
        self.job: Job | None = None
        self.task: asyncio.Task[Any] | None = None
        self.target_note = target_note(self.content, "verify-target-note")
        self.body.addWidget(self.target_note)
        form = QFormLayout()
        self.python_edit = QLineEdit(self.content)
        self.python_edit.setObjectName("verify-python")
        self.python_edit.setPlaceholderText(tr("the python of the venv the wheel went into"))
        python_row = QHBoxLayout()
        python_row.addWidget(self.python_edit, 1)
        python_row.addWidget(browse_button(self.python_edit, FILE, tr("Interpreter"),
                                           lambda _p: None))
        form.addRow(tr("Interpreter:"), python_row)
        self.body.addLayout(form)
        row = QHBoxLayout()
        self.run_button = QPushButton(tr("Run verification"), self.content)
        self.run_button.setObjectName("run-verify")
        self.run_button.clicked.connect(self.run_verify)
        row.addWidget(self.run_button)
        self.cancel_button = QPushButton(tr("Cancel"), self.content)
        self.cancel_button.setObjectName("cancel-verify")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        row.addWidget(self.cancel_button)
        self.copy_button = QPushButton(tr("Copy report"), self.content)
        self.copy_button.setObjectName("copy-report")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_report)
        row.addWidget(self.copy_button)
        self.start_over_button = QPushButton(tr("Start &over"), self.content)
        self.start_over_button.setObjectName("start-over")
        self.start_over_button.setToolTip(tr("Back to the first page with this recipe, to "
                                             "change it and build another wheel"))
        self.start_over_button.clicked.connect(self.start_over)
        row.addWidget(self.start_over_button)
        self.status = QLabel("", self.content)
        self.status.setObjectName("verify-status")
        row.addWidget(self.status, 1)
        self.body.addLayout(row)
        self.panel = VerifyPanel(state, self.content)
        self.body.addWidget(self.panel)
        self.done = PlainSummary(self.content, "verify-summary")
        self.done.setVisible(False)
        self.body.addWidget(self.done)
        # the whole report as `tfwizard verify` prints it, folded: the panel says it first
        self.details = Details(self.content, tr("The full report, as the tfwizard verify "
                                                "command prints it"), "verify-details")
        self.report_view = QPlainTextEdit(self.details.body)
        self.report_view.setObjectName("verify-report")
        self.report_view.setMinimumHeight(220)
        mono(self.report_view)
        self.details.body_layout.addWidget(self.report_view)
        self.body.addWidget(self.details)
        self.output_diagnosis = OutputDiagnosis(state, self.content)
        self.body.addWidget(self.output_diagnosis)
        self.bundle = BundleSaver(state, self.content, "save-bundle-verify",
                                  reports=self._reports)
        self.body.addWidget(self.bundle)

    @property
    def running(self) -> bool:
        """A verification is under way."""
        return self.task is not None and not self.task.done()

    def sync(self) -> None:
        """The interpreter the install went into, unless one is typed already; with a
        target machine, what to run there."""
        if not self.python_edit.text():
            self.python_edit.setText(jobs.target_python(self.state))
        show_target_note(self.target_note, self.state)
        self.output_diagnosis.ran_on()  # offers the target machine when there is one
        self.bundle.sync()
        self._show_summary()

    def retranslate(self) -> None:
        """After a language switch: the report's panel and text again (the core words
        them), and the rest as every page does."""
        super().retranslate()
        if self.report is not None:
            self.show_report(self.report)
        if self.output_diagnosis.diagnoses:
            self.output_diagnosis.diagnose()

    def _show_summary(self) -> None:
        """The closing summary under the verdict: the wheel, the venv and how to use it,
        what was verified, what to run on the target machine."""
        s = self.state
        # the interpreter that was verified (it may not be the one Install used)
        python = (self.report.python if self.report is not None else "") or s.installed_python
        # the build's wheel beside the interpreter it went into, or for the target machine;
        # not beside another interpreter, as if it were installed there
        wheel = s.wheel if s.target_path or session.same_interpreter(
            python or "", s.installed_python or "") else None
        lines = finish_summary(s.recipe, wheel=wheel, python=python, report=self.report,
                               target_path=s.target_path)
        self.done.setVisible(self.report is not None and bool(lines))
        if lines:
            self.done.show_lines(lines, None)

    def _reports(self) -> dict[str, Any]:
        """The report shown here goes into the bundle when the record has none."""
        return {"verify.json": self.report.to_dict()} if self.report is not None else {}

    @asyncSlot()
    async def run_verify(self) -> None:
        """Run the verification job (the probe runs in a thread) until it ends or is
        cancelled, then show its report."""
        python = self.python_edit.text().strip()
        if self.running:
            return
        if not python:
            self.status.setText(tr("Choose the interpreter to verify."))
            return
        self.task = asyncio.current_task()
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.completeChanged.emit()
        self.status.setText(tr("Probing TensorFlow in {python}…").format(python=python))
        try:
            self.job = self.factory(self.state, python)
            async for _event in self.job.events():
                pass  # one probe, one report: the result says it all
        except TfWizardError as exc:
            self.status.setText(str(exc))
            return
        except asyncio.CancelledError:  # the window closed: events() stopped the probe
            self.status.setText(tr("Verification cancelled."))
            return
        finally:
            self.task = None
            self.run_button.setEnabled(True)
            self.cancel_button.setEnabled(False)
            self.completeChanged.emit()
        if self.job.result is not None:
            if self.factory is jobs.default_verify:  # a real report: the record keeps it
                jobs.record_verification(self.state, self.job.result)
            self.show_report(self.job.result)

    def cancel(self) -> None:
        """Stop the verification now: the probe is killed, the report says "cancelled"."""
        if self.job is not None and self.running:
            self.status.setText(tr("Cancelling…"))
            self.cancel_button.setEnabled(False)
            self.job.cancel()

    def show_report(self, report: VerifyReport) -> None:
        """Show a verification report; its panel's verdict says how it went."""
        self.report = report
        self.report_view.setPlainText(jobs.render_verify_report(report))
        self.panel.show_report(report)
        self.status.setText("")  # the panel's verdict says how it went, once
        self.copy_button.setEnabled(True)
        self._show_summary()
        self._default_button(report.ok)

    def _default_button(self, ok: bool) -> None:
        """Enter finishes after a pass; after a failure it runs the verification again
        (Finish is no longer the default: the work is not done)."""
        wizard = self.wizard()
        if wizard is None:
            return
        finish = wizard.button(QWizard.WizardButton.FinishButton)
        if not isinstance(finish, QPushButton):
            return
        if ok:
            self.run_button.setDefault(False)
            finish.setDefault(True)
        else:
            finish.setDefault(False)
            self.run_button.setDefault(True)

    def start_over(self) -> None:
        """Back to Welcome, the recipe kept, to change it and build again."""
        wizard = self.wizard()
        if wizard is None or self.running:
            return
        wizard.setStartId(int(PageId.WELCOME))
        wizard.restart()

    def copy_report(self) -> None:
        """Put the report's text on the clipboard."""
        QGuiApplication.clipboard().setText(self.report_view.toPlainText())
