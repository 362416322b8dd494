"""The front-end server: tfwizard imported once, one fork per command.

`python -m tfwizard.front.server SOCKET` (started by the client, detached). It imports what
the served commands use (PRELOAD), takes a snapshot of its code (wire.code_snapshot), and
serves requests on SOCKET: only from its own user (SO_PEERCRED), only while its code is
current (else it answers "stale" and exits, and the client runs the command itself and starts
a new server). Each command runs in a forked child (childrun.run_command) in the caller's
working folder, environment, umask and stdin/stdout/stderr; the server relays the client's
signals to it, SIGKILLs it when the client vanishes (as killing a plain `tfwizard` would end
the command), and sends back its exit status. It exits after TFWIZARD_FRONTEND_IDLE seconds
(default 1800) without a command, and on `tfwizard clean` (a "stop" request).
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import wire

#: modules the served commands import on their way (measured with -X importtime on a warm
#: `tfwizard build`): importing them here is what makes a served command fast
PRELOAD = (
    "tfwizard.cli",
    "docker",
    "tfwizard.core.build.plan",
    "tfwizard.core.build.dockerutil",
    "tfwizard.core.build.warm",
    "tfwizard.core.build.warmrun",
    "tfwizard.core.build.warmbep",
    "tfwizard.core.build.runner",
    "tfwizard.core.build.record",
    "tfwizard.core.build.preflight",
    "tfwizard.core.build.diagnose",
    "tfwizard.core.build.hostcache",
    "tfwizard.core.build.probecache",
    "tfwizard.core.knowledge",
    "tfwizard.core.recipe",
    "tfwizard.cli.follow",
    "tfwizard.cli.gates",
    # what a warm no-op child still imported (its "new modules" in server.log, bench/rebuild.py)
    "tfwizard.core.detect",
    "tfwizard.core.detect.amd",
    "tfwizard.core.detect.cpu",
    "tfwizard.core.detect.docker_probe",
    "tfwizard.core.detect.nvidia",
    "tfwizard.core.detect.osinfo",
    "tfwizard.core.detect.process",
    "tfwizard.core.detect.pythons",
    "tfwizard.core.detect.resources",
    "tfwizard.core.build.remotecheck",
    "tfwizard.core.build.render",
    "concurrent.futures.thread",
    "netrc",
)
#: (module, function): caches of the shipped data that every command fills the same way,
#: filled once here. They depend on files only (never the environment), and a change to
#: those files makes the server stale (wire.code_snapshot), so a child never sees old data.
PREFILL = (
    ("tfwizard.core.knowledge", "load_knowledge"),
    ("tfwizard.core.bazelfacts", "load_bazel_facts"),
    ("tfwizard.core.build.diagnose", "load_failures"),
    ("tfwizard.core.build.diagnose", "_warning_matcher"),  # the success path's log scan
)
_PEERCRED = struct.Struct("3i")


def log(text: str) -> None:
    """One line in the server's log (its stderr: server.log in the run folder)."""
    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {text}\n")
    sys.stderr.flush()


def preload() -> None:
    """Import PRELOAD, fill PREFILL's caches and the catalogs (what fails is logged, not
    fatal: the child does it itself)."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            log(f"preload {name}: {exc}")
    for module, function in PREFILL:
        try:
            getattr(importlib.import_module(module), function)()
        except Exception as exc:  # noqa: BLE001 - the child then fills it itself
            log(f"prefill {module}.{function}: {type(exc).__name__}: {exc}")
    from tfwizard.core import i18n

    for lang in i18n.LANGUAGES:
        i18n.catalog(lang)


@dataclass
class Job:
    """One command: its client's connection and its child."""

    conn: socket.socket
    pid: int
    pidfd: int
    go: int = -1  # the pipe the child waits on until its client says "go"
    done: bool = False

    def release(self, start: bool) -> None:
        """Let the waiting child start its command (a byte), or not (the pipe closed: it
        exits without running anything)."""
        if self.go < 0:
            return
        with contextlib.suppress(OSError):
            if start:
                os.write(self.go, b"g")
            os.close(self.go)
        self.go = -1


