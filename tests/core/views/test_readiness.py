"""The readiness checklist of the Welcome page (core/views/readiness.py), on real host profiles."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tfwizard.core.defaults import default_recipe
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.views.readiness import FAIL, KEYS, PASS, WARN, overall, readiness

HOSTS = Path(__file__).resolve().parent.parent.parent / "data" / "hosts"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def checks_for(name: str, kb, **docker):
    host = HostProfile.load(HOSTS / f"{name}.json")
    if docker:
        host.docker = dataclasses.replace(host.docker, **docker)
    recipe = default_recipe(host, kb)
    return host, recipe, {c.key: c for c in readiness(recipe, host, None, kb)}


def test_rows_in_order_and_nothing_before_detection(kb):
    host, recipe, checks = checks_for("ada-8.9-driver550", kb)
    assert tuple(checks) == KEYS
    assert readiness(recipe, None, None, kb) == []


@pytest.mark.parametrize(("status", "words"), [
    ("not_running", "does not answer"), ("not_installed", "not installed"),
    ("permission_denied", "`docker` group")])
def test_docker_problems_fail(kb, status, words):
    _h, _r, checks = checks_for("ada-8.9-driver550", kb, status=status, message="")
    assert checks["docker"].status == FAIL and words in checks["docker"].text
    assert overall(list(checks.values())) == FAIL


def test_rights_are_named(kb):
    _h, _r, checks = checks_for("ada-8.9-driver550", kb, rootless=True)
    assert checks["docker"].status == PASS and "rootless" in checks["docker"].text


def test_gpu_without_container_runtime_warns(kb):
    host, _r, checks = checks_for("small-laptop", kb)
    assert host.docker.nvidia_runtime is False
    expected = WARN if host.nvidia.gpus else PASS
    assert checks["nvidia_runtime"].status == expected


def test_disk_against_need(kb):
    host, recipe, _c = checks_for("small-laptop", kb)
    need = kb.platforms["memory"]["min_free_disk_gib_cuda" if recipe.is_gpu
                                  else "min_free_disk_gib_cpu"]
    for free_gib, status in ((need * 2, PASS), (need * 0.75, WARN), (need * 0.25, FAIL)):
        host.resources.disk_free_bytes = int(free_gib * 2**30)
        disk = next(c for c in readiness(recipe, host, None, kb) if c.key == "disk")
        assert disk.status == status, (free_gib, disk.text)


def test_cpus_and_ram_speak_of_jobs_and_time(kb):
    host, _r, checks = checks_for("small-laptop", kb)
    text = checks["resources"].text
    assert f"{host.resources.cpu_count} CPUs" in text and "jobs" in text and "UNVERIFIED" in text


def test_driver_cuda_against_the_recipe(kb):
    host, recipe, checks = checks_for("ada-8.9-driver550", kb)
    assert host.nvidia.cuda_driver_version in checks["driver_cuda"].text
    newer = recipe.with_changes({"cuda.version": "13.0.0"})
    row = next(c for c in readiness(newer, host, None, kb) if c.key == "driver_cuda")
    assert row.status == FAIL  # driver 550 supports CUDA 12.4: a new major needs a new driver


def test_target_row_names_the_profile(kb):
    build = HostProfile.load(HOSTS / "no-gpu-server.json")
    target = HostProfile.load(HOSTS / "h100-driver560.json")
    recipe = default_recipe(build, kb)
    row = readiness(recipe, build, target, kb, "h100.json")[-1]
    assert row.key == "target" and "h100.json" in row.text and "H100" in row.text
