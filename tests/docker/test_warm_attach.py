"""`tfwizard build --attach` on the warm path against the real engine (issue 17): the
`tfwizard build` process is killed (SIGKILL) while Bazel builds in the warm container; the
attach finds the build by its exec, follows it to the end and gives the wheel and record.
The GUI's list of running builds (its start-up question, Build history > Attach) has it too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import world
from tfwizard.cli import capture
from tfwizard.cli.context import ExitStatus
from tfwizard.core.building.warm import attach as warmattach
from tfwizard.core.building.warm.attachany import running_build_ids
from tfwizard.gui.attach import running_builds

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: the console script, as a person runs it
TFWIZARD = str(Path(sys.executable).parent / "tfwizard")


def _wait_for(what, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_attach_after_sigkill_follows_the_warm_build_to_its_wheel(tmp_path):
    recipe, prefix, client, space = world.warm_fixture(tmp_path)
    data, out = tmp_path / "data", tmp_path / "out"
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(data)}
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
        world.remove_warm(client, space, prefix)

