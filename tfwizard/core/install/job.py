"""Install a wheel into a target interpreter with pip, streaming pip's output as events.

    target = resolve_target(venv="~/tf", create=True)
    result = install_wheel("tensorflow-2.18.0-cp311-cp311-linux_x86_64.whl", target,
                           extras=["and-cuda"], reporter=print)

`install_events()` is the async generator (blocking pipe reads run in a thread and cross
to the loop as data); `install_wheel()` drives it for synchronous callers. Before pip runs,
the wheel's tags are checked against `packaging.tags.sys_tags()` evaluated *in the target
interpreter*; a wheel that cannot run there is refused. The interpreter running tfwizard
is never a target unless the caller names it as `python` explicitly.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InstallCancelled, InstallFailed, UsageError
from ..i18n import _
from ..streams import TFWIZARD, ThreadFeed
from .events import (
    InstallEvent,
    InstallFinished,
    InstallProgress,
    InstallResult,
    InstallStarted,
    PipLine,
    PipProgress,
    VenvCreated,
    install_phase_name,
)
from .piprun import _PipProcess, _requirement, index_argv, pip_argv
from .target import (
    FREEZE_TIMEOUT,
    PIP_TIMEOUT,
    TAGS_TIMEOUT,
    VENV_TIMEOUT,
    InstallTarget,
    InterpreterTags,
    base_python,
    check_wheel,
    create_venv,
    freeze_diff,
    interpreter_tags,
    pip_freeze,
    resolve_target,
    target_env,
    venv_python,
)

__all__ = ["FREEZE_TIMEOUT", "InstallEvent", "InstallFinished", "InstallProgress", "InstallResult",
           "InstallStarted", "InstallTarget", "Installation", "InterpreterTags",
           "PIP_TIMEOUT", "PipLine", "PipProgress", "Reporter", "TAGS_TIMEOUT",
           "VENV_TIMEOUT", "VenvCreated", "base_python", "check_wheel", "create_venv",
           "freeze_diff", "index_argv", "install_cancelled", "install_events",
           "install_phase_name", "install_wheel", "interpreter_tags", "pip_argv",
           "pip_freeze", "resolve_target", "run_installation", "target_env",
           "tfwizard_line", "venv_python"]


class Installation:
    """One install of `wheel[extras]` into `target`: `events()` runs it, `result` tells how
    it ended (set on success, failure and cancellation alike)."""

    def __init__(
        self, wheel: str | os.PathLike[str], target: InstallTarget,
        extras: Sequence[str] = ("and-cuda",), *, index_url: str = "", trusted_host: str = "",
        find_links: Sequence[str] = (), no_index: bool = False,
        env: Mapping[str, str] | None = None, timeout: float = PIP_TIMEOUT,
        check_tags: bool = True, wheel_only: bool = False,
    ) -> None:
        self.wheel = Path(wheel).expanduser().absolute()
        self.target = target
        self.extras = tuple(extras)
        self.index_url = index_url
        self.trusted_host = trusted_host
        self.find_links = tuple(str(x) for x in find_links)
        self.no_index = no_index
        self.env = target_env(env)
        self.timeout = timeout
        self.check_tags = check_tags
        self.wheel_only = wheel_only
        self.result: InstallResult | None = None
        self._cancelled = threading.Event()
        self._pip: _PipProcess | None = None

    def cancel(self) -> None:
        """Stop the install from any thread: pip gets SIGTERM (then SIGKILL), and events()
        ends with an InstallFinished whose status is "cancelled"."""
        self._cancelled.set()
        pip = self._pip
        if pip is not None:  # stop() waits for pip to roll back: not on the caller's thread
            threading.Thread(target=pip.stop, name="pip-stop", daemon=True).start()

    def _freeze(self, python: Path, env: Mapping[str, str] | None = None) -> list[str]:
        """The environment's packages before and after pip: `pip freeze`, or for a
        wheel-only reinstall the interpreter's own list (reinstall.dist_list, no pip
        start-up: about a second less on the loop's path)."""
        if not self.wheel_only:
            return pip_freeze(python, env)
        from .reinstall import dist_list

        return dist_list(python, target_env(env))

    def _pip_requirement(self) -> str:
        """What pip installs: the wheel file with its extras (none with wheel_only: no
        dependency resolution at all)."""
        return _requirement(self.wheel, () if self.wheel_only else self.extras)

    def _ended(self, pip: _PipProcess, requirement: str) -> tuple[str, str]:
        """How pip's run ended: (status, message)."""
        if self._cancelled.is_set():
            return "cancelled", _("cancelled; pip was stopped")
        if pip.timed_out:
            return "failed", _("pip did not finish within {timeout:g} s").format(
                timeout=self.timeout)
        if pip.returncode == 0:
            return "installed", _("installed {requirement} into {python}").format(
                requirement=requirement, python=self.target.python)
        return "failed", _("pip exited with status {code}").format(code=pip.returncode)

    def _undo(self, created: bool, before: Sequence[str]
              ) -> tuple[bool | None, tuple[str, ...], str]:
        """After a run that did not install: a venv this run made is removed; otherwise
        `pip freeze` says whether the interpreter changed. (unchanged, changes, note)"""
        target = self.target
        if created:
            _remove_created_venv(target)
            return True, (), _(" The venv {path} this run created was removed.").format(
                path=target.venv)
        unchanged, changes = _compare_freeze(target.python, before, self.env, self._freeze)
        return unchanged, tuple(changes), _freeze_note(unchanged, changes)

    async def events(self) -> AsyncIterator[InstallEvent]:
        """Run the install, yielding events; the last is InstallFinished (unless cancelled).

        Raises before pip runs (UsageError, WheelIncompatible, InstallFailed) when the wheel
        is missing, its tags do not fit the interpreter, or the target cannot be prepared.
        A failed or cancelled pip run is compared with `pip freeze` taken before it; a venv
        this run created is removed again.
        """
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        target = self.target
        if not self.wheel.is_file():
            raise UsageError(_("{path}: no such wheel").format(path=self.wheel),
                             _("Give the path of a .whl file."))
        requirement = self._pip_requirement()
        created = False
        to_create = target.create and target.venv is not None and not target.python.exists()
        if self.check_tags:  # before anything is made: a new venv takes its base's tags
            tags = await loop.run_in_executor(
                None, interpreter_tags, base_python(target) if to_create else target.python,
                self.env)
            check_wheel(self.wheel, tags)
        if to_create:
            await loop.run_in_executor(None, create_venv, target, self.env)
            created = True
            yield VenvCreated(str(target.venv), str(target.python))
        try:
            before = await loop.run_in_executor(None, self._freeze, target.python, self.env)
        except BaseException:
            if created:
                _remove_created_venv(target)
            raise
        argv = pip_argv(target.python, requirement, index_url=self.index_url,
                        trusted_host=self.trusted_host, find_links=self.find_links,
                        no_index=self.no_index, wheel_only=self.wheel_only)
        pip = _PipProcess(argv, self.env, self.timeout)
        self._pip = pip
        if self._cancelled.is_set():  # cancel() came before there was a pip to stop
            pip.stop()
        progress = PipProgress()
        last: InstallProgress | None = None
        status, message = "cancelled", _("cancelled; pip was stopped")
        try:
            yield InstallStarted(str(target.python), str(self.wheel), requirement, tuple(argv))
            async for channel, line in ThreadFeed(pip.lines, stop=pip.stop):
                yield PipLine(channel, line)
                snap = progress.feed(line)
                if snap is not None:
                    last = snap
                    yield snap
            status, message = self._ended(pip, requirement)
        except InstallFailed as exc:
            status, message = "failed", exc.message
        finally:
            # runs on cancellation too (CancelledError, aclose()): stop pip, then check
            if status != "installed":
                pip.stop()
            unchanged, changes, note = (None, (), "") if status == "installed" else \
                self._undo(created, before)
            self.result = InstallResult(
                status=status, python=str(target.python), wheel=str(self.wheel),
                requirement=requirement, venv=str(target.venv) if target.venv else None,
                venv_created=created and status == "installed", exit_code=pip.returncode,
                message=message + note, installed=progress.installed, unchanged=unchanged,
                changes=changes, freeze_before=tuple(before),
                elapsed_s=round(time.monotonic() - started, 2), progress=last,
            )
        yield InstallFinished(self.result)


