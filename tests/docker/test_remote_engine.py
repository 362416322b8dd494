"""Building on another Docker engine (DOCKER_HOST=tcp://...): a second dockerd on loopback.

The engine has its own data root, exec root and containerd, so it shares no images, volumes
or host paths with the main one. `tfwizard build` must then upload the checkout into a
volume (put_archive through a helper container) and bring the wheel, the BEP file and the
record back through the API: no container it creates may have a bind mount.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tests.net.servers import SecondDockerd, free_port, wait_for_port
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.docker import client as dockerutil
from tfwizard.core.paths import LABEL

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def engine():
    world.require_docker()
    if os.geteuid() != 0:
        pytest.skip("starting a second dockerd needs root")
    world.ensure_images()
    import docker

    main = docker.from_env(timeout=300)
    second = SecondDockerd()
    try:
        second.start()
        t0 = time.monotonic()
        second.load_image(main, world.IMAGE)
        print(f"image copied to the second engine in {time.monotonic() - t0:.1f} s")
        yield second
    finally:
        second.stop()
        main.close()
    assert not second.base.exists()


class _MountWatcher(threading.Thread):
    """Records the mounts of every tfwizard container the engine runs (polls, bounded)."""

    def __init__(self, client, limit_s: float = 900) -> None:
        super().__init__(daemon=True)
        self.client, self.limit_s = client, limit_s
        self.seen: dict[str, list[dict]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + self.limit_s
        while not self.stop.is_set() and time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                for c in self.client.containers.list(all=True, filters={"label": LABEL}):
                    if c.name not in self.seen:
                        self.seen[c.name] = c.attrs.get("HostConfig", {}).get("Mounts") or []
            self.stop.wait(0.1)


def test_engine_over_tcp_is_remote(engine):
    import docker

    assert not dockerutil.is_local_engine(engine.client)
    local = docker.from_env()
    try:
        assert dockerutil.is_local_engine(local)
        # truly another daemon. Not told by info()["ID"]: both read /etc/docker/key.json and
        # report the same ID; their data roots differ
        assert local.info()["DockerRootDir"] != engine.client.info()["DockerRootDir"]
    finally:
        local.close()
    # detection: builds go to that engine's machine, so its CPUs and RAM count, and its free
    # disk is unknown here (not this machine's data folder, which the build never fills)
    from tfwizard.core.detect import detect_host

    profile = detect_host(env={**os.environ, "DOCKER_HOST": engine.host})
    info = engine.client.info()
    assert profile.docker.remote and profile.docker.status == "ok"
    assert (profile.resources.cpu_count, profile.resources.ram_total_bytes) == (
        info["NCPU"], info["MemTotal"])
    assert (profile.resources.disk_path, profile.resources.disk_free_bytes) == (None, None)


def test_a_remote_engine_s_free_disk_is_asked_in_a_container(engine, monkeypatch):
    """The preflight asks an engine on another machine how much disk it has free (a short
    container of the build image: `df -Pk /`), and says DISK_LOW when a build needs more."""
    import shutil
    from types import SimpleNamespace

    import docker

    from tfwizard.core.building.run import preflight
    from tfwizard.core.docker.imagefacts import engine_free_bytes
    from tfwizard.core.knowledge import load_knowledge

    free = engine_free_bytes(engine.client, world.IMAGE)
    here = shutil.disk_usage(engine.base / "data").free  # that engine's data root, seen here
    assert free is not None and abs(free - here) < max(here // 50, 1 << 30), (free, here)
    plan = SimpleNamespace(image=world.IMAGE, user=None, backend="cpu")
    env = {"DOCKER_HOST": engine.host}
    memory = load_knowledge().platforms["memory"]
    monkeypatch.setitem(memory, "min_free_disk_gib_cpu", 3 * (free >> 30) + 3)
    found = preflight.engine_disk(engine.client, plan, env)
    assert [(f.code, f.severity, f.key) for f in found] == [("DISK_LOW", "error",
                                                            "cache.disk_cache")]
    assert engine.host in found[0].message and f"{free / 2**30:.0f} GiB" in found[0].message
    monkeypatch.setitem(memory, "min_free_disk_gib_cpu", 1)
    assert preflight.engine_disk(engine.client, plan, env) == []
    # an engine on this machine is the rules' (its data root), not asked again
    monkeypatch.setitem(memory, "min_free_disk_gib_cpu", 3 * (free >> 30) + 3)
    local = docker.from_env()
    try:
        assert preflight.engine_disk(local, plan, {}) == []
    finally:
        local.close()


def test_build_on_a_remote_engine_without_bind_mounts(engine, tmp_path):
    workspace = world.copy_workspace(tmp_path)
    name = f"remote-engine-{uuid.uuid4().hex[:6]}"
    recipe = tmp_path / "remote.toml"
    recipe.write_text(f"""schema = 1
