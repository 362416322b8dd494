"""The front-end server: tfwizard imported once, one fork per command.

`python -m tfwizard.front.server SOCKET` (started by the client, detached). It imports what
the served commands use (PRELOAD), takes a snapshot of its code (wire.code_snapshot) and of
its dependencies (deps_snapshot: `pip install -U docker` makes it stale too), and
serves requests on SOCKET: only from its own user (SO_PEERCRED), only while its code is
current (else it answers "stale" and exits, and the client runs the command itself and starts
a new server). Each command runs in a forked child (childrun.run_command) in the caller's
working folder, environment, umask and stdin/stdout/stderr; the server relays the client's
signals to it, SIGKILLs it when the client vanishes (as killing a plain `tfwizard` would end
the command), and sends back its exit status. It exits after TFWIZARD_FRONTEND_IDLE seconds
(default 1800) without a command, and on `tfwizard clean` (a "stop" request).

Off the critical path: while no command runs, the server keeps a spare child forked and
waiting (Spare): a request is handed to it (the request, the client's fds and the "go"
pipe, over a socket pair) so a command does not wait for a fork. A spare is a fresh fork of
the server, used once; it is no job (idle exit and "stop" ignore it), it exits when the
server's end of its pair closes, and the server kills it when it exits. After a `build`,
a short helper child re-detects the host profile of that build's environment when the kept
one is older than hostcache.TTL_S / 2 (hostcache.refresh_host), for REFRESH_FOR_S seconds
after the last build, so a slow edit-rebuild loop does not pay a detection per rebuild.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
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
from .preload import preload

_PEERCRED = struct.Struct("3i")
#: how long after the last build the server keeps that build's host profile fresh
REFRESH_FOR_S = 600.0


def log(text: str) -> None:
    """One line in the server's log (its stderr: server.log in the run folder)."""
    sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {text}\n")
    sys.stderr.flush()


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
class Spare:
    """A child forked ahead of its request, waiting on its end of a socket pair."""

    pid: int
    pidfd: int
    sock: socket.socket | None = None  # none for the host profile's refresher

    def close(self) -> None:
        """Close the server's side of it (the spare, if still waiting, then exits)."""
        if self.sock is not None:
            self.sock.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1


