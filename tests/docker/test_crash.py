"""Crash safety, re-attaching, cancel races and two builds at once, on the real engine.

The front end is killed with SIGKILL in a separate process: the record must hold every
line it received, the container must run on, and `tfwizard build --attach` must replay
the record, follow the container from the first line the record lacks, and finish the
build (wheel copied) - or report it, when it ended meanwhile. LINES_LOST counts lines
missing or doubled in a record against the container's own output (must stay 0)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
import venv
from pathlib import Path

import pytest

from tests import world
from tests.core.install.test_install import make_wheel
from tests.docker import kit
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import OUTPUT_USER_ROOT, SRC, Step
from tfwizard.core.building.run.record import read_log
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.errors import UsageError
from tfwizard.core.paths import LABEL

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
LINES_LOST: list[int] = []

#: a front end of its own (a separate process) printing every event as JSON
DRIVER = r"""
import asyncio, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.docker import kit
from tfwizard.core.building.run.runner import BuildRunner
tmp, out, prefix, script = Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5]
plan = kit.busybox_plan(tmp, script, prefix=prefix)
runner = BuildRunner(plan, out_dir=out, data_root=tmp / "data")
async def main():
    async for event in runner.events():
        print(json.dumps(event.to_dict()), flush=True)
asyncio.run(main())
"""


def counted(n: int, wheel: bool = True) -> str:
    """sh printing `line i` (stdout) and `err i` (stderr), one pair per 0.2 s, then a wheel."""
    script = (f"i=0; while [ $i -lt {n} ]; do i=$((i+1)); echo line $i; echo err $i >&2; "
              "sleep 0.2; done")
    return script + ("; " + kit.make_wheel_script() if wheel else "")


@pytest.fixture(scope="module")
def cw(tmp_path_factory):
    yield from kit.docker_world(tmp_path_factory, "crash")


def _start_front_end(cw, tmp_path: Path, script: str):
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(ROOT), str(tmp_path),
                             str(tmp_path / "out"), cw.prefix, script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc


def _read_until(proc, stdout_lines: int) -> tuple[str, Path, list[str]]:
    """Events from the front end until it has printed `stdout_lines` container lines."""
    record, got = None, []
    assert proc.stdout is not None
    for raw in proc.stdout:
        event = json.loads(raw)
        if event["type"] == "artifact" and event["kind"] == "record":
            record = Path(event["path"])
        if event["type"] == "log" and event["channel"] == "stdout":
            got.extend(event["lines"])
            if len(got) >= stdout_lines:
                break
    assert record is not None
    return record.name, record, got


def _killed_after(proc, stdout_lines: int) -> tuple[str, Path, list[str]]:
    """_read_until, then SIGKILL the front end (never leaving it running)."""
    try:
        found = _read_until(proc, stdout_lines)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    return found


def _step_lines(record: Path, step: str = "build") -> dict[str, list[str]]:
    """The record's stdout/stderr lines of the last run of `step`."""
    out: dict[str, list[str]] = {"stdout": [], "stderr": []}
    for channel, text in read_log(record / "log.txt"):
        if channel == "tfwizard" and text.startswith(f"step {step}: "):
            out = {"stdout": [], "stderr": []}
        elif channel in out:
            out[channel].append(text)
    return out


def _container_lines(container) -> dict[str, list[str]]:
    def split(data: bytes) -> list[str]:
        return data.decode().splitlines()

    return {"stdout": split(container.logs(stdout=True, stderr=False)),
            "stderr": split(container.logs(stdout=False, stderr=True))}


def _lost(record_lines: dict[str, list[str]], truth: dict[str, list[str]]) -> int:
    """Lines missing from, or extra in, the record compared with the container's output."""
    lost = 0
    for ch in ("stdout", "stderr"):
        a, b = record_lines[ch], truth[ch]
        lost += abs(len(a) - len(b)) + sum(x != y for x, y in zip(a, b, strict=False))
    return lost