def install_events(
    wheel: str | os.PathLike[str], target: InstallTarget, extras: Sequence[str] = ("and-cuda",),
    **options: Any,
) -> AsyncIterator[InstallEvent]:
    """Installation(wheel, target, extras, **options).events(): the async generator."""
    return Installation(wheel, target, extras, **options).events()


def _remove_created_venv(target: InstallTarget) -> None:
    if target.venv is not None and target.venv.is_dir():
        shutil.rmtree(target.venv, ignore_errors=True)


def _compare_freeze(python: Path, before: Sequence[str], env: Mapping[str, str],
                    freeze: Callable[..., list[str]] = pip_freeze
                    ) -> tuple[bool | None, tuple[str, ...]]:
    try:
        after = freeze(python, env)
    except InstallFailed:
        return None, ()
    changes = tuple(freeze_diff(before, after))
    return not changes, changes


def _freeze_note(unchanged: bool | None, changes: Sequence[str]) -> str:
    if unchanged is None or unchanged and not changes:
        return "" if unchanged is None else _(" The environment is as it was (pip freeze "
                                              "unchanged).")
    return _(" pip left the environment changed: {changes}. Restore with `PY -m pip install` "
             "of the '-' lines and `PY -m pip uninstall` of the '+' lines.").format(
        changes=", ".join(changes[:20]))


