"""`tfwizard advise` on the machines of issue 22 (tests/core/advise_hosts.py).

Each machine is given twice: as its saved profile (tests/data/hosts/<name>.json) and as a
profile detected afresh by the real probes from the machine's fake inputs and written
as `tfwizard detect --json` writes it (`HostProfile.to_json()`). Both must give the same
advice. The expected verdicts, reasons and fixes are the issue's, with the facts written
out from their sources in tests/core/test_advise.py.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.cli.test_i18n_cli import PSEUDO, ZH, check_marked
from tests.core.advise_hosts import HOSTS, MACHINES, detect
from tfwizard.cli import ExitStatus, capture
from tfwizard.core import i18n

EN = {"TFWIZARD_LANG": "en"}


def run(argv: list[str], extra: dict[str, str] | None = None):
    return capture(["advise", *argv], {**os.environ, **EN, **(extra or {})})


#: machine -> (options, verdict, error codes, exit status, texts the output must hold)
CASES: dict[str, tuple[list[str], str, list[str], ExitStatus, list[str]]] = {
    "rtx4090-driver550-py311": (
        ["--release", "2.18.0", "--intent", "gpu"], "official", [], ExitStatus.OK,
        ["Install: /usr/bin/python3.11 -m pip install 'tensorflow[and-cuda]==2.18.0'",
         "INFO GPU_COVERED: GPU 0 (NVIDIA GeForce RTX 4090) runs the wheel's sm_89 cubin.",
         "    - GPU 0 (NVIDIA GeForce RTX 4090) is CC 8.9; the 2.18.0 wheel carries SASS "
         "sm_60, sm_70, sm_80, sm_89, sm_90 and PTX compute_90."]),
    "rtx5090-driver570-py312": (
        ["--release", "2.18.0", "--intent", "gpu"], "build", ["GPU_PTX_JIT_FAILS"],
        ExitStatus.ERROR,
        ["30 minutes or longer", "CUDA_ERROR_INVALID_PTX",
         "    - sm_120 needs CUDA 12.8 or newer to compile; TensorFlow 2.18.0's hermetic CUDA "
         "list ends at 12.6.1.",
         'cuda.version = "12.8.1", cuda.compute_capabilities = ["compute_120"], '
         'toolchain.clang = "21", cuda.compiler = "clang"']),
    "celeron-j1900-no-avx": (
        ["--intent", "cpu"], "build", ["CPU_FEATURE_MISSING"], ExitStatus.ERROR,
        ["ERROR CPU_FEATURE_MISSING: ", 'backend.kind = "cpu"']),
    "centos7-glibc217": (
        ["--release", "2.21.0", "--intent", "cpu"], "fixable", ["GLIBC_TOO_OLD"],
        ExitStatus.ERROR, ["ERROR GLIBC_TOO_OLD: ", "(tensorflow-cpu==2.20.0)"]),
    "debian13-py313": (
        ["--release", "2.18.0", "--intent", "cpu"], "fixable", ["PYTHON_NOT_PUBLISHED"],
        ExitStatus.ERROR,
        ["    - Python 3.13 wheels are published by TensorFlow 2.20.0, 2.21.0.",
         "(tensorflow-cpu==2.21.0)"]),
    "rtx3060-driver470": (
        ["--release", "2.18.0", "--intent", "gpu"], "fixable", ["DRIVER_TOO_OLD"],
        ExitStatus.ERROR, ["ERROR DRIVER_TOO_OLD: "]),
}


@pytest.fixture(scope="module")
def detected(tmp_path_factory) -> dict[str, Path]:
    """Each machine's profile, detected now and saved as `tfwizard detect --json` saves it."""
    folder = tmp_path_factory.mktemp("detected")
    out = {}
    for name in MACHINES:
        work = folder / name
        work.mkdir()
        path = folder / f"{name}.json"
        path.write_text(detect(name, work).to_json() + "\n", encoding="utf-8")
        out[name] = path
    return out