def test_sigkill_of_the_front_end_loses_no_line_and_attach_follows_to_the_wheel(cw, tmp_path):
    proc = _start_front_end(cw, tmp_path, counted(50))
    build_id, record, got = _killed_after(proc, 10)
    cw.builds.append(build_id)
    containers = cw.client.containers.list(filters={"label": f"{LABEL}.build={build_id}"})
    assert [c.labels[f"{LABEL}.step"] for c in containers] == ["build"]  # still running
    step = containers[0]
    # the record holds every line the front end received: a prefix of the container's output
    on_disk = _step_lines(record)
    truth = _container_lines(step)
    assert on_disk["stdout"][:len(got)] == got
    for ch in ("stdout", "stderr"):
        assert on_disk[ch] == truth[ch][:len(on_disk[ch])], ch
    assert json.loads((record / "result.json").read_text())["status"] == "running"

    status, out, err = capture(["build", "--attach", "--json"],
                               env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")})
    assert status == ExitStatus.OK, err + out[-3000:]
    events = [json.loads(line) for line in out.splitlines()]
    replayed = [e for e in events if e["type"] == "log"]
    assert replayed[0]["n"] == 1  # the history first, from line 1
    result = [e for e in events if e["type"] == "finished"][-1]["result"]
    assert result["status"] == "succeeded" and result["build_id"] == build_id
    assert Path(result["wheel"]) == tmp_path / "out" / "t-1-py3-none-any.whl"
    final = _step_lines(record)
    expected = {"stdout": [f"line {i}" for i in range(1, 51)],
                "stderr": [f"err {i}" for i in range(1, 51)]}
    LINES_LOST.append(_lost(final, expected))
    assert final == expected
    saved = json.loads((record / "result.json").read_text())
    assert saved["status"] == "succeeded"
    assert kit.leftovers(cw.client, build_id) == []


def test_attach_to_a_build_that_ended_meanwhile_reports_it_and_copies_the_wheel(cw, tmp_path):
    proc = _start_front_end(cw, tmp_path, counted(15))
    build_id, record, _got = _killed_after(proc, 3)
    cw.builds.append(build_id)
    container = cw.client.containers.list(all=True,
                                          filters={"label": f"{LABEL}.build={build_id}"})[0]
    assert container.wait(timeout=60)["StatusCode"] == 0
    truth = _container_lines(container)
    runner = BuildRunner.attach(build_id, client=cw.client, data_root=tmp_path / "data")
    events = kit.run(runner)
    result = events[-1].result
    assert result.status == "succeeded" and Path(result.wheel).is_file()
    final = _step_lines(record)
    LINES_LOST.append(_lost(final, truth))
    assert final == truth and len(truth["stdout"]) == 15
    assert any("ended (exited)" in line for e in events if e.type == "log" for line in e.lines)
    assert kit.leftovers(cw.client, build_id) == []


def test_attach_is_refused_while_the_front_end_lives_and_without_a_build(cw, tmp_path):
    proc = _start_front_end(cw, tmp_path, counted(100, wheel=False))
    try:
        build_id, _record, _got = _read_until(proc, 2)
        cw.builds.append(build_id)
        with pytest.raises(UsageError, match="still followed by another tfwizard process"):
            BuildRunner.attach(build_id, client=cw.client, data_root=tmp_path / "data")
        proc.send_signal(signal.SIGINT)  # the live front end cancels and cleans up
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with pytest.raises(UsageError, match="has no containers"):
        BuildRunner.attach(build_id, client=cw.client, data_root=tmp_path / "data")
    assert kit.leftovers(cw.client, build_id) == []


def test_sigkill_of_tfwizard_build_on_the_fixture_then_attach(cw, tmp_path):
    """The real CLI (`python -m tfwizard build`) on the fixture workspace, a Bazel action
    sleeping 20 s; killed at Bazel's first action line; the build ends unwatched; then
    `tfwizard build --attach` reports it, the record complete and the wheel copied out."""
    ws = world.copy_workspace(tmp_path)
    recipe = kit.recipe_file(tmp_path / "sleep.toml", source_dir=ws, prefix=cw.prefix,
                             name=f"crash-{uuid.uuid4().hex[:6]}",
                             bazel_flags=("--action_env=TFW_FIXTURE_SLEEP=20",))
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tfwizard", "build", "--fresh", str(recipe), "--json",
                             "--out", str(tmp_path / "wheels")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    record, got = None, []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "artifact" and event["kind"] == "record":
                record = Path(event["path"])
            if event["type"] == "log" and event["channel"] in ("stdout", "stderr"):
                got.append((event["channel"], event["line"]))
                if event["line"].startswith("["):
                    break
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert record is not None
    build_id = record.name
    cw.builds.append(build_id)
    build = cw.client.containers.list(filters={"label": f"{LABEL}.build={build_id}"})
    assert [c.labels[f"{LABEL}.step"] for c in build] == ["build"]  # Bazel runs on
    on_disk = _step_lines(record)
    truth = _container_lines(build[0])
    for ch in ("stdout", "stderr"):
        assert on_disk[ch] == truth[ch][:len(on_disk[ch])], ch
    got_build = [t for ch, t in got if ch == "stderr"]
    assert on_disk["stderr"][-len(got_build):] == got_build[-len(on_disk["stderr"]):] or got_build
    assert build[0].wait(timeout=300)["StatusCode"] == 0
    truth = _container_lines(build[0])  # everything Bazel printed, for the comparison
    status, out, err = capture(["build", "--attach", build_id],
                               env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")})
    assert status == ExitStatus.OK, err + out[-3000:]
    final = _step_lines(record)
    LINES_LOST.append(_lost(final, truth))
    assert final == truth
    assert "INFO: Build completed successfully" in "\n".join(final["stderr"])
    wheels = list((tmp_path / "wheels").glob("tensorflow_cpu-*.whl"))
    assert len(wheels) == 1 and f"Wheel: {wheels[0]}" in out
    assert json.loads((record / "result.json").read_text())["status"] == "succeeded"
    assert kit.leftovers(cw.client, build_id) == []


# -- cancel races ------------------------------------------------------------------------------


@pytest.mark.parametrize("step", ["fetch", "configure", "build", "package"])
def test_cancel_in_any_step_leaves_nothing_and_a_cancelled_record(cw, tmp_path, step):
    """A stalling step of each kind (a clone that hangs, a configure, Bazel, packaging)."""
    names = ["fetch", "configure", "build", "package"]
    steps = [Step(n, n if n != "build" else "analyse",
                  ("sh", "-c", "echo started; sleep 60" if n == step else "echo ok"),
                  workdir="/", needs_network=False) for n in names[:names.index(step) + 1]]
    plan = kit.busybox_plan(tmp_path, steps, prefix=cw.prefix)
    at: list[float] = []

    def on_event(runner, event):
        if not at and event.type == "log" and "started" in event.lines:
            at.append(time.monotonic())
            runner.cancel()

    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=cw.client)
    result = kit.run(runner, on_event)[-1].result
    assert at and time.monotonic() - at[0] < 10
    assert result.status == "cancelled" and result.wheel is None
    assert json.loads((runner.record.path / "result.json").read_text())["status"] == "cancelled"
    assert kit.leftovers(cw.client, runner.build_id) == []
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_what_a_cancel_says_reaches_the_front_end(cw, tmp_path):
    """Issue 15 item 9: "cancelling: sent SIGINT" and "... killed" went to the record only
    (and the --json line numbers skipped them). A step that ignores SIGINT is killed after
    the grace period; every record line, those included, reaches the front end."""
    plan = kit.busybox_plan(tmp_path, "trap '' INT; echo started; sleep 30", prefix=cw.prefix)

    def on_event(runner, event):
        if event.type == "log" and "started" in event.lines:
            runner.cancel()

    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=cw.client,
                         cancel_grace_s=1.0)
    events = kit.run(runner, on_event)
    assert events[-1].result.status == "cancelled"
    said = [line for e in events if e.type == "log" and e.channel == "tfwizard"
            for line in e.lines]
    assert "cancelling: sent SIGINT to the build container" in said
    assert "cancelling: killed the build container" in said
    kit.assert_front_end_saw_the_record(events, runner.record.path)
    assert kit.leftovers(cw.client, runner.build_id) == []


