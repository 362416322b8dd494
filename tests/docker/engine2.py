"""A second Docker daemon of the test's own, to kill and restart without touching the
engine other people use (not a test module). Needs root and the dockerd binary.

    engine = SecondEngine.start_new()     # its own socket, data-root, exec-root, containerd
    engine.load_image(world.BUSYBOX)      # docker save | load through the SDK
    engine.kill()                         # SIGKILL: "the daemon went away"
    engine.start()                        # same folders: its containers come back (exited)
    engine.stop()                         # SIGTERM, then every process it started, its
                                          # mounts and folders are removed
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests import world


def _descendants(root: Path) -> list[int]:
    """Pids of processes whose command line names `root` (containerd and shims that our
    dockerd started: they outlive a SIGKILLed dockerd)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if str(root).encode() in cmd:
            pids.append(int(entry.name))
    return pids


class SecondEngine:
    def __init__(self, base: Path, extra: tuple[str, ...] = ()) -> None:
        self.base = base
        self.extra = extra  # more dockerd options (e.g. --init-path)
        self.sock = base / "d.sock"
        self.host = f"unix://{self.sock}"
        self.namespace = f"tfwtest-{uuid.uuid4().hex[:8]}"
        self.bridge = world.second_engine_bridge()  # never --bridge none (it deletes docker0)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = None

    @classmethod
    def start_new(cls, extra: tuple[str, ...] = ()) -> SecondEngine:
        dockerd = shutil.which("dockerd")
        if dockerd is None or os.geteuid() != 0:
            pytest.skip("a second Docker daemon needs root and dockerd")
        # short: a unix socket path has at most 107 bytes
        engine = cls(Path(tempfile.mkdtemp(prefix="tfwd2-", dir="/tmp")), extra)
        engine.start()
        return engine

    def argv(self) -> list[str]:
        b = self.base
        return ["dockerd", "--host", self.host, "--data-root", str(b / "data"),
                "--exec-root", str(b / "exec"), "--pidfile", str(b / "d.pid"),
                "--bridge", self.bridge, "--iptables=false", "--ip-masq=false",
                "--containerd-namespace", self.namespace,
                "--containerd-plugins-namespace", self.namespace + "-plugins", *self.extra]

    def client(self, timeout: int = 30) -> Any:
        import docker

        return docker.DockerClient(base_url=self.host, timeout=timeout)

    def start(self, timeout: float = 60) -> None:
        (self.base / "d.pid").unlink(missing_ok=True)
        # the killed dockerd's containerd died with it but may stay a zombie (this machine's
        # PID 1 does not reap): its pid file would make dockerd wait for a dead containerd
        pidfile = self.base / "exec" / "containerd" / "containerd.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{int(pidfile.read_text())}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                pidfile.unlink()
        if pidfile.is_file() and not Path(f"/proc/{pidfile.read_text().strip()}").exists():
            pidfile.unlink()
        self._log = (self.base / "dockerd.log").open("ab")
        self.proc = subprocess.Popen(self.argv(), stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the second dockerd exited: " + self.log_tail())
            with contextlib.suppress(Exception):
                client = self.client(timeout=5)
                try:
                    client.ping()
                    return
                finally:
                    client.close()
            time.sleep(0.2)
        raise RuntimeError("the second dockerd did not answer: " + self.log_tail())

    def log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return (self.base / "dockerd.log").read_text(errors="replace")[-3000:]
        return ""

    def load_image(self, name: str) -> None:
        """Copy an image from the main engine (docker save | docker load via the SDK)."""
        import docker

        main = docker.from_env(timeout=120)
        try:
            data = b"".join(main.images.get(name).save(named=True))
        finally:
            main.close()
        client = self.client(timeout=120)
        try:
            client.images.load(data)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL dockerd (its containerd dies with it; the shims stay)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()  # reaped: the restart's pidfile check must not see a zombie
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        """Stop everything this engine started and remove its folders and mounts."""
        if self.proc is not None:
            with contextlib.suppress(Exception):
                client = self.client(timeout=30)
                for c in client.containers.list(all=True):
                    c.remove(force=True)
                client.close()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        for pid in _descendants(self.base):  # started by our dockerd, found by our folder
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        mounts = []
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                point = line.split()[4]
                if point == str(self.base) or point.startswith(str(self.base) + "/"):
                    mounts.append(point)
        for point in sorted(mounts, key=len, reverse=True):
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)
        world.drop_bridge(self.bridge)
