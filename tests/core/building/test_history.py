"""Build history and the cost estimate, from record folders written by the record code the
runner uses, holding real logs of fixture builds (tests/data/logs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.report import cost, history
from tfwizard.core.building.run.progress import BuildStats, cache_summary
from tfwizard.core.building.run.record import BuildRecord
from tfwizard.core.errors import UsageError
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "data" / "logs"
HOST = ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver550.json"


def plan_of(recipe: str):
    kb = load_knowledge()
    host = HostProfile.load(HOST)
    return kb, host, make_plan(load_recipe(ROOT / "recipes" / recipe), build_host=host,
                               target_host=host, kb=kb)


def write_record(root: Path, build_id: str, plan, *, status: str, log: str,
                 elapsed_s: float = 0.0, wheel: str | None = None, cached: int = 0):
    """A record as the runner leaves it: recipe-less, plan.json, log.txt, result.json."""
    record = BuildRecord.create(build_id, root=root)
    record.write_plan(plan.to_json())
    shutil.copy(LOGS / log, record.log_path)
    if status != "running":
        stats = BuildStats(processes=100, process_kinds={"internal": 2,
                                                         "disk cache hit": cached,
                                                         "processwrapper-sandbox": 98 - cached})
        summary = cache_summary(stats, disk_cache=True, remote_cache=False)
        assert summary is not None
        record.write_result({"build_id": build_id, "status": status,
                             "record_dir": str(record.path), "wheel": wheel,
                             "message": "m", "elapsed_s": elapsed_s, "actions": 100,
                             "cache": summary.to_dict()})
    return record


def test_history_lists_newest_first_with_figures(tmp_path):
    _kb, _host, plan = plan_of("tf221-cpu-portable.toml")
    write_record(tmp_path, "20260101-100000-aaaaaa", plan, status="failed",
                 log="fixture-break.log.txt", elapsed_s=95)
    write_record(tmp_path, "20260102-100000-bbbbbb", plan, status="succeeded",
                 log="fixture-cold.log.txt", elapsed_s=7200, wheel="/w/tf.whl")
    builds = history.history(root=tmp_path)
    assert [b.build_id for b in builds] == ["20260102-100000-bbbbbb", "20260101-100000-aaaaaa"]
    ok = builds[0]
    assert ok.status == "succeeded" and ok.elapsed_s == 7200 and ok.wheel == "/w/tf.whl"
    assert ok.release == "2.21.0" and ok.backend == "cpu" and ok.jobs == cost.plan_jobs(plan)
    assert "98 ran here" in ok.cache_text
    assert ok.started is not None and not ok.watched


def test_a_running_build_cannot_be_deleted_an_ended_one_can(tmp_path):
    _kb, _host, plan = plan_of("tf221-cpu-portable.toml")
    write_record(tmp_path, "20260101-100000-aaaaaa", plan, status="running",
                 log="fixture-cold.log.txt")
    write_record(tmp_path, "20260102-100000-bbbbbb", plan, status="failed",
                 log="fixture-break.log.txt", elapsed_s=60)
    running, failed = sorted(history.history(root=tmp_path), key=lambda b: b.build_id)
    assert running.running and running.attachable
    with pytest.raises(UsageError):
        history.delete_build(running)
    assert running.path.is_dir()
    history.delete_build(failed)
    assert not failed.path.exists()


def test_a_watched_build_is_not_attachable(tmp_path):
    _kb, _host, plan = plan_of("tf221-cpu-portable.toml")
    record = write_record(tmp_path, "20260101-100000-aaaaaa", plan, status="running",
                          log="fixture-cold.log.txt")
    assert record.lock()
    try:
        # another open file description: flock says "taken", as for another process
        assert history.summarize(BuildRecord(record.path)).watched
    finally:
        record.unlock()
    assert history.summarize(BuildRecord(record.path)).attachable


def test_the_estimate_is_unverified_until_this_machines_records_calibrate_it(tmp_path):
    kb, host, plan = plan_of("tf221-cpu-portable.toml")
    model = cost.build_cost(kb, host, plan)
    assert not model.verified
    assert any(a.startswith("UNVERIFIED") for a in model.assumptions)
    jobs = cost.plan_jobs(plan)
    assert jobs and model.jobs == jobs
    # one cold build of two hours, one mostly cached build of a minute (ignored)
    write_record(tmp_path, "20260102-100000-bbbbbb", plan, status="succeeded",
                 log="fixture-cold.log.txt", elapsed_s=7200, wheel="/w/a.whl")
    write_record(tmp_path, "20260103-100000-cccccc", plan, status="succeeded",
                 log="fixture-cached.log.txt", elapsed_s=60, wheel="/w/b.whl", cached=90)
    past = history.history(root=tmp_path)
    calibrated = cost.build_cost(kb, host, plan, past)
    assert calibrated.verified
    assert calibrated.calibrated_from == ("20260102-100000-bbbbbb",)
    assert calibrated.hours == pytest.approx(2.0, abs=0.01)  # the same plan takes as long
    lines = {ln.key: ln.text for ln in cost.plain_summary(
        plan, calibrated, wheel_dir=None, builds_dir=tmp_path)}
    assert "UNVERIFIED" not in lines["time"] and "2 h 00 min" in lines["time"]
    assert "TensorFlow 2.21.0" in lines["versions"] and "CPU only" in lines["targets"]


def test_a_cuda_summary_names_versions_targets_and_sizes(tmp_path):
    kb, host, plan = plan_of("tf220-cuda-h100-from-gpuless-server.toml")
    found = cost.build_cost(kb, host, plan)
    lines = {ln.key: ln.text for ln in cost.plain_summary(
        plan, found, wheel_dir=tmp_path / "out", builds_dir=tmp_path)}
    assert "CUDA 12.5.1 / cuDNN 9.3.0" in lines["versions"]
    assert "sm_90" in lines["targets"]
    assert "UNVERIFIED estimate" in lines["time"]
    assert found.download_gib > cost.build_cost(kb, host, plan_of(
        "tf221-cpu-portable.toml")[2]).download_gib
    assert lines["wheel"] == str(tmp_path / "out")
    assert lines["steps"].startswith("prepare the image → fetch")