def test_cancel_during_the_wheel_copy_leaves_no_partial_wheel(cw, tmp_path):
    plan = kit.busybox_plan(tmp_path, kit.make_wheel_script(size_mib=256), prefix=cw.prefix)
    timers: list[threading.Timer] = []

    def on_event(runner, event):
        if event.type == "phase" and event.phase == "package" and not timers:
            timers.append(threading.Timer(0.05, runner.cancel))
            timers[0].start()

    out = tmp_path / "out"
    runner = BuildRunner(plan, out_dir=out, data_root=tmp_path, client=cw.client)
    result = kit.run(runner, on_event)[-1].result
    assert timers
    assert result.status == "cancelled", result.message
    assert "while copying the wheel" in result.message  # it stopped mid-copy
    assert list(out.iterdir()) == []  # no wheel, no temporary file
    assert json.loads((runner.record.path / "result.json").read_text())["status"] == "cancelled"
    assert kit.leftovers(cw.client, runner.build_id) == []


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, int(p.stat().st_mtime_ns))
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_cancel_during_pip_install_leaves_the_venv_as_it_was(tmp_path):
    """pip resolving a dependency from an index that accepts and never answers; cancelled
    there: the venv's files are exactly as before (not only `pip freeze`)."""
    from tfwizard.core.install.job import Installation, PipLine, resolve_target

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def serve():
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    venv.create(tmp_path / "venv", with_pip=True)
    before = _tree(tmp_path / "venv")
    wheel = make_wheel(tmp_path / "wheels", "tfwizard-cancel-me",
                       requires=("tfwizard-never-there>=1",))
    target = resolve_target(venv=tmp_path / "venv")
    port = server.getsockname()[1]

    async def run():
        inst = Installation(wheel, target, [], index_url=f"http://127.0.0.1:{port}/simple",
                            check_tags=False)
        events = inst.events()
        async for event in events:
            if isinstance(event, PipLine):
                break
        deadline = time.monotonic() + 60
        while not accepted and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await events.aclose()
        return inst.result

    try:
        result = asyncio.run(run())
    finally:
        server.close()
        for conn in accepted:
            conn.close()
    assert accepted, "pip never asked the index"
    assert result is not None and result.status == "cancelled"
    assert result.unchanged is True
    assert _tree(tmp_path / "venv") == before