def test_every_machine_of_the_issue_has_a_case():
    assert set(CASES) == set(MACHINES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verdict_and_reasons_of_each_machine(name, detected):
    options, verdict, errors, status, texts = CASES[name]
    answers = []
    for profile in (HOSTS / f"{name}.json", detected[name]):
        where = ["--target", str(profile), "--host", str(profile)]
        code, out, err = run([*where, *options, "--json"])
        assert code == status, err
        advice = json.loads(out)
        assert advice["verdict"] == verdict
        assert [f["code"] for f in advice["findings"] if f["severity"] == "error"] == errors
        assert advice["on_target"] is True
        answers.append(advice)
        code, out, err = run([*where, *options])
        assert code == status and err == ""
        assert out.startswith(f"Verdict: {verdict} (")
        assert advice["summary"] in out and "the target machine" in out
        for text in texts:
            assert text in out, out
        for finding in advice["findings"]:  # every reason, with its evidence and fixes
            assert f" {finding['code']}: {finding['message']}" in out
            for sentence in finding["evidence"]:
                assert f"    - {sentence}\n" in out
            for fix in finding["fixes"]:
                assert f"    fix: {fix['label']}" in out
        if errors:
            assert f"Reasons ({len([f for f in advice['findings'] if f['severity'] != 'info'])}):" \
                in out
    saved, fresh = answers
    assert saved == fresh  # the saved profiles are what detection gives today


def test_the_driver_too_old_case_offers_both_fixes():
    profile = str(HOSTS / "rtx3060-driver470.json")
    code, out, _err = run(["--host", profile, "--release", "2.18.0", "--json"])
    assert code == ExitStatus.ERROR
    advice = json.loads(out)
    (driver,) = [f for f in advice["findings"] if f["code"] == "DRIVER_TOO_OLD"]
    assert {fix["kind"] for fix in driver["fixes"]} >= {"driver", "build"}
    assert advice["on_target"] is False and "this machine" in advice["summary"]


def test_options_reach_the_advice():
    debian = str(HOSTS / "debian13-py313.json")
    # the same machine with a Python 2.18 was published for: the wheel serves
    code, out, _err = run(["--host", debian, "--release", "2.18", "--python", "3.12",
                           "--intent", "cpu", "--json"])
    assert code == ExitStatus.OK
    advice = json.loads(out)
    assert (advice["verdict"], advice["release"], advice["python"]) == ("official", "2.18.0",
                                                                       "3.12")
    assert advice["requirement"] == "tensorflow-cpu==2.18.0"
    # your own changes: a build whatever the machine
    code, out, _err = run(["--host", debian, "--intent", "changes", "--json"])
    assert code == ExitStatus.ERROR
    advice = json.loads(out)
    assert advice["verdict"] == "build" and "LOCAL_CHANGES" in [
        f["code"] for f in advice["findings"]]
    # no release given: the newest whose wheel serves, said so
    code, out, _err = run(["--host", str(HOSTS / "centos7-glibc217.json"), "--intent", "cpu"])
    assert code == ExitStatus.OK
    assert "TensorFlow 2.20.0 (the newest whose official wheel serves)" in out
    assert "INFO RELEASE_CHOSEN: " in out


def test_usage_errors():
    profile = str(HOSTS / "rtx4090-driver550-py311.json")
    code, _out, err = run(["--host", profile, "--release", "2.99.0"])
    assert code == ExitStatus.USAGE and "2.99.0" in err
    code, _out, err = run(["--host", profile, "--target", "/nonexistent/t.json"])
    assert code == ExitStatus.USAGE and "no such host profile" in err
    code, _out, err = run(["--host", profile, "--intent", "fast"])
    assert code == ExitStatus.USAGE


def test_help_documents_the_exit_status():
    code, out, _err = run(["--help"])
    assert code == ExitStatus.OK
    assert re.search(r"Exit status: 0 the official wheel serves", out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_text_is_translated(name):
    options = CASES[name][0]
    profile = str(HOSTS / f"{name}.json")
    code, out, err = run(["--host", profile, "--target", profile, *options], PSEUDO)
    assert code == CASES[name][3]
    check_marked(out + err)
    assert i18n.language() == "en"
    code, out, err = run(["--host", profile, *options], ZH)
    assert code == CASES[name][3]
    assert out.startswith("结论：") or out.startswith("结论:"), out[:200]
