"""Install a requirement (`tensorflow[and-cuda]==2.20.0`) the way a built wheel is installed.

    target = resolve_target(venv="~/tf", create=True)
    result = run_installation(RequirementInstallation("tensorflow-cpu==2.20.0", target,
                                                      find_links=["wheels/"], no_index=True))

The wheel is downloaded first, with the *target's* pip (`pip download --no-deps
--only-binary :all:`), from the index, a mirror (`index_url`) or an offline folder
(`find_links`, `no_index`), into `download_dir` or a temporary folder removed afterwards.
Then it is installed as `Installation` installs a built wheel: its tags checked against
the target interpreter, `pip freeze` taken before, pip run with the requirement's extras
(the dependencies from the same index or folder), a failure compared with the freeze.
Every line and argv that reaches an event has its credentials masked (`secrets.redact`):
an index URL may carry a user and password.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from ..errors import InstallFailed, UsageError
from ..i18n import _
from ..secrets import redact
from ..streams import ThreadFeed
from .job import (
    PIP_TIMEOUT,
    Installation,
    InstallEvent,
    InstallFinished,
    InstallResult,
    InstallStarted,
    InstallTarget,
    PipLine,
    VenvCreated,
    _PipProcess,
    _remove_created_venv,
    _requirement,
    create_venv,
    index_argv,
    target_env,
    tfwizard_line,
)

#: pip's line naming the file it downloaded (or found already there)
_SAVED = re.compile(r"^\s*(?:Saved|File was already downloaded)\s+(?P<path>\S.*\.whl)\s*$")


def parse_requirement(text: str) -> Requirement | None:
    """The requirement `text` names, or None when it names a wheel file (a path or *.whl).

    Raises UsageError for text that is neither, or a requirement pip would fetch from a URL
    or only on some platforms (tfwizard installs a named release, checked first).
    """
    if "://" not in text and (text.endswith(".whl") or "/" in text or "\\" in text):
        return None
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise UsageError(_("{text}: neither a wheel file nor a requirement ({error})").format(
            text=text, error=exc),
            _("Give a .whl file, or a requirement such as tensorflow[and-cuda]==2.20.0.")) \
            from None
    if req.url or req.marker:
        raise UsageError(_("{text}: a requirement with a URL or an environment marker").format(
            text=text), _("Name the package and its version, e.g. tensorflow-cpu==2.20.0; "
                          "give a mirror with --index-url."))
    return req


def download_argv(python: Path | str, requirement: Requirement, dest: Path, *,
                  index_url: str = "", trusted_host: str = "", find_links: Sequence[str] = (),
                  no_index: bool = False) -> list[str]:
    """`python -m pip download` of the requirement's own wheel (no extras, no dependencies)."""
    argv = [str(python), "-m", "pip", "download", "--disable-pip-version-check", "--no-input",
            "--progress-bar", "off", "--no-deps", "--only-binary", ":all:", "--dest", str(dest),
            *index_argv(index_url, trusted_host, find_links, no_index)]
    return [*argv, f"{requirement.name}{requirement.specifier}"]


def downloaded_wheel(requirement: Requirement, dest: Path, lines: Sequence[str]) -> Path | None:
    """The wheel pip downloaded: the one its "Saved"/"already downloaded" line names, else
    the only wheel of that name and a matching version in `dest`."""
    for line in reversed(lines):
        m = _SAVED.match(line)
        if m:
            path = Path(m.group("path"))
            path = path if path.is_absolute() else dest / path.name
            if path.is_file():
                return path
    name = canonicalize_name(requirement.name)
    found = []
    for path in dest.glob("*.whl"):
        try:
            wheel_name, version, _build, _tags = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            continue
        if wheel_name == name and requirement.specifier.contains(version, prereleases=True):
            found.append(path)
    return found[0] if len(found) == 1 else None