@dataclass
class Server:
    """The accept/fork/reap loop of one server."""

    path: Path
    listener: socket.socket
    snapshot: tuple[object, ...]
    idle_s: float
    jobs: dict[int, Job] = field(default_factory=dict)  # by pid
    selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    stopping: bool = False
    last: float = field(default_factory=time.monotonic)
    served: int = 0
    ino: int = -1  # the socket file this server bound (another server may replace it)
    spare: Spare | None = None
    helper: Spare | None = None  # the host profile's refresher while it runs (no socket)
    refresh_env: dict[str, str] | None = None  # the last build's environment
    last_build: float = 0.0
    last_check: float = 0.0

    def loop(self) -> None:
        """Serve until stopped (and every command ended) or idle."""
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        while not (self.stopping and not self.jobs):
            if not self.jobs and time.monotonic() - self.last > self.idle_s:
                log(f"idle for {self.idle_s:.0f} s: exiting")
                break
            if not self.jobs and not self.stopping:  # the next command's fork, ahead of it
                if self.spare is None:
                    self._fork_spare()
                self._maybe_refresh()
            for key, _mask in self.selector.select(timeout=min(self.idle_s, 30.0)):
                kind, job = key.data
                if kind == "accept":
                    self._accept()
                elif kind == "conn":
                    self._from_client(job)
                elif kind == "child":
                    self._reap(job)
                else:
                    self._reap_spare(kind)
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
        self._drop_spares()

    def _drop_spares(self) -> None:
        """Kill and reap the spare (and a running refresher): they die with the server."""
        for kind in ("spare", "helper"):
            self._reap_spare(kind, kill=True)

    def _end(self, child: Spare, kill: bool) -> None:
        """A spare or refresher gone from the loop: (killed,) reaped and closed."""
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(child.pidfd)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(child.pid, 0)
        child.close()

    def _forked(self, conn: socket.socket | None = None, fd: int = -1) -> int:
        """fork(); in the child, none of the server's descriptors is left (nor CONN and
        FD, the server's side of the request being forked for)."""
        pid = os.fork()
        if pid == 0:
            self._close_in_child(conn)
            if fd >= 0:
                os.close(fd)
        return pid

    def _fork_spare(self) -> None:
        """A child that waits for a request (its fds and go pipe) on a socket pair."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = self._forked()
        if pid == 0:
            status = 0  # the server went (or closed the pair) before any request
            try:
                mine.close()
                request, fds = wire.recv_message(theirs, max_fds=4)
                theirs.close()
                if request is not None and len(fds) == 4:
                    status = 1  # a request without its client's "go", as a new fork's
                    _wait_and_run(request, fds[:3], fds[3])
            finally:
                os._exit(status)  # never back into the server's loop
        theirs.close()
        self.spare = Spare(pid, os.pidfd_open(pid), mine)
        self.selector.register(self.spare.pidfd, selectors.EVENT_READ, ("spare", None))

    def _reap_spare(self, kind: str, kill: bool = False) -> None:
        """The spare or the refresher ("spare", "helper"): one that died unused (killed
        from outside) or ended, reaped; with KILL, killed first (the server exits)."""
        child = getattr(self, kind)
        setattr(self, kind, None)
        if child is not None:
            self._end(child, kill)

    def _maybe_refresh(self) -> None:
        """After a build, and every TTL_S / 4 for REFRESH_FOR_S after it, a helper child
        refreshes that build's host profile when it is older than TTL_S / 2."""
        now = time.time()
        if (self.refresh_env is None or self.helper is not None
                or now - self.last_build > REFRESH_FOR_S
                or now - self.last_check < _REFRESH_EVERY_S):
            return
        self.last_check = now
        env = self.refresh_env
        pid = self._forked()
        if pid == 0:
            try:
                from tfwizard.core.build.hostcache import refresh_host

                os.environ.clear()
                os.environ.update(env)
                if refresh_host(env):
                    log("host profile refreshed")
            finally:
                os._exit(0)
        self.helper = Spare(pid, os.pidfd_open(pid))
        self.selector.register(self.helper.pidfd, selectors.EVENT_READ, ("helper", None))

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
        if snapshot() != self.snapshot:
            self._last_answer(conn, {"stale": True}, "the code changed since start: stale, "
                              "exiting")
            return
        if len(fds) != 3 or self.stopping:
            raise OSError("a request needs stdin, stdout and stderr")
        # The child waits for its client's "go", sent once the client knows the command
        # started here: a client that gave up waiting for "started" (and runs the command
        # itself) or vanished before it never has the command run twice
        go_read, go_write = os.pipe()
        try:
            pid, pidfd, how = self._child_for(request, fds, (conn, go_read, go_write))
        finally:
            os.close(go_read)
        conn.settimeout(None)
        job = Job(conn, pid, pidfd, go_write)
        self.jobs[pid] = job
        self.selector.register(conn, selectors.EVENT_READ, ("conn", job))
        self.selector.register(job.pidfd, selectors.EVENT_READ, ("child", job))
        self.served += 1
        if wire.command_of(list(request.get("argv", []))) == "build":
            self.refresh_env, self.last_build = dict(request.get("env", {})), time.time()
            self.last_check = 0.0  # check its profile's age once it ended
        log(f"served {request.get('argv')} in child {pid} ({how}, #{self.served})")
        wire.send_message(conn, {"started": pid})

    def _child_for(self, request: dict[str, Any], fds: list[int],
                   ends: tuple[socket.socket, int, int]) -> tuple[int, int, str]:
        """The child that runs REQUEST: the spare, handed the request, fds and go pipe's
        read end; a new fork when there is none (or it cannot take it). ENDS: the client's
        connection and the go pipe. (pid, pidfd, which)."""
        conn, go_read, go_write = ends
        spare, self.spare = self.spare, None
        if spare is not None and spare.sock is not None:  # (a spare always has one)
            self.selector.unregister(spare.pidfd)
            try:
                wire.send_message(spare.sock, request, [*fds, go_read])
                spare.sock.close()
                return spare.pid, spare.pidfd, "spare"
            except OSError as exc:
                log(f"spare {spare.pid} did not take the request: {exc}")
                self._end(spare, kill=True)
        pid = self._forked(conn, go_write)
        if pid == 0:
            try:
                _wait_and_run(request, fds, go_read)
            finally:
                os._exit(1)  # never back into the server's loop
        return pid, os.pidfd_open(pid), "new"

    def _last_answer(self, conn: socket.socket, answer: dict[str, Any], why: str) -> None:
        """Answer, then take no more requests (exit once the running commands ended)."""
        log(why)
        wire.send_message(conn, answer)
        conn.close()
        self.stopping = True
        self._retire()

    def _close_in_child(self, conn: socket.socket | None) -> None:
        """The child keeps none of the server's descriptors (the client must see the end
        of the stream when the server goes, not when the last child does)."""
        self.selector.close()  # closes the epoll fd only: the parent's stays as it was
        self.listener.close()
        if conn is not None:
            conn.close()
        for other in (self.spare, self.helper):
            if other is not None:
                other.close()
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
#: how often (seconds) the server may fork a refresher: a profile checked this often and
#: refreshed at TTL_S / 2 is never older than TTL_S while the server keeps it fresh
_REFRESH_EVERY_S = 30.0