Reporter = Callable[[InstallEvent], None]


def install_cancelled(result: InstallResult) -> InstallCancelled:
    """The error for an install interrupted by Ctrl-C, with the result it left."""
    return InstallCancelled(_("install cancelled: {message}").format(message=result.message),
                            result)


def install_wheel(
    wheel: str | os.PathLike[str], target: InstallTarget, extras: Sequence[str] = ("and-cuda",),
    *, index_url: str = "", trusted_host: str = "", find_links: Sequence[str] = (),
    no_index: bool = False, env: Mapping[str, str] | None = None,
    reporter: Reporter | None = None, timeout: float = PIP_TIMEOUT, wheel_only: bool = False,
) -> InstallResult:
    """Synchronous install: report every event to `reporter`, return the InstallResult.

    Raises UsageError / WheelIncompatible / InstallFailed before pip runs, and
    InstallCancelled (with the result) on Ctrl-C; a pip failure is a result with status
    "failed", not an exception. Not for use inside a running event loop: use
    `Installation(...).events()` there.
    """
    return run_installation(Installation(wheel, target, extras, index_url=index_url,
                                         trusted_host=trusted_host, find_links=find_links,
                                         no_index=no_index, env=env, timeout=timeout,
                                         wheel_only=wheel_only),
                            reporter)


def run_installation(installation: Installation,
                     reporter: Reporter | None = None) -> InstallResult:
    """Run an Installation (or a subclass) to its end, reporting every event; see
    `install_wheel` for what it raises."""

    async def drive() -> None:
        async for event in installation.events():
            if reporter is not None:
                reporter(event)

    try:
        asyncio.run(drive())
    except KeyboardInterrupt:
        if installation.result is not None:
            raise install_cancelled(installation.result) from None
        raise
    if installation.result is None:  # pragma: no cover - events() always sets it
        raise InstallFailed(_("the install ended without a result"))
    return installation.result


def tfwizard_line(text: str) -> PipLine:
    """A line tfwizard itself says, in the same stream as pip's."""
    return PipLine(TFWIZARD, text)
