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
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from ..errors import InstallCancelled, InstallFailed, UsageError, WheelIncompatible
from ..i18n import _
from ..jobs import Event
from ..streams import STDERR, STDOUT, TFWIZARD, LineSplitter, ThreadFeed

VENV_TIMEOUT = 300.0
TAGS_TIMEOUT = 60.0
FREEZE_TIMEOUT = 120.0
#: pip downloads TensorFlow and the CUDA libraries (gigabytes); a slow mirror takes long
PIP_TIMEOUT = 3 * 3600.0
_FOREIGN_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")
_EXTRA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

#: runs in the target interpreter: its supported tags, best first. pip vendors packaging,
#: so a fresh venv without `packaging` still answers.
_TAGS_SCRIPT = """\
import json, platform, sys
try:
    from packaging import tags
except ImportError:
    from pip._vendor.packaging import tags
print(json.dumps({"tags": [str(t) for t in tags.sys_tags()],
    "version": platform.python_version(), "implementation": platform.python_implementation(),
    "platform": sys.platform, "machine": platform.machine(), "executable": sys.executable,
    "prefix": sys.prefix}))
"""


# -- targets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstallTarget:
    """Where a wheel goes: an interpreter, and the venv it belongs to (when one was named)."""

    python: Path
    venv: Path | None = None
    #: create the venv first (python -m venv) when it does not exist
    create: bool = False
    #: the interpreter that creates the venv (default: tfwizard's base interpreter)
    base_python: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        """The target as JSON data (paths as text)."""
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}


def venv_python(venv: Path) -> Path:
    """The interpreter of a virtualenv (bin/python, Scripts/python.exe on Windows)."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _same_path(a: Path | str, b: Path | str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def resolve_target(*, venv: str | os.PathLike[str] | None = None,
                   python: str | os.PathLike[str] | None = None,
                   create: bool = False) -> InstallTarget:
    """Check and describe the install target; raises UsageError with what to do."""
    if not venv and not python:
        raise UsageError(_("no install target: name a venv or an interpreter"),
                         _("Pass --venv DIR (add --create to make it) or --python PATH; "
                           "tfwizard never installs into its own interpreter by default."))
    if venv:
        vdir = Path(venv).expanduser().absolute()
        if _same_path(vdir, sys.prefix):
            raise UsageError(
                _("{path} is the environment tfwizard itself runs in").format(path=vdir),
                _("To install there on purpose, name its interpreter: --python {python}").format(
                    python=sys.executable))
        py = venv_python(vdir)
        if not py.exists():
            if not create:
                raise UsageError(
                    _("{path}: no virtual environment there ({python} is missing)").format(
                        path=vdir, python=py),
                    _("Add --create to make it, or name an existing venv."))
            if vdir.exists() and any(vdir.iterdir()):
                raise UsageError(
                    _("{path}: exists, is not empty and is not a venv").format(path=vdir),
                    _("Choose a new folder for --venv."))
        base = Path(python).expanduser() if python else None
        return InstallTarget(py, vdir, create and not py.exists(), base)
    assert python is not None
    py = Path(python).expanduser()
    if not py.is_absolute():
        found = shutil.which(str(py)) if os.sep not in str(py) else None
        py = Path(found) if found else py.absolute()
    if not py.exists():
        raise UsageError(_("{path}: no such interpreter").format(path=py),
                         _("Give the path of a python executable."))
    if create:
        raise UsageError(_("--create needs --venv DIR"), _("Name the venv folder to create."))
    return InstallTarget(py, None, False, None)


def target_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of pip and probes: the caller's (proxies, PIP_* settings included),
    minus variables that describe tfwizard's own interpreter."""
    return {k: v for k, v in (os.environ if env is None else env).items()
            if k not in _FOREIGN_ENV}


