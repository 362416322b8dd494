"""`tfwizard`'s entry point: hand the command to the front-end server, else run it here.

For a command in wire.SERVED, unless TFWIZARD_FRONTEND=0, the client connects to the
server's socket and sends argv, the working folder, the whole environment, the umask and its
fds 0/1/2 (SCM_RIGHTS); it forwards SIGINT, SIGTERM and SIGHUP and exits with the command's
status. No server, a stale one, or any failure before the command started there: the command
runs in this process exactly as without a front end (`tfwizard.cli.run`), and a server is
started in the background for the next command.

This is what every command pays before its first line of work, so it imports built-in and C
modules only (and the front end's own `wire`, which does the same): a bare `_socket` and
`_signal`, os.path strings; no pathlib, typing, socket.py or signal.py (their enums alone
cost milliseconds). tests/front/test_client_imports.py fails when the import set grows.
"""

from __future__ import annotations

import _signal
import os
import sys
import time
from _socket import AF_UNIX, SOCK_STREAM
from _socket import socket as _Socket

from . import wire

TYPE_CHECKING = False  # typing costs ~2 ms to import (mypy reads this name as typing's)
if TYPE_CHECKING:
    from collections.abc import Mapping

#: seconds to wait for the server's answer that the command started
START_TIMEOUT_S = 5.0


def run() -> None:
    """Console entry point."""
    argv = sys.argv[1:]
    env = dict(os.environ)
    if wire.enabled(env) and wire.command_of(argv) in wire.SERVED:
        status = _served(argv, env)
        if status is not None:
            _exit_like(status)
    from tfwizard.cli import run as run_here

    run_here()


def _served(argv: list[str], env: dict[str, str]) -> int | None:
    """The command's exit status from the server (negative: killed by that signal), or
    None when it did not start there (then a new server is on its way)."""
    try:
        path = wire.socket_path(env)
    except OSError:
        return None
    sock = _request(path, argv, env)
    if sock is None:
        spawn_server(os.path.dirname(path), path, env)
        return None
    return _follow(sock)


def _request(path: str, argv: list[str], env: dict[str, str]) -> _Socket | None:
    """The connection, once the server said the command started; None otherwise."""
    sock = _Socket(AF_UNIX, SOCK_STREAM)
    try:
        sock.settimeout(START_TIMEOUT_S)
        sock.connect(path)
        umask = os.umask(0o022)
        os.umask(umask)
        for fd in (0, 1, 2):
            os.fstat(fd)  # a closed one: run here, where Python copes as it always did
        wire.send_message(sock, {"argv": argv, "argv0": sys.argv[0], "cwd": os.getcwd(),
                                 "env": env, "umask": umask, "sent_at": time.time()},
                          [0, 1, 2])
        answer, _fds = wire.recv_message(sock)
        if answer is None or answer.get("started") is None:
            raise OSError(f"server answered {answer}")
        sock.settimeout(None)
        return sock  # the command waits for _follow's "go"

    except (OSError, ValueError):
        sock.close()
        return None


def _follow(sock: _Socket) -> int:
    """Forward signals until the server reports the command's end."""
    def forward(signum: int, _frame: object) -> None:
        try:
            wire.send_message(sock, {"signal": signum})
        except OSError:
            pass

    for sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
        _signal.signal(sig, forward)
    try:
        wire.send_message(sock, {"go": True})
    except OSError:
        pass  # the server went: the loop below says so
    while True:
        try:
            answer, _fds = wire.recv_message(sock)
        except InterruptedError:
            continue
        except (OSError, ValueError):
            answer = None
        if answer is None:  # the server went away mid-command (it was killed)
            from tfwizard.core.i18n import _, language_from_env, set_language

            set_language(language_from_env())
            sys.stderr.write("tfwizard: " + _("the front-end server stopped during the "
                                              "command") + "\n")
            return 1
        if "exit" in answer:
            return int(answer["exit"])


def _exit_like(status: int) -> None:
    """Exit with the status; a command killed by a signal kills this process by it too."""
    sys.stdout.flush()
    if status < 0:
        _signal.signal(-status, _signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status if status >= 0 else 128 - status)


def spawn_server(folder: str, path: str, env: dict[str, str]) -> None:
    """Start `python -m tfwizard.front.server` detached (its own session, stdio on
    /dev/null, its log in the run folder) for the next command. Never raises."""
    import subprocess  # only here: most commands never start a server (~2 ms)

    try:
        with open(os.path.join(folder, "server.log"), "ab") as log:
            subprocess.Popen(
                [sys.executable, "-m", "tfwizard.front.server", path],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True, close_fds=True, cwd="/",
                env={**env, "TFWIZARD_FRONTEND": "0"})
    except OSError:
        pass


def stop_server(env: Mapping[str, str] | None = None) -> bool:
    """Ask this tfwizard's server to exit once its commands ended (`tfwizard clean`).
    True when one answered; nothing with TFWIZARD_FRONTEND=0 (the test suite's default:
    its `clean` tests never stop a server of the person running them)."""
    env = dict(os.environ) if env is None else dict(env)
    if not wire.enabled(env):
        return False
    try:
        path = wire.socket_path(env)
        sock = _Socket(AF_UNIX, SOCK_STREAM)
    except OSError:
        return False
    try:
        sock.settimeout(START_TIMEOUT_S)
        sock.connect(path)
        wire.send_message(sock, {"stop": True}, [0, 1, 2])
        answer, _fds = wire.recv_message(sock)
        return bool(answer and answer.get("stopping"))
    except (OSError, ValueError):
        return False
    finally:
        sock.close()
