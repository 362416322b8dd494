"""`tfwizard build --attach` on the warm path against the real engine (issue 17): the
`tfwizard build` process is killed (SIGKILL) while Bazel builds in the warm container; the
attach finds the build by its exec, follows it to the end and gives the wheel and record.
The GUI's list of running builds (its start-up question, Build history > Attach) has it too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests import world
from tests.front.front_world import TFWIZARD, Front, alive
from tfwizard.cli import capture
from tfwizard.cli.context import ExitStatus
from tfwizard.core.build import warm, warmattach
from tfwizard.core.build.attachany import running_build_ids
from tfwizard.core.build.plan import make_plan
from tfwizard.core.recipe import load_recipe
from tfwizard.gui.attach import running_builds

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _wait_for(what, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out")


@pytest.mark.parametrize("through", ["process", "front end"])
def test_attach_after_sigkill_follows_the_warm_build_to_its_wheel(tmp_path, through):
    """`through`: `tfwizard build` in its own process, or served by the front end (killing
    the client makes the server SIGKILL the command's process: the same end)."""
    world.require_docker()
    world.ensure_images()
    import docker

    workspace = world.copy_workspace(tmp_path)
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=workspace, prefix=prefix)
    data, out = tmp_path / "data", tmp_path / "out"
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(data)}
    front = Front(tmp_path / "run")
    if through == "front end":
        env = {**front.env, "TFWIZARD_DATA_DIR": str(data)}
        front.up()
    client = docker.from_env(timeout=300)
    space = warm.workspace_for(make_plan(load_recipe(recipe), recipe_dir=recipe.parent),
                               str(recipe.resolve()))
    proc = subprocess.Popen([TFWIZARD, "build", str(recipe), "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        def building() -> Path | None:
            for log in (data / "builds").glob("*/log.txt"):
                if "step build: warm exec" in log.read_text("utf-8", "replace"):
                    return log.parent
            return None

        record = _wait_for(building)
        time.sleep(2)  # Bazel is under way (the first build takes tens of seconds)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if through == "front end":
            assert "served ['build'" in front.log()
            child = front.child_pids()[-1]
            _wait_for(lambda: not alive(child), timeout=10)  # the server killed it
        left = warmattach.find_warm_builds(client, record.name)
        assert left and left[0].running, "the build should outlive its front end"
        assert left[0].build_id == record.name and left[0].workspace_key == space.key
        assert json.loads((record / "result.json").read_text())["status"] == "running"
        # the GUI's start-up question and Build history > Attach find it too (by its exec)
        assert record.name in running_build_ids(client, env=env)
        assert record.name in running_builds(env)

        status, stdout, err = capture(["build", "--attach", "--json"], env)
        assert status == ExitStatus.OK, stdout + err
        events = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
        result = [e for e in events if e.get("type") == "finished"][-1]["result"]
        assert result["status"] == "succeeded", result
        assert result["record_dir"] == str(record)
        wheel = Path(result["wheel"])
        assert wheel.parent == out and wheel.is_file() and wheel.suffix == ".whl"
        saved = json.loads((record / "result.json").read_text())
        assert saved["status"] == "succeeded" and saved["wheel"] == str(wheel)
        log = (record / "log.txt").read_text("utf-8")
        assert "re-attached to build" in log and "step build: warm exec" in log
        # the second client waited on the server for the left command: nothing built twice
        assert "Another command" in log, log[-3000:]
        assert not any(b.running for b in warmattach.find_warm_builds(client, record.name))
    finally:
        if proc.poll() is None:
            proc.kill()
        front.stop()
        world.remove_warm(client, space, prefix)

