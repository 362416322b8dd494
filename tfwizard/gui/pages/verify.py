"""The Verify page: the probe's report, cancellable, copyable, and bundled."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
)
from qasync import asyncSlot

from tfwizard.core.errors import TfWizardError

from .. import jobs
from ..i18n import tr
from ..state import WizardState
from ..widgets.bundle import BundleSaver
from .base import RecipePage, mono
from .build import unavailable_banner


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
