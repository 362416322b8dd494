"""The build exec's report (core/building/warm/bep.py): BEP and wheel checksums printed after
Bazel by the real script under sh, parsed back; the local same-bytes check."""

from __future__ import annotations

import hashlib
import json
import subprocess

from tfwizard.core.building.warm import container as warm
from tfwizard.core.building.warm.bep import BuildReport, new_mark, report_script, same_file


def _run(tmp_path, build: list[str], *, bep_events: list[dict] | None) -> tuple[int, str, str]:
    bep = tmp_path / "bep-x.json"
    if bep_events is not None:
        script = "printf '%s\\n' " + " ".join(f"'{json.dumps(e)}'" for e in bep_events)
        build = ["sh", "-c", f"{script} > {bep}; " + " ".join(build)]
    mark = new_mark()
    run = subprocess.run(["sh", "-c", report_script(warm.BUILD_SCRIPT), "sh", mark, "tag", str(bep),
                          "0", *build], capture_output=True, text=True, check=False)
    return run.returncode, mark, run.stdout


def test_the_report_carries_exit_code_bep_and_the_checksum_of_each_wheel_it_names(tmp_path):
    wheel = tmp_path / "tensorflow-2.21.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"wheel bytes")
    other = tmp_path / "not-named.whl"
    other.write_bytes(b"x")
    events = [{"id": {"namedSet": {"id": "0"}},
               "namedSetOfFiles": {"files": [{"uri": f"file://{wheel}"}]}},
              {"id": {"progress": {}}, "progress": {"stderr": "ok"}}]
    code, mark, out = _run(tmp_path, ["echo", "bazel says hi"], bep_events=events)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "bazel says hi"
    report = BuildReport.parse(lines[1:], mark)
    assert report.exit_code == 0
    assert [json.loads(x) for x in report.bep_lines] == events
    assert report.sha256 == {str(wheel): hashlib.sha256(b"wheel bytes").hexdigest()}


def test_a_failed_build_reports_its_exit_code_and_no_bep_when_it_wrote_none(tmp_path):
    code, mark, out = _run(tmp_path, ["sh", "-c", "echo partial; exit 3"], bep_events=None)
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == "partial"
    report = BuildReport.parse(lines[1:], mark)
    assert report.exit_code == 3 and report.bep_lines == [] and report.sha256 == {}


def test_same_file_needs_the_very_bytes(tmp_path):
    f = tmp_path / "a.whl"
    f.write_bytes(b"abc")
    assert same_file(f, hashlib.sha256(b"abc").hexdigest())
    assert not same_file(f, hashlib.sha256(b"abd").hexdigest())
    assert not same_file(f, None)
    assert not same_file(tmp_path / "missing.whl", hashlib.sha256(b"abc").hexdigest())
