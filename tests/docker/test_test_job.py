"""`bazel test` as a long job (core/testloop/job.py, cli/test.py) against the real engine
and the fixture workspace's tests: live log lines and counts read from the BEP as Bazel
writes it, cancel (Bazel's server stays up), the record's status, and `tfwizard test
--attach` following a run whose `tfwizard test` process was SIGKILLed.

Tests are slowed down with Bazel's own `--run_under` (a `sleep` before the test binary).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.docker import kit
from tfwizard.cli import capture
from tfwizard.core.building.warm import container as warm
from tfwizard.core.testloop.job import TestJob
from tfwizard.core.testloop.run import parse_test_events

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PASSING = "//tensorflow/core:reduction_ops_test"
FLAKY = "//tensorflow/core:random_uniform_op_test"
FAILING = kit.FAILING_TESTS[0]


def sleepy(seconds: int) -> str:
    """A --run_under that sleeps before each test (a new value: the tests run again)."""
    return f"--run_under=/bin/sh -c 'sleep {seconds}; exec \"$0\" \"$@\"'"


@pytest.fixture(scope="module")
def tj(warm_test_world, tmp_path_factory):
    return kit.data_dir(warm_test_world, tmp_path_factory, "testjob")


def _box(tj) -> warm.WarmContainer:
    box = warm.WarmContainer(tj.client, tj.plan, tj.space, idle_s=900)
    box.ensure()
    return box


def _run(job: TestJob, on_event=None) -> list:
    events: list = []

    async def main() -> None:
        async for event in job.events():
            events.append((time.monotonic(), event))
            if on_event is not None:
                on_event(event)

    asyncio.run(main())
    return events


def test_live_log_and_counts_come_while_bazel_test_runs(tj):
    folder = tj.data / "tests" / "live"
    job = TestJob.start(_box(tj), [PASSING, FLAKY, FAILING], gpu=False, record_dir=folder,
                        flags=[sleepy(3)])
    events = _run(job)
    end = events[-1][0]
    assert events[-1][1].type == "finished"
    # Bazel's own lines arrived seconds before the end, not all at once after it
    early = [e for t, e in events if e.type == "log" and end - t > 2.0]
    assert any("Found 3 test targets" in line for e in early for line in e.lines), events
    # counts from the BEP while the tests still ran: all three known, none finished
    waiting = [e for t, e in events if e.type == "test-progress" and end - t > 2.0]
    assert any(e.total == 3 and e.left == 3 for e in waiting), waiting
    final = [e for _t, e in events if e.type == "test-progress"][-1]
    assert (final.passed, final.failed, final.flaky, final.left) == (1, 1, 1, 0)
    result = job.result
    assert result is not None and result.status == "failed" and not result.ok
    by_label = {t.label: t for t in result.run.tests}
    assert by_label[FLAKY].status == "FLAKY" and by_label[FLAKY].attempts == 2
    spec = json.loads((folder / "job.json").read_text("utf-8"))
    assert spec["status"] == "failed" and spec["targets"] == [PASSING, FLAKY, FAILING]
    assert json.loads((folder / "result.json").read_text("utf-8"))["exit_name"] == \
        "TESTS_FAILED"
    assert "AssertionError" in (
        folder / "tests/tensorflow/python/kernel_tests/matmul_op_test/test.log").read_text()
    assert "Found 3 test targets" in (folder / "log.txt").read_text("utf-8")
    # followed incrementally: the same results as a parse of the whole BEP file, and each
    # byte of the output and BEP read once (plus a size line per file and poll), not at
    # every 0.25 s poll as before
    bep = (folder / "bep.json").read_bytes()
    assert parse_test_events(bep.decode("utf-8").splitlines()) == (
        result.run.tests, result.run.exit_name)
    polls = sum(1 for _t, e in events if e.type != "finished")
    log_bytes = len((folder / "log.txt").read_bytes())  # tagged: more than Bazel's output
    assert len(bep) < job.bytes_read < len(bep) + log_bytes + 40 * (polls + 100)


def test_cancel_stops_bazel_test_and_keeps_the_server(tj):
    box = _box(tj)
    job = TestJob.start(box, [PASSING], gpu=False, record_dir=tj.data / "tests" / "cancel",
                        flags=[sleepy(120)])
    asked: list[float] = []

    def on_event(event) -> None:
        if event.type == "test-progress" and event.total and not asked:
            asked.append(time.monotonic())
            job.cancel()

    events = _run(job, on_event)
    assert asked and events[-1][0] - asked[0] < 15, "cancel took too long"
    assert job.result is not None and job.result.status == "cancelled"
    assert job.result.run.exit_name == "INTERRUPTED"
    spec = json.loads((tj.data / "tests/cancel/job.json").read_text("utf-8"))
    assert spec["status"] == "cancelled"
    # the next run finds Bazel's server up (a new one would say it is starting)
    again = TestJob.start(_box(tj), [PASSING], gpu=False, record_dir=tj.data / "tests" / "next")
    lines = [ln for _t, e in _run(again) if e.type == "log" for ln in e.lines]
    assert any("Analyzed" in ln for ln in lines), lines
    assert not any("Starting local Bazel server" in ln for ln in lines), lines
    assert again.result is not None and again.result.ok


def test_attach_after_the_cli_process_was_killed(tj):
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tj.data / "attach")}
    cli = subprocess.Popen(
        [sys.executable, "-m", "tfwizard", "test", str(tj.recipe), PASSING, FAILING,
         f"--bazel-opt={sleepy(10)}"], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        assert cli.stderr is not None
        deadline = time.monotonic() + 240
        for line in cli.stderr:  # the counts line: the tests are under way
            if "tests 0/2" in line or time.monotonic() > deadline:
                break
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
    finally:
        if cli.poll() is None:
            cli.kill()
    folders = list((tj.data / "attach" / "tests").iterdir())
    assert len(folders) == 1
    assert json.loads((folders[0] / "job.json").read_text("utf-8"))["status"] == "running"
    status, out, err = capture(["test", str(tj.recipe), "--attach", "--json"], env_vars=env)
    assert int(status) == 1, err[-3000:]
    run = json.loads(out)
    assert {t["label"]: t["status"] for t in run["tests"]} == {
        PASSING: "PASSED", FAILING: "FAILED"}
    assert run["record_dir"] == str(folders[0])
    assert json.loads((folders[0] / "job.json").read_text("utf-8"))["status"] == "failed"
    log = (folders[0] / "log.txt").read_text("utf-8")
    # the lines the killed process had logged are not logged twice
    assert log.count("Found 2 test targets") == 1 and "Executed 2 out of 2 tests" in log
