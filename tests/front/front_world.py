"""Real `tfwizard` processes through the front end (tfwizard/front/), each test with its own
run folder (TFWIZARD_FRONTEND_DIR) so no server is shared, and every server it started
stopped at its end."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfwizard.front import wire

ROOT = Path(__file__).resolve().parents[2]
TFWIZARD = str(Path(sys.executable).parent / "tfwizard")
LOG = ROOT / "tests" / "data" / "logs" / "fixture-break.log.txt"


def wait_for(what, timeout: float = 30.0, step: float = 0.05):
    """The first truthy what() within timeout seconds; AssertionError after."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(step)
    raise AssertionError("timed out")


def alive(pid: int) -> bool:
    """Whether pid is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@dataclass
class Front:
    """One test's front end: its run folder and environment."""

    folder: Path

    @property
    def env(self) -> dict[str, str]:
        """The environment of a command through this front end."""
        return {**os.environ, "TFWIZARD_FRONTEND": "1", "TFWIZARD_FRONTEND_DIR": str(self.folder),
                "TFWIZARD_FRONTEND_IDLE": "120"}

    @property
    def socket(self) -> Path:
        """The server's socket."""
        return self.folder / (wire.socket_name(self.env) + ".sock")

    def log(self) -> str:
        """The server log so far."""
        path = self.folder / "server.log"
        return path.read_text("utf-8") if path.exists() else ""

    def server_pid(self) -> int | None:
        """The pid of the server holding the lock (None when none runs)."""
        lock = self.folder / (self.socket.name + ".lock")
        text = lock.read_text().strip() if lock.exists() else ""
        return int(text) if text and alive(int(text)) else None

    def run(self, *argv: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        """`tfwizard ARGV` through the front end (kw: subprocess.run's, env merged)."""
        env = {**self.env, **kw.pop("env", {})}
        kw.setdefault("capture_output", True)
        return subprocess.run([TFWIZARD, *argv], env=env, text=True, timeout=120,
                              check=False, **kw)

    def up(self) -> int:
        """Start a server (a first command) and wait until it listens: its pid."""
        self.run("recipe", "validate", str(ROOT / "recipes" / "tf218-cuda-laptop.toml"))
        wait_for(lambda: "listening on" in self.log())
        return wait_for(self.server_pid)

    def served(self) -> int:
        """How many commands the servers of this folder served."""
        return len(re.findall(r"\] served ", self.log()))

    def child_pids(self) -> list[int]:
        """The children the servers forked, in order."""
        return [int(p) for p in re.findall(r"in child (\d+)", self.log())]

    def stale_after_touching(self, touched: Path, recipe: Path) -> tuple[int, int]:
        """With TOUCHED's mtime a second newer, a served command (validate RECIPE) is still
        right, its server answered "stale" and exited, and a new one serves the next:
        (the old server's pid, the new one's). TOUCHED's mtime is restored after."""
        old = self.up()
        before = touched.stat()
        try:
            os.utime(touched, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
            done = self.run("recipe", "validate", str(recipe))
            assert done.returncode == 0 and "valid" in done.stdout
            assert "stale, exiting" in self.log()
            wait_for(lambda: not alive(old), timeout=10)
            new = wait_for(lambda: self.server_pid() not in (None, old) and self.server_pid())
            wait_for(lambda: self.log().count("listening on") == 2)
            served = self.served()
            assert self.run("recipe", "validate", str(recipe)).returncode == 0
            assert self.served() == served + 1 and self.server_pid() == new
            return old, new
        finally:
            os.utime(touched, ns=(before.st_atime_ns, before.st_mtime_ns))

    def stop(self) -> None:
        """Stop this folder's server (and kill it if it does not go)."""
        from tfwizard.front.client import stop_server

        pid = self.server_pid()
        stop_server(self.env)
        if pid is not None:
            try:
                wait_for(lambda: not alive(pid), timeout=10)
            except AssertionError:
                os.kill(pid, signal.SIGKILL)
