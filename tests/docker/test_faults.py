"""Docker faults, each with a specific message and a next step: no daemon, a socket the
user may not open, the daemon killed mid-build (a second dockerd of the test's own), an
image that is missing and cannot be pulled, a container killed for memory, a full output
folder. Figures for the report: FAULTS lists every fault these tests inject."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tests.docker.engine2 import SecondEngine
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import Flag
from tfwizard.core.building.run.record import read_log
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.docker import client as dockerutil
from tfwizard.core.errors import DockerUnavailable, ImageMissing
from tfwizard.core.paths import LABEL, own_labels

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
LOOP = "i=0; while :; do i=$((i+1)); echo line $i; sleep 0.2; done"


@pytest.fixture(scope="module")
def fw(tmp_path_factory):
    yield from kit.docker_world(tmp_path_factory, "fault")


@pytest.fixture(scope="module")
def engine2(fw):
    """A second dockerd (root only) with the busybox image, stopped and removed after."""
    engine = SecondEngine.start_new()
    try:
        engine.load_image(world.BUSYBOX)
        yield engine
    finally:
        engine.stop()


def test_a_second_engine_leaves_the_main_engines_default_bridge(engine2, fw):
    """A second dockerd once started with `--bridge none` deleted docker0, and every later
    container on the main engine's default network failed to start (CI, 2026-11-28)."""
    container = fw.client.containers.create(world.BUSYBOX, ["true"], network_mode="bridge",
                                            name=f"{fw.prefix}-bridge")
    try:
        container.start()
        assert container.wait(timeout=60)["StatusCode"] == 0
    finally:
        container.remove(force=True)


# -- no daemon, no permission ------------------------------------------------------------------


def test_no_daemon_says_start_docker(tmp_path):
    host = f"unix://{tmp_path}/no-such-dir/docker.sock"
    with pytest.raises(DockerUnavailable) as info:
        dockerutil.connect({"DOCKER_HOST": host})
    assert "cannot reach the Docker engine" in info.value.message
    assert "sudo systemctl start docker" in info.value.hint
    status, out, err = capture(["clean"], env_vars={**os.environ, "DOCKER_HOST": host})
    assert status == ExitStatus.ERROR
    assert "cannot reach the Docker engine" in err and "systemctl start docker" in err
    assert "Traceback" not in err


def test_a_busybox_build_without_daemon_is_an_error_with_advice(fw, tmp_path):
    plan = kit.busybox_plan(tmp_path, "true", prefix=fw.prefix)
    runner = BuildRunner(plan, data_root=tmp_path, env={
        **os.environ, "DOCKER_HOST": f"unix://{tmp_path}/absent.sock"})
    result = kit.run(runner)[-1].result
    assert result.status == "error"
    assert "cannot reach the Docker engine" in result.message
    assert "Is the Docker daemon running?" in result.message
    assert json.loads((runner.record.path / "result.json").read_text())["status"] == "error"