def _run(argv: Sequence[str], timeout: float, env: Mapping[str, str],
         what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(argv), capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=dict(env), stdin=subprocess.DEVNULL,
                              check=False)
    except subprocess.TimeoutExpired:
        raise InstallFailed(_("{what}: no answer within {timeout:g} s").format(
                                what=what, timeout=timeout),
                            _("Command: {command}").format(command=" ".join(argv))) from None
    except OSError as exc:
        raise InstallFailed(_("{what}: cannot run {program}: {error}").format(
            what=what, program=argv[0], error=exc.strerror or exc)) from None


def base_python(target: InstallTarget) -> Path:
    """The interpreter that creates the target's venv (its base_python, else tfwizard's)."""
    return target.base_python or Path(getattr(sys, "_base_executable", "") or sys.executable)


def create_venv(target: InstallTarget, env: Mapping[str, str] | None = None) -> Path:
    """python -m venv DIR (with pip); returns the venv's interpreter."""
    assert target.venv is not None
    base = base_python(target)
    done = _run([str(base), "-m", "venv", str(target.venv)], VENV_TIMEOUT, target_env(env),
                _("creating the venv"))
    if done.returncode != 0 or not target.python.exists():
        raise InstallFailed(_("cannot create the venv {path}: {output}").format(
                                path=target.venv,
                                output=(done.stderr or done.stdout).strip()[-500:]),
                            _("On Debian/Ubuntu install python3-venv; or create it yourself "
                              "and pass --venv without --create."))
    return target.python


# -- tags ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InterpreterTags:
    """What an interpreter accepts: version, implementation, platform and wheel tags."""

    python: str
    version: str
    implementation: str
    platform: str
    machine: str
    tags: tuple[str, ...]  # best first

    def describe(self) -> str:
        """One line naming the interpreter, for messages."""
        return _("{implementation} {version} on {platform} {machine}").format(
            implementation=self.implementation, version=self.version, platform=self.platform,
            machine=self.machine)


def interpreter_tags(python: Path | str, env: Mapping[str, str] | None = None) -> InterpreterTags:
    """The tags `python` accepts, from packaging.tags.sys_tags() run in that interpreter."""
    import json

    done = _run([str(python), "-c", _TAGS_SCRIPT], TAGS_TIMEOUT, target_env(env),
                _("asking {python} for its wheel tags").format(python=python))
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
        return InterpreterTags(str(python), data["version"], data["implementation"],
                               data["platform"], data["machine"], tuple(data["tags"]))
    except (ValueError, KeyError, IndexError, TypeError):
        raise InstallFailed(
            _("{python} could not tell its wheel tags (status {status}): {output}").format(
                python=python, status=done.returncode,
                output=(done.stderr or done.stdout).strip()[-400:] or _("no output")),
            _("Is it a working Python with pip? Try `PY -m pip --version`.")) from None


def check_wheel(wheel: Path, tags: InterpreterTags) -> None:
    """Raise WheelIncompatible unless one of the wheel's tags runs in that interpreter."""
    try:
        _name, _version, _build, wheel_tags = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as exc:
        raise UsageError(_("{name}: not a wheel file name ({error})").format(name=wheel.name,
                                                                            error=exc),
                         _("Wheels are named NAME-VERSION-PYTAG-ABITAG-PLATFORM.whl.")) from None
    supported = set(tags.tags)
    if any(str(t) in supported for t in wheel_tags):
        return
    parsed = [Tag(*t.split("-", 2)) for t in tags.tags]
    py_ok = {(t.interpreter, t.abi) for t in parsed}
    platforms = {t.platform for t in parsed}
    problems = []
    wanted = sorted(str(t) for t in wheel_tags)
    if not any((t.interpreter, t.abi) in py_ok for t in wheel_tags):
        mine = parsed[0] if parsed else None
        here = f"{mine.interpreter}-{mine.abi}" if mine else "?"
        theirs = ", ".join(sorted({f"{t.interpreter}-{t.abi}" for t in wheel_tags}))
        problems.append(_("its Python tag {tags} does not run on {interpreter} (which takes "
                          "{here})").format(tags=theirs, interpreter=tags.describe(), here=here))
    if not any(t.platform in platforms for t in wheel_tags):
        theirs = ", ".join(sorted({t.platform for t in wheel_tags}))
        shown = _platform_summary(parsed)
        problems.append(_("its platform tag {tags} does not run on this machine ({platform} "
                          "{machine}, which takes {accepted})").format(
                              tags=theirs, platform=tags.platform, machine=tags.machine,
                              accepted=shown))
    if not problems:
        problems.append(_("no combination of its tags {tags} is accepted (best here: "
                          "{best})").format(tags=", ".join(wanted),
                                            best=tags.tags[0] if tags.tags else "?"))
    raise WheelIncompatible(
        _("refusing to install {wheel} into {python}: {problems}").format(
            wheel=wheel.name, python=tags.python, problems=_("; and ").join(problems)),
        _("Build the wheel for this interpreter (the recipe's python.version and the build "
          "host's platform), or install it into a matching interpreter with --python/--venv."))


