"""A verification of an interpreter that does not exist says so and what to do, and
speaks of no build and no diagnosis it does not have (UX review, Verify)."""

from __future__ import annotations

from tfwizard.core.verify.job import render_report, verify
from tfwizard.core.views.verify_panel import verdict_text


def test_a_missing_interpreter_says_install_first(tmp_path):
    python = tmp_path / "venv" / "bin" / "python"
    report = verify(python, expect="cpu", timeout=5)
    assert not report.ok and report.diagnoses == []
    text = render_report(report)
    assert "is_built_with_cuda" not in text, text  # no "- build (… = None)" row
    assert "diagnosis" not in text.lower(), text
    last = text.splitlines()[-1]
    assert last.startswith("RESULT: FAILED, ") and str(python) in last, last
    assert "install the wheel first" in last
    assert verdict_text(report) == last.removeprefix("RESULT: FAILED, ")


def test_a_failure_without_diagnosis_points_at_the_checks(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\nexit 3\n")
    python.chmod(0o755)
    report = verify(python, expect="cpu", timeout=20)
    assert not report.ok and report.diagnoses == []
    assert render_report(report).splitlines()[-1] == "RESULT: FAILED, see the checks above."
    assert "diagnosis" not in verdict_text(report)
