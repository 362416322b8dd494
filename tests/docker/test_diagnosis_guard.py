"""A diagnosis that fails (a broken catalogue, a log nobody foresaw) never loses the build:
the outcome, the wheel and result.json stand, and the log says the diagnosis failed and why.

The scanner is replaced by name with one that raises; the builds are real (busybox in
this machine's engine), one that makes a wheel and one that fails."""

from __future__ import annotations

import json

import pytest

from tests.docker import kit
from tfwizard.core.building.run import diagnoses
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.diagnosis import build as diagnose

pytestmark = [pytest.mark.docker]


@pytest.fixture(scope="module")
def fw(tmp_path_factory):
    yield from kit.docker_world(tmp_path_factory, "diagguard")


def _broken_scanner(stream, *, exit_code=None):
    raise ValueError("catalogue entry 'x' has no patterns")


def _broken_matcher():
    raise ValueError("catalogue entry 'x' has no patterns")


@pytest.mark.parametrize(("script", "status"), [
    (kit.make_wheel_script(), "succeeded"),
    ("echo 'ERROR: compiling failed'; exit 1", "failed"),
])
def test_a_failing_diagnosis_keeps_the_result(fw, tmp_path, monkeypatch, script, status):
    # a failed build's scan, and a succeeded build's (the warnings' patterns only)
    # where the runner's diagnosis looks it up (it imports the name)
    monkeypatch.setattr(diagnoses, "diagnose_stream", _broken_scanner)
    monkeypatch.setattr(diagnose, "_warning_matcher", _broken_matcher)
    plan = kit.busybox_plan(tmp_path, script, prefix=fw.prefix)
    out = tmp_path / "out"
    runner = BuildRunner(plan, out_dir=out, data_root=tmp_path, client=fw.client)
    fw.builds.append(runner.build_id)
    events = kit.run(runner)
    assert events[-1].type == "finished"
    result = events[-1].result
    assert result.status == status, result.message
    assert result.findings == ()
    if status == "succeeded":
        assert result.wheel and (out / "t-1-py3-none-any.whl").is_file()
    said = [line for e in events if e.type == "log" for line in e.lines
            if "diagnosis failed" in line]
    assert said and "ValueError: catalogue entry 'x' has no patterns" in said[0], said
    assert runner.record is not None
    saved = json.loads((runner.record.path / "result.json").read_text())
    assert saved["status"] == status  # not "abandoned"
    assert "the log's diagnosis failed (ValueError" in (runner.record.path / "log.txt").read_text()
    assert kit.leftovers(fw.client, runner.build_id) == []