# -- two builds at once ------------------------------------------------------------------------


def test_two_builds_at_once_share_the_cache_volume_and_nothing_else(cw, tmp_path):
    """Per-build source and output volumes and record folders; one cache volume."""
    plans = []
    for name in ("left", "right"):
        base = tmp_path / name
        base.mkdir()
        steps = [Step("fetch", "fetch", ("sh", "-c", f'echo {name} > {SRC}/marker; sleep 1'),
                      workdir="/", needs_network=False),
                 Step("build", "analyse", ("sh", "-c",
                      f"cat {SRC}/marker; echo {name} > /cache/disk/{name}; sleep 1; "
                      f"ls /cache/disk; " + kit.make_wheel_script(f"{name}-1-py3-none-any.whl")),
                      workdir="/", needs_network=False)]
        plan = kit.busybox_plan(base, steps, prefix=cw.prefix, name=name)
        # a git source: the fetch step fills a per-build source volume (no bind mount)
        plan = dataclasses.replace(plan, source_kind="ref", source_dir=None,
                                   mounts=[m for m in plan.mounts if m.target != SRC])
        plans.append(plan)
    runners = [BuildRunner(p, data_root=tmp_path / "data", client=cw.client,
                           keep_containers=True) for p in plans]
    cw.builds.extend(r.build_id for r in runners)

    async def both():
        async def one(runner):
            return [e async for e in runner.events()]

        return await asyncio.gather(*(one(r) for r in runners))

    results = asyncio.run(both())
    mounts = {}
    for runner, events, name in zip(runners, results, ("left", "right"), strict=True):
        result = events[-1].result
        assert result.status == "succeeded", result.message
        assert Path(result.wheel).name == f"{name}-1-py3-none-any.whl"
        assert Path(result.wheel).parent == runner.record.path  # its own folder
        out = kit.stdout_lines(events)
        assert out[0] == name  # its own source volume
        c = cw.client.containers.list(all=True, filters={
            "label": f"{LABEL}.build={runner.build_id}", "name": "build"})[0]
        mounts[name] = {m["Destination"]: m.get("Name", m["Source"]) for m in c.attrs["Mounts"]}
    left, right = mounts["left"], mounts["right"]
    assert left[SRC] != right[SRC] and runners[0].build_id in left[SRC]
    assert left[OUTPUT_USER_ROOT] != right[OUTPUT_USER_ROOT]
    assert left["/cache/disk"] == right["/cache/disk"]  # shared on purpose
    assert {runners[0].record.path, runners[1].record.path} == {
        r.record.path for r in runners} and runners[0].record.path != runners[1].record.path
    for runner in runners:
        kit.remove_build(cw.client, runner.build_id)
    check = cw.client.containers.run(world.BUSYBOX, ["ls", "/c"], remove=True,
                                     network_mode="none", labels={LABEL + ".test": "1"},
                                     volumes={left["/cache/disk"]: {"bind": "/c", "mode": "ro"}})
    # both wrote the one cache volume (which may also hold Bazel's cache from other tests)
    assert {"left", "right"} <= set(check.decode().split())
    for runner in runners:
        assert kit.leftovers(cw.client, runner.build_id) == []