def _platform_summary(parsed: list[Tag]) -> str:
    seen: list[str] = []
    for t in parsed:
        if t.platform not in seen:
            seen.append(t.platform)
    if len(seen) > 4:
        return _("{first}, ... {last} ({count} platforms)").format(
            first=", ".join(seen[:2]), last=seen[-1], count=len(seen))
    return ", ".join(seen)


# -- freeze ----------------------------------------------------------------------------------


def pip_freeze(python: Path | str, env: Mapping[str, str] | None = None) -> list[str]:
    """`python -m pip freeze --all`, sorted; raises InstallFailed when pip cannot run."""
    done = _run([str(python), "-m", "pip", "freeze", "--all", "--disable-pip-version-check"],
                FREEZE_TIMEOUT, target_env(env), f"{python} -m pip freeze")
    if done.returncode != 0:
        raise InstallFailed(_("{python} -m pip freeze failed: {error}").format(
                                python=python, error=done.stderr.strip()[-400:]),
                            _("Is pip installed there? Try `{python} -m ensurepip`.").format(
                                python=python))
    return sorted(line for line in done.stdout.splitlines() if line.strip())


def freeze_diff(before: Sequence[str], after: Sequence[str]) -> list[str]:
    """Changes between two freezes: "+line" added, "-line" removed."""
    b, a = set(before), set(after)
    return [f"-{x}" for x in sorted(b - a)] + [f"+{x}" for x in sorted(a - b)]


# -- events ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstallEvent(Event):
    """Base of the install's events (core/jobs.py's Event: a `type` and to_dict())."""


@dataclass(frozen=True)
class InstallStarted(InstallEvent):
    """The installation started: into which interpreter, which wheel."""

    type: ClassVar[str] = "started"
    python: str
    wheel: str
    requirement: str  # what pip is asked for: "/path/x.whl[and-cuda]"
    argv: tuple[str, ...]


@dataclass(frozen=True)
class VenvCreated(InstallEvent):
    """A virtualenv was made for the wheel."""

    type: ClassVar[str] = "venv"
    path: str
    python: str


@dataclass(frozen=True)
class PipLine(InstallEvent):
    """One line pip wrote (channel stdout | stderr) or tfwizard said (tfwizard)."""

    type: ClassVar[str] = "log"
    channel: str
    line: str


@dataclass(frozen=True)
class InstallProgress(InstallEvent):
    """pip's progress: phase and package counts."""

    type: ClassVar[str] = "progress"
    phase: str  # resolve | download | install | done
    collected: int = 0
    downloaded: int = 0
    cached: int = 0
    satisfied: int = 0
    to_install: int = 0
    message: str = ""

    def summary(self) -> str:
        """The counts as one line."""
        parts = [_("{count} collected").format(count=self.collected),
                 _("{count} downloaded").format(count=self.downloaded)]
        if self.cached:
            parts.append(_("{count} cached").format(count=self.cached))
        if self.satisfied:
            parts.append(_("{count} already satisfied").format(count=self.satisfied))
        if self.to_install:
            parts.append(_("{count} to install").format(count=self.to_install))
        return f"[{install_phase_name(self.phase)}] " + ", ".join(parts)


