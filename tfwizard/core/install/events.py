"""What an installation reports: its events, its result, and pip's progress read from its
output."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..i18n import _
from ..jobs import Event

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


