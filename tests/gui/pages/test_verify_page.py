"""The Verify page: a report shown and copied, and Cancel stopping a real probe that hangs
(a python that sleeps) within a couple of seconds, leaving the page ready to run again."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWizard

from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
WAIT = 5000


def fake_python(folder: Path, name: str, body: str) -> Path:
    """A real interpreter behind a script named like a venv's python: runs `body`."""
    path = folder / name / "bin" / "python"
    path.parent.mkdir(parents=True)
    path.write_text(f"#!{sys.executable}\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def open_verify_page(make_window, **kwargs):
    window = make_window(**kwargs)
    wizard = window.wizard
    wizard.setStartId(int(PageId.VERIFY))
    wizard.restart()
    return window, wizard.verify


def test_verify_page_shows_the_report_and_copies_it(qtbot, make_window):
    from tfwizard.core.verify.job import Check, ProbeRun, VerifyFinished, VerifyReport

    class FakeVerification:  # the core.jobs protocol, as core.verify.Verification has it
        def __init__(self, state, python):
            self.python, self.result = python, None

        async def events(self):
            data = {"tensorflow": {"version": "2.21.0"}, "devices": [{"name": "/device:CPU:0"}],
                    "ops": [{"device": "/device:CPU:0", "ok": True, "value": 1.0,
                             "expected": 1.0}]}
            probe = ProbeRun("ok", self.python, 0, elapsed_s=1.5, data=data)
            self.result = VerifyReport(self.python, "cpu", "option", probe,
                                       [Check("tensorflow imports", True)])
            yield VerifyFinished(self.result)

        def cancel(self):
            raise AssertionError("nobody cancels this verification")

    window, page = open_verify_page(make_window, jobs=Jobs(verify=FakeVerification))
    page.python_edit.setText("/v/bin/python")
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.report is not None, timeout=WAIT)
    text = page.report_view.toPlainText()
    assert "2.21.0" in text and "/device:CPU:0" in text and "[ok] tensorflow imports" in text
    # said once, by the verdict (the status beside the buttons repeated it)
    assert page.status.text() == "" and "every check passed" in page.panel.verdict.text()
    assert window.wizard.button(QWizard.WizardButton.FinishButton).isDefault()
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == text
    window.wizard.setStartId(int(PageId.WELCOME))


def test_cancel_stops_a_hanging_verification_and_the_page_stays_usable(qtbot, make_window,
                                                                       tmp_path):
    """The real core verification (no fake job): the probe's interpreter sleeps, as a
    TensorFlow import that hangs would; Cancel kills it and the report says so."""
    started = tmp_path / "started"
    hanging = fake_python(tmp_path, "hangs", f"open({str(started)!r}, 'w').close()\n"
                                             "import time\ntime.sleep(300)")
    window, page = open_verify_page(make_window)
    assert not page.cancel_button.isEnabled()
    page.python_edit.setText(str(hanging))
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(started.exists, timeout=30000)
    assert page.running and page.cancel_button.isEnabled() and not page.run_button.isEnabled()
    clicked = time.monotonic()
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running, timeout=WAIT)
    assert time.monotonic() - clicked < 2.0
    assert page.status.text() == "" and page.panel.verdict.text().startswith(
        "Verification cancelled")
    assert page.report.status == "cancelled" and page.report.probe.status == "cancelled"
    assert "RESULT: CANCELLED" in page.report_view.toPlainText()
    assert page.run_button.isEnabled() and not page.cancel_button.isEnabled()

    # usable again: a second run goes to its end and replaces the report
    broken = fake_python(tmp_path, "broken", "import sys\nsys.exit(3)")
    page.python_edit.setText(str(broken))
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running and page.report.python == str(broken),
                    timeout=30000)
    assert page.report.status == "failed"
    assert page.status.text() == "" and page.panel.verdict.text().startswith(
        "TensorFlow does not work")
    window.wizard.setStartId(int(PageId.WELCOME))