def deps_snapshot() -> tuple[tuple[str, int], ...]:
    """The mtime of each site-packages (or dist-packages) folder on sys.path: pip adds
    and removes a distribution's folders there on an install, upgrade or uninstall, so a
    server whose dependencies changed sees it (one stat per folder; never the working
    folder's, which changes with every file made there)."""
    found: list[tuple[str, int]] = []
    for entry in sys.path:
        if os.path.basename(entry) not in ("site-packages", "dist-packages"):
            continue
        try:
            found.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            continue
    return tuple(found)


def snapshot() -> tuple[object, ...]:
    """What a server compares with its start's before each command: tfwizard's code and
    data (wire.code_snapshot) and its dependencies (deps_snapshot)."""
    return (wire.code_snapshot(), deps_snapshot())


def _wait_and_run(request: dict[str, Any], fds: list[int], go_read: int) -> None:
    """In a child: become the caller's process, wait for the client's "go" on GO_READ,
    then run the command (never returns); without it (the pipe closed, a signal), exit 1
    having run nothing."""
    from .childrun import run_command

    def go() -> bool:
        try:
            return os.read(go_read, 1) == b"g"
        except BaseException:  # noqa: B036 - a relayed Ctrl-C before "go": not started
            return False
        finally:
            os.close(go_read)

    run_command(request, fds, go)


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
    preload(log)
    # what preload made lives as long as the server: out of the collector's sight, so no
    # child scans the ~40k objects in a full collection (~17 ms, and a write to each
    # object's page that fork had shared) when its first few allocations trigger one
    gc.collect()
    gc.freeze()
    taken = snapshot()
    if threading.active_count() != 1:
        log("preloading started threads: not safe to fork, exiting")
        return 1
    idle = float(os.environ.get("TFWIZARD_FRONTEND_IDLE", wire.IDLE_DEFAULT_S))
    listener, ino = _listen(path)
    log(f"listening on {path.name} (preload {time.monotonic() - started:.2f} s, idle {idle} s)")
    server = Server(path, listener, taken, idle, ino=ino)
    server.loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