class RequirementInstallation(Installation):
    """Installation of a requirement: download its wheel with the target's pip, then install
    that wheel (with the requirement's extras and `extras`) as Installation does."""

    def __init__(
        self, requirement: str | Requirement, target: InstallTarget,
        extras: Sequence[str] = (), *, download_dir: Path | None = None,
        index_url: str = "", trusted_host: str = "", find_links: Sequence[str] = (),
        no_index: bool = False, env: Any = None, timeout: float = PIP_TIMEOUT,
        wheel_only: bool = False,
    ) -> None:
        req = requirement if isinstance(requirement, Requirement) else \
            parse_requirement(requirement)
        if req is None:
            raise UsageError(_("{text} is a wheel file, not a requirement").format(
                text=requirement))
        self.requirement = req
        self.download_dir = download_dir
        super().__init__(Path(req.name), target, sorted(set(req.extras) | set(extras)),
                         index_url=index_url, trusted_host=trusted_host,
                         find_links=find_links, no_index=no_index, env=env, timeout=timeout,
                         wheel_only=wheel_only)

    @staticmethod
    def _clean(text: str) -> str:
        return redact(text)

    async def events(self) -> AsyncIterator[InstallEvent]:
        """Download, then the events of Installation.events(), every text redacted.

        Raises InstallFailed when pip cannot download the wheel (no release of that
        version, none for the target's Python and platform, the index unreachable); a venv
        this run created is removed again, on a failed install too.
        """
        loop = asyncio.get_running_loop()
        target = self.target
        created = False
        if target.create and target.venv is not None and not target.python.exists():
            await loop.run_in_executor(None, create_venv, target, self.env)
            created = True
            yield VenvCreated(str(target.venv), str(target.python))
        temp = None if self.download_dir else Path(tempfile.mkdtemp(prefix="tfwizard-wheel-"))
        dest = self.download_dir or temp
        assert dest is not None
        try:
            async for event in self._download(dest):
                yield event
            async for event in super().events():
                if isinstance(event, InstallFinished):
                    event = InstallFinished(self._finished(event.result, created))
                    self.result = event.result
                yield self._redacted(event)
        finally:
            if created and (self.result is None or not self.result.ok):
                _remove_created_venv(target)
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)

    def _redacted(self, event: InstallEvent) -> InstallEvent:
        if isinstance(event, PipLine):
            return PipLine(event.channel, self._clean(event.line))
        if isinstance(event, InstallStarted):
            return dataclasses.replace(event, argv=tuple(self._clean(a) for a in event.argv))
        return event

    async def _download(self, dest: Path) -> AsyncIterator[InstallEvent]:
        dest.mkdir(parents=True, exist_ok=True)
        argv = download_argv(self.target.python, self.requirement, dest,
                             index_url=self.index_url, trusted_host=self.trusted_host,
                             find_links=self.find_links, no_index=self.no_index)
        shown = " ".join(self._clean(a) for a in argv)
        yield tfwizard_line(_("downloading {requirement} with the target's pip: "
                              "{command}").format(requirement=self.requirement, command=shown))
        pip = _PipProcess(argv, target_env(self.env), self.timeout)
        lines: list[str] = []
        try:
            async for channel, line in ThreadFeed(pip.lines, stop=pip.stop):
                lines.append(line)
                yield PipLine(channel, self._clean(line))
        finally:
            pip.stop()
        wheel = downloaded_wheel(self.requirement, dest, lines) if pip.returncode == 0 else None
        if wheel is None:
            errors = [self._clean(x) for x in lines if x.startswith("ERROR")] or \
                [self._clean(x) for x in lines[-3:]]
            raise InstallFailed(
                _("pip could not download {requirement} for {python}: {error}").format(
                    requirement=self.requirement, python=self.target.python,
                    error=" ".join(errors) or _("status {code}").format(code=pip.returncode)),
                _("pip offers only wheels whose tags that interpreter accepts: check the "
                  "version, the Python (`tfwizard advise` says which wheels exist for the "
                  "machine), the index or the --find-links folder."))
        self.wheel = wheel.absolute()
        self.find_links = (str(dest), *self.find_links)
        yield tfwizard_line(_("downloaded {wheel}").format(wheel=wheel.name))

    def _pip_requirement(self) -> str:
        """The requirement's name, extras and the downloaded wheel's version (found in the
        download folder): pip records it as installed from the index, not from a file."""
        _requirement(self.wheel, self.extras)  # the extras' names checked
        version = parse_wheel_filename(self.wheel.name)[1]
        extras = f"[{','.join(self.extras)}]" if self.extras and not self.wheel_only else ""
        return f"{self.requirement.name}{extras}=={version}"

    def _finished(self, result: InstallResult, created: bool) -> InstallResult:
        """The result as the requirement's: what was asked for, and the venv this run made."""
        message = self._clean(result.message)
        if created and not result.ok:
            message += _(" The venv {path} this run created was removed.").format(
                path=self.target.venv)
        return dataclasses.replace(result, requirement=str(self.requirement), message=message,
                                   venv_created=created and result.ok)
