"""`tfwizard build` on the warm path (issue 17, core/building/warm/run.py) against the real engine
and the TF-shaped fixture: the record, result.json and wheel as a cold build gives them,
the container reused with configure skipped, a failed rebuild without a wheel, cancel.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.events import Finished
from tfwizard.core.building.warm import container as warm
from tfwizard.core.building.warm.run import WarmRunner, cold_reason
from tfwizard.core.jobs import run_blocking
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("warmbuild")
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    workspace = world.copy_workspace(base)
    recipe = world.fixture_recipe(base / "r.toml", workspace=workspace, prefix=prefix)
    client = docker.from_env(timeout=300)
    plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    space = warm.workspace_for(plan, str(recipe.resolve()))
    yield SimpleNamespace(base=base, workspace=workspace, recipe=recipe, client=client,
                          plan=plan, space=space, prefix=prefix, data=base / "data")
    world.remove_workspace(client, space)
    for vol in client.volumes.list(filters={"label": LABEL}):
        if vol.name.startswith(prefix):
            vol.remove(force=True)
    client.close()


def _build(wb, out: Path, *extra: str) -> tuple[int, list[dict], str]:
    status, stdout, err = capture(["build", str(wb.recipe), "--out", str(out), "--json",
                                   *extra],
                                  env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(wb.data)})
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return int(status), events, err


def _record_log(events: list[dict]) -> str:
    done = [e for e in events if e.get("type") == "finished"][-1]
    record = Path(done["result"]["record_dir"])
    return (record / "log.txt").read_text("utf-8")


def test_build_is_warm_by_default_and_the_rebuild_reuses_it(wb):
    status, events, err = _build(wb, wb.base / "out1")
    assert status == 0, err[-2000:]
    done = [e for e in events if e.get("type") == "finished"][-1]["result"]
    assert done["status"] == "succeeded" and done["wheel"], done
    wheel = Path(done["wheel"])
    assert wheel.parent == wb.base / "out1" and wheel.name.startswith("tensorflow_cpu-")
    result_json = json.loads((Path(done["record_dir"]) / "result.json").read_text("utf-8"))
    assert result_json["status"] == "succeeded" and result_json["wheel"] == str(wheel)
    assert result_json["bazel_exit"] == "SUCCESS"  # read from this build's own BEP
    box = wb.client.containers.get(wb.space.container_name)
    assert box.status == "running"  # the container stays up for its idle timeout
    first_id = box.id
    wb.first_sha = _sha(wheel)

    status, events, err = _build(wb, wb.base / "out2")
    assert status == 0, err[-2000:]
    done = [e for e in events if e.get("type") == "finished"][-1]["result"]
    assert done["status"] == "succeeded"
    log = _record_log(events)
    assert "reused" in log and warm.SKIP_LINE in log, log[-3000:]
    assert wb.client.containers.get(wb.space.container_name).id == first_id
    assert _sha(Path(done["wheel"])) == wb.first_sha  # a no-op rebuild: the same wheel


def test_failed_rebuild_gives_no_wheel(wb):
    kernel = next(wb.workspace.rglob("*.cc"))
    before = kernel.read_text("utf-8")
    kernel.write_text(before + "\nthis is not C++;\n", "utf-8")
    try:
        status, events, _err = _build(wb, wb.base / "out-failed")
    finally:
        kernel.write_text(before, "utf-8")
    assert status != 0
    done = [e for e in events if e.get("type") == "finished"][-1]["result"]
    assert done["status"] == "failed" and not done["wheel"], done
    assert not list((wb.base / "out-failed").glob("*.whl"))


def test_fresh_is_the_cold_build(wb):
    status, events, err = _build(wb, wb.base / "out-fresh", "--fresh")
    assert status == 0, err[-2000:]
    log = _record_log(events)
    assert "warm build container" not in log and "step fetch" not in log
    assert "step configure:" in log  # the cold runner's own steps


def test_cancel_stops_the_warm_build_and_records_it(wb):
    recipe = world.fixture_recipe(wb.base / "r.toml", workspace=wb.workspace,
                                  prefix=wb.prefix,
                                  bazel_flags=("--action_env=TFW_FIXTURE_SLEEP=120",))
    plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    assert cold_reason(plan) is None
    runner = WarmRunner(plan, recipe_id=str(recipe.resolve()), out_dir=wb.base / "out-c",
                        cancel_grace_s=8.0, data_root=wb.data)
    t0: list[float] = []

    def cancel_while_sleeping() -> None:
        try:
            world.wait_for_sleeper(wb.client, wb.space.container_name)
        except AssertionError:
            return  # t0 stays short: the assertion below says so
        t0.append(time.monotonic())
        runner.cancel()

    def on_event(event):
        if isinstance(event, Finished):
            t0.append(time.monotonic())

    threading.Thread(target=cancel_while_sleeping, daemon=True).start()
    result = run_blocking(runner, on_event)
    assert result.status == "cancelled", result
    assert len(t0) == 2 and t0[1] - t0[0] < 20, t0
    saved = json.loads((Path(result.record_dir) / "result.json").read_text("utf-8"))
    assert saved["status"] == "cancelled" and not saved.get("wheel")
    assert not world.sleeper_running(wb.client, wb.space.container_name)  # the action stopped
    # the container and its server stay (warm) for the next build
    assert wb.client.containers.get(wb.space.container_name).status == "running"