name = "{name}"
[tensorflow]
version = "2.21.0"
source_dir = "{workspace}"
[backend]
kind = "cpu"
[toolchain]
gcc = "12"
[build]
image = "{world.IMAGE}"
network = "none"
jobs = 2
[cache]
volume_prefix = "tfwizard-test-remote"
""", encoding="utf-8")
    watcher = _MountWatcher(engine.client)
    watcher.start()
    try:
        status, stdout, stderr = capture(
            ["build", "--fresh", str(recipe), "--out", str(tmp_path / "out"), "--json"],
            env_vars={**os.environ, "DOCKER_HOST": engine.host,
                      "TFWIZARD_DATA_DIR": str(tmp_path / "data")})
    finally:
        watcher.stop.set()
        watcher.join(10)
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert status == ExitStatus.OK, stderr + stdout[-3000:]
    result = [e for e in events if e["type"] == "finished"][-1]["result"]
    wheel = Path(result["wheel"])
    assert wheel.parent == tmp_path / "out" and wheel.is_file()
    with zipfile.ZipFile(wheel) as zf:
        assert any(n.endswith("METADATA") for n in zf.namelist())
    record = Path(result["record_dir"])
    assert (record / "bep.json").is_file()  # copied back through the API
    log = (record / "log.txt").read_text()
    assert f"uploading {workspace} into volume" in log
    # said live, before the upload (issue 15 item 9), like every other line of the record
    kit.assert_front_end_saw_the_record(events, record)
    assert "INFO: Build completed successfully" in log
    # every container of this build ran on the second engine, with volumes only
    steps = {n.rsplit("-", 1)[-1] for n in watcher.seen}
    assert {"configure", "build"} <= steps, watcher.seen
    # the short-lived upload helper may come and go between two polls; the steps' mounts
    # show where the checkout went: into the upload volume, never a bind of a host path
    assert any(m.get("Source", "").startswith("tfwizard-upload-")
               for mounts in watcher.seen.values() for m in mounts), watcher.seen
    kinds = {m.get("Type") for mounts in watcher.seen.values() for m in mounts}
    assert kinds == {"volume"}, watcher.seen
    print(f"containers seen on the second engine: {sorted(watcher.seen)}")
    # nothing of the build is left there except the shared cache volumes
    flt = {"label": f"{LABEL}.build={result['build_id']}"}
    assert engine.client.containers.list(all=True, filters=flt) == []
    assert engine.client.volumes.list(filters=flt) == []
    import docker

    local = docker.from_env()
    try:
        assert local.containers.list(all=True, filters={"label": f"{LABEL}.recipe={name}"}) == []
    finally:
        local.close()


def _git(*args: str, cwd: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_AUTHOR_NAME": "tfwizard",
           "GIT_AUTHOR_EMAIL": "tests@tfwizard.invalid", "GIT_COMMITTER_NAME": "tfwizard",
           "GIT_COMMITTER_EMAIL": "tests@tfwizard.invalid"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                   timeout=120)


def test_warm_build_on_a_remote_engine(engine, tmp_path):
    """Issue 17: the warm path on the second engine. The source comes from a git daemon
    on loopback (a warm build refuses a bind-mounted source_dir on a remote engine): the
    container and the workspace volumes live there and not on the main engine, a no-op
    rebuild reuses the container with configure skipped, `build --attach` follows a build
    whose front end was SIGKILLed, `tfwizard clean --workspaces`
    (DOCKER_HOST) removes them there."""
    import docker

    from tfwizard.core.building.warm import container as warm

    work = world.copy_workspace(tmp_path, version="2.21.0")  # as the tag's source says
    _git("init", "-q", "-b", "main", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", "fixture", cwd=work)
    _git("tag", "v2.21.0", cwd=work)
    served = tmp_path / "served"
    _git("clone", "-q", "--bare", str(work), str(served / "tensorflow.git"), cwd=tmp_path)
    port = free_port()
    daemon = subprocess.Popen(["git", "daemon", "--export-all", "--reuseaddr",
                               f"--base-path={served}", "--listen=127.0.0.1", f"--port={port}",
                               str(served)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prefix = f"tfwizard-test-rw-{uuid.uuid4().hex[:6]}"
    recipe = world.fixture_recipe(tmp_path / "warm-remote.toml", workspace=None, prefix=prefix,
                                  name=f"warm-remote-{prefix[-6:]}", network="host",
                                  git_url=f"git://127.0.0.1:{port}/tensorflow.git")
    env = {**os.environ, "DOCKER_HOST": engine.host,
           "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    main = docker.from_env()
    flt = {"label": warm.WORKSPACE_LABEL}
    try:
        wait_for_port(port, timeout_s=20, proc=daemon)
        # build 1: its front end is SIGKILLed mid-build, `build --attach` follows it there
        proc = subprocess.Popen([sys.executable, "-m", "tfwizard", "build", str(recipe),
                                 "--out", str(tmp_path / "out1")], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        record = None
        while record is None and time.monotonic() - t0 < 300 and proc.poll() is None:
            for found in (tmp_path / "data" / "builds").glob("*/log.txt"):
                if "step build: warm exec" in found.read_text("utf-8", "replace"):
                    record = found.parent
            time.sleep(0.2)
        assert record is not None, "the warm build never reached its build step"
        time.sleep(2)  # Bazel is under way (a first build takes tens of seconds)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        status, stdout, stderr = capture(["build", "--attach", "--json"], env)
        assert status == ExitStatus.OK, stderr + stdout[-3000:]
        events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        result = [e for e in events if e["type"] == "finished"][-1]["result"]
        assert result["status"] == "succeeded" and result["record_dir"] == str(record)
        assert Path(result["wheel"]).is_file()
        logs = [(record / "log.txt").read_text()]
        assert "re-attached to build" in logs[0], logs[0][-3000:]
        print(f"warm build 1 on the second engine, killed and attached: "
              f"{time.monotonic() - t0:.1f} s")
        for n in (2,):
            t0 = time.monotonic()
            status, stdout, stderr = capture(["build", str(recipe), "--out",
                                              str(tmp_path / f"out{n}"), "--json"], env)
            events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
            assert status == ExitStatus.OK, stderr + stdout[-3000:]
            result = [e for e in events if e["type"] == "finished"][-1]["result"]
            assert Path(result["wheel"]).is_file()
            logs.append((Path(result["record_dir"]) / "log.txt").read_text())
            print(f"warm build {n} on the second engine: {time.monotonic() - t0:.1f} s")
        assert "warm build container" in logs[0] and "step fetch" in logs[0]
        assert "reused" in logs[1] and warm.SKIP_LINE in logs[1], logs[1][-3000:]
        boxes = engine.client.containers.list(filters=flt)
        assert len(boxes) == 1 and boxes[0].status == "running"
        key = boxes[0].labels[warm.WORKSPACE_LABEL]
        vols = engine.client.volumes.list(filters={"label": f"{warm.WORKSPACE_LABEL}={key}"})
        assert {v.name.rsplit("-", 1)[-1] for v in vols} == {"src", "out", "state"}
        mine = {"label": f"{warm.WORKSPACE_LABEL}={key}"}
        assert main.containers.list(all=True, filters=mine) == []
        assert main.volumes.list(filters=mine) == []

        status, stdout, stderr = capture(["clean", "--workspaces", "--json"], env)
        assert status == ExitStatus.OK, stderr + stdout[-2000:]
        assert engine.client.containers.list(all=True, filters=mine) == []
        assert engine.client.volumes.list(filters=mine) == []
    finally:
        daemon.terminate()
        daemon.wait(10)
        for c in engine.client.containers.list(all=True, filters=flt):
            c.remove(force=True)
        kit.remove_caches(engine.client, prefix)
        main.close()