@dataclass(frozen=True)
class InstallResult:
    """How an installation ended."""

    #: installed | failed | cancelled
    status: str
    python: str
    wheel: str
    requirement: str
    venv: str | None = None
    venv_created: bool = False
    exit_code: int | None = None
    message: str = ""
    installed: tuple[str, ...] = ()  # "name-version" from "Successfully installed ..."
    #: after a failure: True when `pip freeze` is as before, False when not, None unknown
    unchanged: bool | None = None
    changes: tuple[str, ...] = ()  # freeze_diff(before, after) after a failure
    freeze_before: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    progress: InstallProgress | None = None

    @property
    def ok(self) -> bool:
        """Whether the wheel was installed."""
        return self.status == "installed"

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON data."""
        return asdict(self)


@dataclass(frozen=True)
class InstallFinished(InstallEvent):
    """The last event: the result."""

    type: ClassVar[str] = "finished"
    result: InstallResult


def install_phase_name(phase: str) -> str:
    """An install phase (resolve | download | install | done) as a person reads it."""
    names = {"resolve": _("resolve"), "download": _("download"), "install": _("install"),
             "done": _("done")}
    return names.get(phase, phase)


class PipProgress:
    """Counts pip's resolver/download/install lines into an InstallProgress."""

    _PATTERNS = (
        ("collected", re.compile(r"^\s*(Collecting|Processing) ")),
        ("downloaded", re.compile(r"^\s*Downloading ")),
        ("cached", re.compile(r"^\s*Using cached ")),
        ("satisfied", re.compile(r"^\s*Requirement already satisfied: ")),
    )
    _INSTALLING = re.compile(r"^\s*Installing collected packages: (?P<names>.+)$")
    _SUCCESS = re.compile(r"^\s*Successfully installed (?P<names>.+)$")

    def __init__(self) -> None:
        self.counts = {"collected": 0, "downloaded": 0, "cached": 0, "satisfied": 0}
        self.to_install = 0
        self.phase = "resolve"
        self.installed: tuple[str, ...] = ()
        self.message = ""

    def feed(self, line: str) -> InstallProgress | None:
        """The new progress when this line changed it, else None."""
        for key, pattern in self._PATTERNS:
            if pattern.match(line):
                self.counts[key] += 1
                if key in ("downloaded", "cached"):
                    self.phase = "download"
                self.message = line.strip()
                return self.snapshot()
        m = self._INSTALLING.match(line)
        if m:
            self.to_install = len([n for n in m.group("names").split(",") if n.strip()])
            self.phase = "install"
            self.message = line.strip()
            return self.snapshot()
        m = self._SUCCESS.match(line)
        if m:
            self.installed = tuple(m.group("names").split())
            self.phase = "done"
            self.message = line.strip()
            return self.snapshot()
        return None

    def snapshot(self) -> InstallProgress:
        """The progress so far as an event."""
        return InstallProgress(self.phase, to_install=self.to_install, message=self.message,
                               **self.counts)


def _requirement(wheel: Path, extras: Sequence[str]) -> str:
    for extra in extras:
        if not _EXTRA.match(extra):
            raise UsageError(_("extra {extra!r} is not a valid name").format(extra=extra),
                             _("Example: --extras and-cuda"))
    return str(wheel) + (f"[{','.join(extras)}]" if extras else "")


def index_argv(index_url: str = "", trusted_host: str = "", find_links: Sequence[str] = (),
               no_index: bool = False) -> list[str]:
    """pip's options for where packages come from: an index (a mirror), folders, offline."""
    argv = ["--index-url", index_url] if index_url else []
    if trusted_host:
        argv += ["--trusted-host", trusted_host]
    for link in find_links:
        argv += ["--find-links", str(link)]
    return [*argv, "--no-index"] if no_index else argv