def test_socket_permission_denied_says_docker_group(engine2):
    """The second engine's real socket, opened by uid 65534 (nobody) in a subprocess."""
    os.chmod(engine2.base, 0o711)  # nobody may reach the socket file, not open it
    # the interpreter's stdlib (under /root here) is unreadable for nobody: import and
    # exercise every module on the way first (a connect to a socket that does not exist)
    code = ("import os, json\n"
            "from tfwizard.core.docker import client as dockerutil\n"
            "try:\n"
            "    dockerutil.connect({'DOCKER_HOST': 'unix:///nonexistent/docker.sock'})\n"
            "except Exception:\n"
            "    pass\n"
            "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
            "try:\n"
            f"    dockerutil.connect({{'DOCKER_HOST': '{engine2.host}'}})\n"
            "    print(json.dumps(['connected']))\n"
            "except Exception as e:\n"
            "    print(json.dumps([type(e).__name__, e.message, e.hint]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd="/", timeout=60)
    kind, message, hint = json.loads(proc.stdout.strip().splitlines()[-1])
    assert kind == "DockerUnavailable", proc.stderr
    assert "permission denied on the Docker socket" in message
    assert "usermod -aG docker" in hint


# -- the daemon killed mid-build, then `tfwizard clean` ---------------------------------------


def test_daemon_killed_mid_build_fails_fast_keeps_the_log_and_clean_removes_only_ours(
        engine2, tmp_path):
    client = engine2.client()
    plan = kit.busybox_plan(tmp_path, LOOP, prefix=f"tfwizard-test-e2-{uuid.uuid4().hex[:6]}")
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=client)
    killed: list[float] = []
    seen: list[str] = []

    def on_event(_runner, event):
        if event.type == "log" and event.channel == "stdout":
            seen.extend(event.lines)
            if len(seen) >= 10 and not killed:
                engine2.kill()
                killed.append(time.monotonic())

    events = kit.run(runner, on_event)
    took = time.monotonic() - killed[0]
    result = events[-1].result
    assert took < 10, took
    assert result.status == "error" and not result.ok
    assert "the Docker daemon went away" in result.message
    assert "tfwizard clean" in result.message  # the next step
    # every line the front end got is on disk, in order, none lost
    logged = [t for ch, t in read_log(runner.record.log_path) if ch == "stdout"]
    assert logged == seen and logged == [f"line {i}" for i in range(1, len(logged) + 1)]
    saved = json.loads((runner.record.path / "result.json").read_text())
    assert saved["status"] == "error" and "went away" in saved["message"]
    client.close()

    engine2.start()
    client = engine2.client()
    try:
        left = kit.leftovers(client, runner.build_id)
        assert left, "the build's container and volumes should still be on the engine"
        # objects that are not tfwizard's, one named like ours, must survive `clean`
        other = client.containers.create(world.BUSYBOX, ["true"], labels={"someone": "else"})
        fake = client.volumes.create(name=f"tfwizard-src-{uuid.uuid4().hex[:6]}")
        env = {**os.environ, "DOCKER_HOST": engine2.host}
        status, out, err = capture(["clean", "--dry-run", "--json"], env_vars=env)
        assert status == ExitStatus.OK, err
        listed = json.loads(out)["items"]
        assert {i["name"] for i in listed} >= {c.name for c in left}
        assert all(not i["removed"] for i in listed)
        assert kit.leftovers(client, runner.build_id) == left or len(
            kit.leftovers(client, runner.build_id)) == len(left)
        status, out, err = capture(["clean"], env_vars=env)
        assert status == ExitStatus.OK, err
        assert kit.leftovers(client, runner.build_id) == []
        caches = [v.name for v in client.volumes.list(filters={"label": LABEL})]
        assert sorted(caches) == sorted(plan.cache_volumes.values())  # kept without --caches
        assert "kept volume" in out
        status, out, err = capture(["clean", "--caches"], env_vars=env)
        assert status == ExitStatus.OK, err
        assert client.volumes.list(filters={"label": LABEL}) == []
        assert client.containers.list(all=True, filters={"label": LABEL}) == []
        other.reload()
        fake.reload()  # both still there: unlabelled objects are never touched
        other.remove(force=True)
        fake.remove(force=True)
    finally:
        client.close()


def test_clean_skips_a_running_build_unless_asked(engine2, tmp_path):
    client = engine2.client()
    try:
        c = client.containers.run(world.BUSYBOX, ["sleep", "60"], detach=True,
                                  network_mode="none",
                                  labels=own_labels(**{f"{LABEL}.build": "20990101-000000-abcdef",
                                                       f"{LABEL}.step": "build"}))
        env = {**os.environ, "DOCKER_HOST": engine2.host}
        status, out, _ = capture(["clean"], env_vars=env)
        assert status == ExitStatus.OK and "is running" in out
        c.reload()
        assert c.status == "running"
        status, out, _ = capture(["clean", "--running"], env_vars=env)
        assert status == ExitStatus.OK
        assert client.containers.list(all=True, filters={"label": LABEL}) == []
    finally:
        client.close()


# -- images ------------------------------------------------------------------------------------


def test_image_missing_and_unpullable_says_what_to_do(engine2, tmp_path):
    client = engine2.client()
    image = "127.0.0.1:1/tfwizard-test/absent:1"  # nothing listens on port 1
    try:
        with pytest.raises(ImageMissing) as info:
            dockerutil.ensure_image(client, image)
        assert f"The build image {image} is not on this machine and cannot be pulled" in \
            info.value.message
        assert "docker save" in info.value.hint and "build.image" in info.value.hint
        plan = kit.busybox_plan(tmp_path, "true", prefix="tfwizard-test-e2-img")

        runner = BuildRunner(dataclasses.replace(plan, image=image), data_root=tmp_path,
                             client=client)
        result = kit.run(runner)[-1].result
        assert result.status == "error" and "cannot be pulled" in result.message
        assert kit.leftovers(client, runner.build_id) == []
    finally:
        client.close()


