"""The events a log's diagnosis adds to a build's: a known failure matched, or a failure
no signature explains. They are long-job events (core/jobs.py), so a build yields them
beside its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..jobs import Event
from ..vocab import Severity


@dataclass(frozen=True)
class DiagnosisEvent(Event):
    """A known failure signature matched in the log (see diagnose.py)."""

    type: ClassVar[str] = "finding"  # the name scripts reading `--json` already know
    id: str
    title: str
    cause: str
    next_step: str
    lines: tuple[int, ...] = ()
    #: concrete recipe values (resolved against the plan that ran); {} when none
    recipe_fix: dict[str, Any] = field(default_factory=dict)
    fix_problem: str = ""  # why a known fix cannot apply to this build
    severity: Severity = "error"  # or "warning": the build went past it (a broken cache)
    excerpt: tuple[str, ...] = ()  # the log's own words (the lines that matched, and after)


@dataclass(frozen=True)
class UnrecognisedEvent(Event):
    """A failed build whose log no failure signature explains: the log's root-cause lines
    and a search query (unrecognised.py). Not a diagnosis: no id, cause or fix."""

    type: ClassVar[str] = "unrecognised"
    kind: str  # build
    #: (line number, text, speaker) of each root-cause line, in log order
    lines: tuple[tuple[int, str, str], ...] = ()
    query: str = ""
    #: (line number, text) of the log's last lines, when no line looked like an error
    tail: tuple[tuple[int, str], ...] = ()
    recognised: bool = False  # always: the JSON says so to whoever reads it