@dataclass
class Server:
    """The accept/fork/reap loop of one server."""

    path: Path
    listener: socket.socket
    snapshot: tuple[tuple[str, int, int], ...]
    idle_s: float
    jobs: dict[int, Job] = field(default_factory=dict)  # by pid
    selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    stopping: bool = False
    last: float = field(default_factory=time.monotonic)
    served: int = 0
    ino: int = -1  # the socket file this server bound (another server may replace it)

    def loop(self) -> None:
        """Serve until stopped (and every command ended) or idle."""
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        while not (self.stopping and not self.jobs):
            if not self.jobs and time.monotonic() - self.last > self.idle_s:
                log(f"idle for {self.idle_s:.0f} s: exiting")
                break
            for key, _mask in self.selector.select(timeout=min(self.idle_s, 30.0)):
                kind, job = key.data
                if kind == "accept":
                    self._accept()
                elif kind == "conn":
                    self._from_client(job)
                else:
                    self._reap(job)
            if self.jobs:
                self.last = time.monotonic()
        self._retire()

    def _retire(self) -> None:
        """Stop taking requests: the socket goes (if still ours) and the listener closes."""
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.ino:
                os.unlink(self.path)
        self.listener.close()
        if LOCK_FD[0] >= 0:  # a new server may start while this one's commands end
            os.close(LOCK_FD[0])
            LOCK_FD[0] = -1

    def _accept(self) -> None:
        conn, _addr = self.listener.accept()
        fds: list[int] = []
        try:
            conn.settimeout(5.0)
            _pid, uid, _gid = _PEERCRED.unpack(conn.getsockopt(
                socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
            if uid != os.getuid():
                log(f"refused a request of uid {uid}")
                raise OSError("another user")
            request, fds = wire.recv_message(conn, max_fds=3)
            if request is None:
                raise OSError("no request")
            self._handle(conn, request, fds)
        except (OSError, ValueError) as exc:
            log(f"request dropped: {exc}")
            conn.close()
        finally:
            for fd in fds:
                os.close(fd)

    def _handle(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
        if request.get("stop"):
            self._last_answer(conn, {"stopping": True}, "stop requested")
            return
        if wire.code_snapshot() != self.snapshot:
            self._last_answer(conn, {"stale": True}, "the code changed since start: stale, "
                              "exiting")
            return
        if len(fds) != 3 or self.stopping:
            raise OSError("a request needs stdin, stdout and stderr")
        # The child waits for its client's "go", sent once the client knows the command
        # started here: a client that gave up waiting for "started" (and runs the command
        # itself) or vanished before it never has the command run twice
        go_read, go_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                from .childrun import run_command

                os.close(go_write)
                self._close_in_child(conn)
                if os.read(go_read, 1) != b"g":
                    os._exit(1)
                os.close(go_read)
                run_command(request, fds)  # never returns
            finally:
                os._exit(1)  # never back into the server's loop
        os.close(go_read)
        conn.settimeout(None)
        job = Job(conn, pid, os.pidfd_open(pid), go_write)
        self.jobs[pid] = job
        self.selector.register(conn, selectors.EVENT_READ, ("conn", job))
        self.selector.register(job.pidfd, selectors.EVENT_READ, ("child", job))
        self.served += 1
        log(f"served {request.get('argv')} in child {pid} (#{self.served})")
        wire.send_message(conn, {"started": pid})

    def _last_answer(self, conn: socket.socket, answer: dict[str, Any], why: str) -> None:
        """Answer, then take no more requests (exit once the running commands ended)."""
        log(why)
        wire.send_message(conn, answer)
        conn.close()
        self.stopping = True
        self._retire()

    def _close_in_child(self, conn: socket.socket) -> None:
        """The child keeps none of the server's descriptors (the client must see the end
        of the stream when the server goes, not when the last child does)."""
        self.selector.close()  # closes the epoll fd only: the parent's stays as it was
        self.listener.close()
        conn.close()
        for job in self.jobs.values():
            job.conn.close()
            os.close(job.pidfd)
            if job.go >= 0:
                os.close(job.go)
        if LOCK_FD[0] >= 0:
            os.close(LOCK_FD[0])

    def _from_client(self, job: Job) -> None:
        try:
            message, _fds = wire.recv_message(job.conn)
        except (OSError, ValueError):
            message = None
        if message is None:  # the client is gone (SIGKILL): end the command as killing it would
            job.release(start=False)
            self.selector.unregister(job.conn)
            job.conn.close()
            if not job.done:
                log(f"client of child {job.pid} vanished: SIGKILL")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(job.pid, signal.SIGKILL)
            return
        if message.get("go"):
            job.release(start=True)
            return
        signum = int(message.get("signal", 0))
        if signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            log(f"signal {signum} to child {job.pid}")
            with contextlib.suppress(ProcessLookupError):
                # Ctrl-C reaches the terminal's whole process group: the child's group here
                if signum == signal.SIGINT:
                    os.killpg(job.pid, signum)
                else:
                    os.kill(job.pid, signum)

    def _reap(self, job: Job) -> None:
        _pid, status = os.waitpid(job.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        job.done = True
        job.release(start=False)
        self.selector.unregister(job.pidfd)
        os.close(job.pidfd)
        del self.jobs[job.pid]
        log(f"child {job.pid} exited {code}")
        if job.conn.fileno() >= 0:
            with contextlib.suppress(OSError):
                wire.send_message(job.conn, {"exit": code})
            self.selector.unregister(job.conn)
            job.conn.close()


LOCK_FD: list[int] = [-1]


def _lock(folder: Path, name: str) -> bool:
    """One server per socket: hold an exclusive lock for life (waiting up to 5 s for a
    stale one to go)."""
    fd = os.open(folder / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + 5.0
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            LOCK_FD[0] = fd
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())  # for `kill` and the tests
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return False
            time.sleep(0.05)


def _listen(path: Path) -> tuple[socket.socket, int]:
    """Bind a new socket beside PATH and move it over PATH (a client never sees none)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(tmp))
    finally:
        os.umask(old)
    listener.listen(16)
    ino = os.stat(tmp).st_ino
    os.replace(tmp, path)
    return listener, ino


def main(argv: list[str] | None = None) -> int:
    """Start a server on the socket named in argv (see the module's docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0])
    if not hasattr(os, "pidfd_open") or not _lock(path.parent, path.name):
        log("another server holds the lock, or this system has no pidfd_open: exiting")
        return 1
    started = time.monotonic()
    preload()
    snapshot = wire.code_snapshot()
    if threading.active_count() != 1:
        log("preloading started threads: not safe to fork, exiting")
        return 1
    idle = float(os.environ.get("TFWIZARD_FRONTEND_IDLE", wire.IDLE_DEFAULT_S))
    listener, ino = _listen(path)
    log(f"listening on {path.name} (preload {time.monotonic() - started:.2f} s, idle {idle} s)")
    server = Server(path, listener, snapshot, idle, ino=ino)
    server.loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