# -- out of memory -----------------------------------------------------------------------------


def test_a_step_killed_for_memory_says_lower_build_jobs(fw, tmp_path):
    script = 'echo start; x=$(head -c 200000000 /dev/zero | tr "\\0" x); echo never'
    plan = kit.busybox_plan(tmp_path, script, prefix=fw.prefix)
    # the plan "ran" 6 jobs: the fix is half of that, as a value (issue 15 item 2)
    plan = dataclasses.replace(plan, bazel_flags=[*plan.bazel_flags, Flag("--jobs=6", "test")])
    runner = BuildRunner(plan, data_root=tmp_path, client=fw.client, mem_limit="16m",
                         recipe_text=(tmp_path / "busybox.toml").read_text())
    fw.builds.append(runner.build_id)
    events = kit.run(runner)
    result = events[-1].result
    assert result.status == "failed" and result.exit_code == 137
    assert "out of memory" in result.message and "build.jobs" in result.message
    findings = [e for e in events if e.type == "finding"]
    oom = next(f for f in findings if f.id == "oom-compiler-killed")
    assert oom.recipe_fix == {"build.jobs": 3} and oom.fix_problem == ""
    assert "recipe fix: build.jobs = 3" in (runner.record.path / "log.txt").read_text()
    assert "fewer jobs" in oom.next_step
    assert kit.leftovers(fw.client, runner.build_id) == []


# -- a full output folder ----------------------------------------------------------------------

_DISK_FULL = r"""
import json, resource, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tests.docker import kit
from tfwizard.core.building.run.runner import BuildRunner
import docker
tmp, out, limit = Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
plan = kit.busybox_plan(tmp, kit.make_wheel_script(size_mib=8), prefix=sys.argv[5])
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
runner = BuildRunner(plan, out_dir=out, data_root=tmp, client=docker.from_env(timeout=60))
result = kit.run(runner)[-1].result
print(json.dumps(result.to_dict()))
"""


def _full_build(fw, tmp_path: Path, out: Path, limit: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", _DISK_FULL, str(ROOT), str(tmp_path), str(out),
                           str(limit), fw.prefix], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    fw.builds.append(result["build_id"])
    return result


def test_a_file_size_limit_in_the_output_folder_fails_the_copy_cleanly(fw, tmp_path):
    """RLIMIT_FSIZE (4 MiB) for an 8 MiB wheel: EFBIG on write."""
    out = tmp_path / "out"
    result = _full_build(fw, tmp_path, out, 4 << 20)
    assert result["status"] == "error"
    assert "the folder is full or the file is too big" in result["message"]
    assert "--out DIR" in result["message"]
    assert list(out.iterdir()) == []  # no partial wheel, no temporary file
    assert kit.leftovers(fw.client, result["build_id"]) == []


def test_a_full_disk_in_the_output_folder_fails_the_copy_cleanly(fw, tmp_path):
    """A 4 MiB tmpfs as the output folder for an 8 MiB wheel: ENOSPC."""
    out = tmp_path / "small"
    out.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tfwizard-test", str(out)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        result = _full_build(fw, tmp_path, out, 0)
        assert result["status"] == "error"
        assert "the folder is full or the file is too big" in result["message"]
        assert "No space left on device" in result["message"]
        assert list(out.iterdir()) == []
        assert kit.leftovers(fw.client, result["build_id"]) == []
    finally:
        subprocess.run(["umount", str(out)], check=False)


# -- a pull that stalls, cancelled ------------------------------------------------------------


