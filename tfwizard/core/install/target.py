"""Where a wheel is installed: the target interpreter (a venv, made when asked), its
supported tags and the wheel checked against them, and `pip freeze` before and after."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from ..errors import InstallFailed, UsageError, WheelIncompatible
from ..i18n import _

VENV_TIMEOUT = 300.0
TAGS_TIMEOUT = 60.0
FREEZE_TIMEOUT = 120.0
#: pip downloads TensorFlow and the CUDA libraries (gigabytes); a slow mirror takes long
PIP_TIMEOUT = 3 * 3600.0
_FOREIGN_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")

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


