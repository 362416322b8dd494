"""The forked child of the front-end server: become the caller's process, run the command.

After the fork the child holds the server's state; `run_command` replaces all of it that a
command can see with the caller's: fds 0/1/2 (and new sys.stdin/stdout/stderr on them, in
the caller's encoding), the working folder, os.environ, the umask, sys.argv, the signal
handlers Python starts with (SIGINT raises KeyboardInterrupt, SIGPIPE ignored, the rest
default), a new seed for `random`; then `tfwizard.cli.main`, and the exit a plain
`tfwizard` makes (non-daemon threads joined, atexit handlers, streams flushed).

What tfwizard computes at import time from the environment would keep the server's values:
tests/front/test_import_state.py checks that no module of the served code reads the
environment, the home folder or the locale at import; the one import-time call there is
(core/i18n's language, which `cli.main` sets again from the command's environment).
"""

from __future__ import annotations

import atexit
import gc
import locale
import os
import random
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

#: the handlers the server may have changed, back to what a new Python process has
_DEFAULT_HANDLERS = ((signal.SIGINT, signal.default_int_handler),
                     (signal.SIGPIPE, signal.SIG_IGN),
                     (signal.SIGTERM, signal.SIG_DFL),
                     (signal.SIGHUP, signal.SIG_DFL),
                     (signal.SIGCHLD, signal.SIG_DFL))


def run_command(request: dict[str, Any], fds: list[int],
                go: Callable[[], bool] | None = None) -> NoReturn:
    """Run the request's command in this (forked) process and exit with its status. GO:
    called once this process became the caller's (setup off the critical path: it
    overlaps the client's "started"/"go" round trip); when it answers False the command
    never runs (exit 1, nothing shown: its client may run it itself)."""
    status, forked, known = 1, time.time(), set(sys.modules)
    full = gc.get_stats()[2]["collections"]
    log_fd = os.dup(2)  # the server's log, for this child's one line of figures
    times: list[float] = []
    failed: BaseException | None = None
    try:
        os.setpgid(0, 0)  # its own group: the server relays Ctrl-C to it and its children
        _become_caller(request, fds)
        from tfwizard.cli import main
    except BaseException as exc:  # noqa: B036 - shown only if the command is to run
        failed = exc
    times.append(time.time())
    if go is not None and not go():
        os._exit(1)
    ready = time.time()
    try:
        if failed is not None:
            raise failed
        status = _main(main, list(request["argv"]))
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: B036 - the child must exit with a status, whatever happened
        traceback.print_exc()
    times.append(time.time())
    _exit(status, lambda: _figures(log_fd, request, (forked, ready), times, known, full))


def _main(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """main(argv); under cProfile into $TFWIZARD_FRONTEND_PROFILE/child-PID.prof when that
    names a folder (bench/frontprofile.py: where a served command's time goes)."""
    folder = os.environ.get("TFWIZARD_FRONTEND_PROFILE", "")
    if not folder:
        return int(main(argv))
    import cProfile

    profiler = cProfile.Profile()
    try:
        return int(profiler.runcall(main, argv))
    finally:
        profiler.dump_stats(os.path.join(folder, f"child-{os.getpid()}.prof"))


def _figures(log_fd: int, request: dict[str, Any], started: tuple[float, float],
             times: list[float], known: set[str], full: int) -> None:
    """One line in the server's log: where this command's time went (bench/rebuild.py
    reads it; the setup is done before the client's "go", go-wait is the rest of that
    round trip), the objects the server froze and the full collections this child made (the
    collector's share), and the modules it imported that the server had not (PRELOAD's
    worklist)."""
    forked, go_at = started
    sent = float(request.get("sent_at", forked))
    new = sorted(set(sys.modules) - known)
    line = (f"child {os.getpid()} figures: request-to-fork {forked - sent:.4f} s, "
            f"setup {times[0] - forked:.4f} s, go-wait {go_at - times[0]:.4f} s, "
            f"main {times[-1] - go_at:.4f} s, "
            f"exit {time.time() - times[-1]:.4f} s, gc {gc.get_freeze_count()} frozen "
            f"{gc.get_stats()[2]['collections'] - full} full, {len(new)} new modules: "
            f"{' '.join(new[:40])}\n")
    os.write(log_fd, line.encode())


def _become_caller(request: dict[str, Any], fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.umask(int(request["umask"]))
    sys.argv = [str(request.get("argv0", "tfwizard")), *request["argv"]]
    signal.set_wakeup_fd(-1)
    for signum, handler in _DEFAULT_HANDLERS:
        signal.signal(signum, handler)
    random.seed()
    _new_streams()


def _new_streams() -> None:
    """sys.stdin/stdout/stderr on the caller's fds, encoded as Python would for its
    environment (PYTHONIOENCODING, UTF-8 mode, else the locale)."""
    try:
        locale.setlocale(locale.LC_CTYPE, "")
    except locale.Error:
        pass
    io_encoding = os.environ.get("PYTHONIOENCODING", "")
    encoding, _, errors = io_encoding.partition(":")
    if not encoding:
        utf8 = sys.flags.utf8_mode or os.environ.get("PYTHONUTF8") == "1"
        encoding = "utf-8" if utf8 else locale.getpreferredencoding(False)
    if not errors:
        c_locale = locale.setlocale(locale.LC_CTYPE) in ("C", "POSIX")
        errors = "surrogateescape" if c_locale or sys.flags.utf8_mode else "strict"
    streams = {"stdin": open(0, encoding=encoding, errors=errors, closefd=False),
               "stdout": open(1, "w", encoding=encoding, errors=errors, closefd=False),
               "stderr": open(2, "w", encoding=encoding, errors="backslashreplace",
                              closefd=False, buffering=1)}
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _exit(status: int, last: Callable[[], None]) -> NoReturn:
    """Leave as the interpreter would at the end of `tfwizard`, without unwinding into the
    server's code: wait for non-daemon threads, run atexit handlers, flush, _exit."""
    try:
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()
    except BaseException:  # noqa: B036
        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        last()
    except Exception:  # noqa: BLE001 - figures are never worth a failed command
        pass
    os._exit(status & 0xFF)