def test_cancel_during_a_stalled_image_pull_returns_at_once(engine2, tmp_path):
    """A 'registry' on 127.0.0.1 that accepts and never answers: the pull hangs; cancel
    ends the build at once (the engine's own pull attempt ends when it times out)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    client = engine2.client()
    try:
        plan = kit.busybox_plan(tmp_path, "true", prefix="tfwizard-test-e2-pull")

        plan = dataclasses.replace(plan, image=f"127.0.0.1:{port}/tfwizard-test/stall:1")
        runner = BuildRunner(plan, data_root=tmp_path, client=client)
        cancelled: list[float] = []

        def cancel_when_stalled():
            deadline = time.monotonic() + 20
            while not accepted and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            cancelled.append(time.monotonic())
            runner.cancel()

        threading.Thread(target=cancel_when_stalled, daemon=True).start()
        result = kit.run(runner)[-1].result
        assert accepted, "the engine never contacted the fake registry"
        assert time.monotonic() - cancelled[0] < 5
        assert result.status == "cancelled"
        assert "while finding image" in result.message
        assert json.loads((runner.record.path / "result.json").read_text())["status"] == \
            "cancelled"
        assert kit.leftovers(client, runner.build_id) == []
    finally:
        server.close()
        for conn in accepted:
            conn.close()
        client.close()


class _RefusingRegistry:
    """A registry on 127.0.0.1 that answers the API's ping and refuses every manifest with
    one of the registry API's errors (distribution spec: status, code, message)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        import http.server

        body = json.dumps({"errors": [{"code": code, "message": message}]}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self, with_body: bool) -> None:
                ping = self.path.rstrip("/") == "/v2"
                self.send_response(200 if ping else status)
                self.send_header("Docker-Distribution-API-Version", "registry/2.0")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2" if ping else str(len(body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(b"{}" if ping else body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._answer(True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(False)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(("status", "code", "message", "diagnosis"), [
    (429, "TOOMANYREQUESTS", "You have reached your pull rate limit. You may increase the "
     "limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
     "docker-pull-rate-limited"),
    (404, "MANIFEST_UNKNOWN", "manifest unknown", "base-image-tag-missing"),
])
def test_a_registry_that_refuses_the_pull_is_diagnosed_by_its_answer(
        engine2, tmp_path, status, code, message, diagnosis):
    """The engine pulls from a real (small) registry that refuses, as Docker Hub does when
    its rate limit is reached or a tag is gone: the build ends with the registry's words,
    and its diagnosis names the cause from them."""
    from tfwizard.core.diagnosis.build import load_failures

    registry = _RefusingRegistry(status, code, message)
    client = engine2.client()
    image = f"127.0.0.1:{registry.port}/tfwizard-test/x:1"
    try:
        with pytest.raises(ImageMissing) as info:  # what to do is the catalogue's next step
            dockerutil.ensure_image(client, image)
        assert info.value.hint == next(s for s in load_failures() if s.id == diagnosis).next_step
        plan = kit.busybox_plan(tmp_path, "true", prefix="tfwizard-test-e2-refused")
        plan = dataclasses.replace(plan, image=image)
        runner = BuildRunner(plan, data_root=tmp_path, client=client)
        events = kit.run(runner)
        result = events[-1].result
        assert result.status == "error" and "cannot be pulled" in result.message
        assert code.lower() in result.message or "manifest unknown" in result.message
        found = [e.id for e in events if e.type == "finding"]
        assert found[:1] == [diagnosis], found
        log = "\n".join(text for _channel, text in read_log(runner.record.log_path))
        assert diagnosis in log  # the record says it too
        assert kit.leftovers(client, runner.build_id) == []
    finally:
        registry.close()
        client.close()


#: the faults these tests inject (for the report)
FAULTS = ("no daemon (socket missing)", "socket permission denied (real dockerd, uid 65534)",
          "dockerd SIGKILLed mid-build", "dockerd restarted with leftovers (clean)",
          "image missing + registry refusing", "image pull stalled + cancel",
          "registry rate limit (429) and missing tag (404)",
          "container OOM-killed (mem_limit)", "RLIMIT_FSIZE on the wheel copy",
          "tmpfs full on the wheel copy", "running build vs clean")


# -- an engine without docker-init ---------------------------------------------------------------


def test_an_engine_without_docker_init_runs_the_steps_as_pid_1(fw, tmp_path):
    """Issue 15 item 9: the retry without init matched any engine error with "init" in it
    (and at create, where a missing docker-init does not show). A real engine whose
    docker-init cannot be found refuses at start with its own words; the runner then
    makes the step again without init, says so, and the build goes on."""
    engine = SecondEngine.start_new(extra=("--init-path", "tfwizard-test-no-docker-init"))
    try:
        engine.load_image(world.BUSYBOX)
        client = engine.client(timeout=60)
        plan = kit.busybox_plan(tmp_path, "echo pid $$; " + kit.make_wheel_script(),
                                prefix="tfwizard-test-e2-init")
        runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=client)
        events = kit.run(runner)
        result = events[-1].result
        assert result.status == "succeeded", result.message
        said = [line for e in events if e.type == "log" and e.channel == "tfwizard"
                for line in e.lines]
        assert any("has no docker-init" in line for line in said), said
        assert "pid 1" in kit.stdout_lines(events)  # no init: the step is PID 1
        assert kit.leftovers(client, runner.build_id) == []
        client.close()
    finally:
        engine.stop()