def test_a_detached_front_end_leaves_the_build_running_for_attach(cw, tmp_path):
    """runner.detach() then leaving the loop: nothing stopped; attach finishes the build."""
    plan = kit.busybox_plan(tmp_path, counted(20), prefix=cw.prefix)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path / "data",
                         client=cw.client)
    cw.builds.append(runner.build_id)
    kit.detach_after(runner, "line 3")
    running = cw.client.containers.list(filters={"label": f"{LABEL}.build={runner.build_id}"})
    assert [c.status for c in running] == ["running"]
    assert json.loads((runner.record.path / "result.json").read_text())["status"] == "running"
    again = BuildRunner.attach(runner.build_id, client=cw.client, data_root=tmp_path / "data")
    result = kit.run(again)[-1].result
    assert result.status == "succeeded" and Path(result.wheel).is_file()
    final = _step_lines(runner.record.path)
    expected = {"stdout": [f"line {i}" for i in range(1, 21)],
                "stderr": [f"err {i}" for i in range(1, 21)]}
    LINES_LOST.append(_lost(final, expected))
    assert final == expected
    assert kit.leftovers(cw.client, runner.build_id) == []


def test_lines_lost_is_zero(cw, tmp_path):
    """The figure for the report: a record compared with its container's own log loses
    nothing, here for a build of its own (run alone, it still measures), and summed over
    every comparison the other tests of this module made."""
    plan = kit.busybox_plan(tmp_path, counted(30), prefix=cw.prefix)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path / "data",
                         client=cw.client, keep_containers=True)
    cw.builds.append(runner.build_id)
    assert kit.run(runner)[-1].result.status == "succeeded"
    container = cw.client.containers.get(f"tfwizard-{runner.build_id}-build")
    truth = _container_lines(container)
    assert len(truth["stdout"]) == len(truth["stderr"]) == 30
    LINES_LOST.append(_lost(_step_lines(runner.record.path), truth))
    print(f"lines lost over {len(LINES_LOST)} record(s): {sum(LINES_LOST)}")
    assert sum(LINES_LOST) == 0