def pip_argv(python: Path | str, requirement: str, *, index_url: str = "",
             trusted_host: str = "", find_links: Sequence[str] = (), no_index: bool = False,
             upgrade: bool = False, wheel_only: bool = False) -> list[str]:
    """The pip command line (an argv list; nothing goes through a shell).

    wheel_only: replace the installed TensorFlow with this wheel and touch nothing else
    (`--no-deps --force-reinstall`; the rebuild loop: the venv has the deps).
    """
    argv = [str(python), "-m", "pip", "install", "--disable-pip-version-check",
            "--no-input", "--progress-bar", "off",
            # wheel_only: a local file and nothing else: no index, no links to look at
            *(["--no-index"] if wheel_only else
              index_argv(index_url, trusted_host, find_links, no_index))]
    if upgrade:
        argv.append("--upgrade")
    if wheel_only:
        argv += ["--no-deps", "--force-reinstall"]
    argv.append(requirement)
    return argv


class _PipProcess:
    """pip as a child process whose two pipes are read by two threads into one queue."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], timeout: float) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.timed_out = False
        self._stopped = threading.Event()

    def lines(self) -> Iterator[tuple[str, str]]:
        """(channel, line) until pip exits; blocking, meant for a worker thread."""
        if self._stopped.is_set():  # stopped before it started: never start it
            return
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env=self.env, start_new_session=True)
        except OSError as exc:
            raise InstallFailed(_("cannot run {program}: {error}").format(
                program=self.argv[0], error=exc.strerror or exc)) from None
        if self._stopped.is_set():  # stop() ran while the process was being made
            self.stop()
        items: queue.Queue[tuple[str, str] | None] = queue.Queue()
        readers = [threading.Thread(target=self._read, args=(stream, channel, items),
                                    daemon=True)
                   for stream, channel in ((self.proc.stdout, STDOUT),
                                           (self.proc.stderr, STDERR))]
        for r in readers:
            r.start()
        deadline = time.monotonic() + self.timeout
        open_streams = len(readers)
        while open_streams:
            try:
                item = items.get(timeout=0.5)
            except queue.Empty:
                if time.monotonic() > deadline and not self.timed_out:
                    self.timed_out = True
                    self.stop()
                continue
            if item is None:
                open_streams -= 1
            else:
                yield item
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stop()
            self.proc.wait(timeout=30)

    @staticmethod
    def _read(stream: Any, channel: str, items: queue.Queue[tuple[str, str] | None]) -> None:
        splitter = LineSplitter()
        try:
            while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
                for line in splitter.feed(chunk):
                    items.put((channel, line))
            for line in splitter.flush():
                items.put((channel, line))
        finally:
            items.put(None)

    def stop(self) -> None:
        """Stop pip (SIGTERM lets it roll back the package it is on), then kill."""
        self._stopped.set()
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode if self.proc is not None else None


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
            code = pip.returncode
            if self._cancelled.is_set():
                pass  # status stays "cancelled"
            elif pip.timed_out:
                status = "failed"
                message = _("pip did not finish within {timeout:g} s").format(
                    timeout=self.timeout)
            elif code == 0:
                status = "installed"
                message = _("installed {requirement} into {python}").format(
                    requirement=requirement, python=target.python)
            else:
                status, message = "failed", _("pip exited with status {code}").format(code=code)
        except InstallFailed as exc:
            status, message = "failed", exc.message
        finally:
            # runs on cancellation too (CancelledError, aclose()): stop pip, then check
            if status != "installed":
                pip.stop()
            unchanged: bool | None = None
            changes: tuple[str, ...] = ()
            note = ""
            if status != "installed":
                if created:
                    _remove_created_venv(target)
                    unchanged = True
                    note = _(" The venv {path} this run created was removed.").format(
                        path=target.venv)
                else:
                    unchanged, changes = _compare_freeze(target.python, before, self.env,
                                                         self._freeze)
                    note = _freeze_note(unchanged, changes)
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
