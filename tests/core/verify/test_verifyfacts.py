"""`verify` holds the installed TensorFlow's own build facts (version, build_info) against
the expectation its build kept (the same comparison as the build's wheel check) and
against this machine: each GPU covered as SASS or PTX, a driver new enough for the wheel's
CUDA. Facts the wheel does not record give no check."""

from __future__ import annotations

from pathlib import Path

from tests.core.install.test_wheelcheck import cuda_plan
from tests.core.verify.test_verify import cuda_probe, gpu_host
from tfwizard.core.install.wheelcheck import expected_of
from tfwizard.core.verify.job import ProbeRun, judge
from tfwizard.core.views.verify_panel import panel_rows

ROOT = Path(__file__).resolve().parents[3]
CCS = ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"]


def run_of(probe: dict) -> ProbeRun:
    return ProbeRun("ok", "/v/bin/python", 0, elapsed_s=1.0, data=probe)


def facts(report) -> dict[str, tuple[bool, str]]:
    return {c.key: (c.ok, c.detail) for c in report.checks if c.key.startswith("fact:")}


def probe_221(**kw) -> dict:
    probe = cuda_probe(gpus=1, cuda="12.5.1", ccs=CCS, **kw)
    probe["tensorflow"] = {"version": "2.21.0"}
    probe["build_info"]["cudnn_version"] = "9"
    return probe


def test_installed_tf_against_the_builds_expectation():
    expected = expected_of(cuda_plan(), glibc_floor="2.27")
    report = judge(run_of(probe_221()), host=gpu_host("8.6", cuda="12.8"), expected=expected)
    ok, detail = facts(report)["fact:recipe"]
    assert ok and detail.startswith("wheel check passed"), detail
    other = probe_221()
    other["tensorflow"]["version"] = "2.20.0"  # a wheel installed since, not the build's
    report = judge(run_of(other), host=gpu_host("8.6", cuda="12.8"), expected=expected)
    ok, detail = facts(report)["fact:recipe"]
    assert not ok and "version: the wheel says 2.20.0, the recipe 2.21.0" in detail
    assert not report.ok
    # without a build record there is nothing to hold it against
    assert "fact:recipe" not in facts(judge(run_of(probe_221()), host=gpu_host("8.6")))


def test_every_gpu_must_be_covered_as_sass_or_ptx():
    sass = facts(judge(run_of(probe_221()), host=gpu_host("8.6", cuda="12.8")))
    assert sass["fact:gpu:GPU 0 (NVIDIA GeForce RTX 3090)"] == (True, "SASS for it: sm_80")
    ptx = facts(judge(run_of(probe_221()), host=gpu_host("12.0", cuda="12.8")))
    ok, detail = ptx["fact:gpu:GPU 0 (NVIDIA GeForce RTX 3090)"]
    assert ok and detail.startswith("PTX only (compute_90)")
    old = facts(judge(run_of(probe_221()), host=gpu_host("5.2", cuda="12.8")))
    ok, detail = old["fact:gpu:GPU 0 (NVIDIA GeForce RTX 3090)"]
    assert not ok and detail == "neither SASS nor PTX for it in " + ", ".join(CCS)


def test_the_driver_must_run_the_wheels_cuda():
    newer = facts(judge(run_of(probe_221()), host=gpu_host("8.6", cuda="12.8")))
    assert newer["fact:driver"][0] and "supports CUDA 12.8" in newer["fact:driver"][1]
    minor = facts(judge(run_of(probe_221()), host=gpu_host("8.6", cuda="12.4")))
    assert minor["fact:driver"][0] and "minor-version compatibility" in minor["fact:driver"][1]
    probe = probe_221()
    probe["build_info"]["cuda_version"] = "13.0"
    major = judge(run_of(probe), host=gpu_host("8.6", cuda="12.4"))
    assert facts(major)["fact:driver"][0] is False and not major.ok


def test_what_the_wheel_does_not_record_gives_no_check():
    """2.22's build_info: no CUDA version, no compute capabilities."""
    probe = probe_221()
    for key in ("cuda_version", "cuda_compute_capabilities"):
        del probe["build_info"][key]
    report = judge(run_of(probe), host=gpu_host("8.6", cuda="12.8"),
                   expected=expected_of(cuda_plan()))
    assert set(facts(report)) == {"fact:recipe"}
    assert facts(report)["fact:recipe"][0]


def test_the_verify_page_shows_the_fact_checks_as_rows():
    report = judge(run_of(probe_221()), host=gpu_host("5.2", cuda="12.8"),
                   expected=expected_of(cuda_plan()))
    rows = {r.key: r for r in panel_rows(report)}
    assert rows["fact:recipe"].status == "pass"
    assert rows["fact:gpu:GPU 0 (NVIDIA GeForce RTX 3090)"].status == "fail"
    assert rows["fact:driver"].label == "driver runs the wheel's CUDA 12.5"
