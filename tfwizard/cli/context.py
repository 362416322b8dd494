"""What every command shares of the outside world (HTTPie's context.py and status.py).

`Environment` is everything a command touches outside itself (streams, variables, the
working folder), so tests pass their own; `ExitStatus` is what a command returns;
`exit_status` maps tfwizard's errors to exit statuses (the core knows nothing of them);
`arg_path` is the one rule for a path given on the command line.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..core.errors import (
    BuildCancelled,
    InstallCancelled,
    TfWizardError,
    UsageError,
    WheelIncompatible,
)


class ExitStatus(enum.IntEnum):
    """How a command ended, as the process's exit status."""

    OK = 0
    ERROR = 1  # the command ran and found problems (errors in check, a failed build)
    USAGE = 2  # bad input: arguments, recipe, profile
    CANCELLED = 130


#: the exit status of each kind of error, most specific first; any other TfWizardError
#: is ERROR
ERROR_STATUS: tuple[tuple[type[TfWizardError], ExitStatus], ...] = (
    (BuildCancelled, ExitStatus.CANCELLED),
    (InstallCancelled, ExitStatus.CANCELLED),
    (WheelIncompatible, ExitStatus.USAGE),
    (UsageError, ExitStatus.USAGE),
)


def exit_status(error: TfWizardError) -> ExitStatus:
    """The exit status an error gives: the first kind in ERROR_STATUS it is, else ERROR."""
    for kind, status in ERROR_STATUS:
        if isinstance(error, kind):
            return status
    return ExitStatus.ERROR


@dataclass
class Environment:
    """Everything a command touches of the outside world."""

    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path = field(default_factory=Path.cwd)
    #: what `-` reads (`tfwizard diagnose -`): text or binary
    stdin: IO[Any] = field(default_factory=lambda: sys.stdin)

    @property
    def stdout_isatty(self) -> bool:
        """Whether standard output is a terminal (the live progress bar goes there)."""
        isatty = getattr(self.stdout, "isatty", None)
        return bool(isatty and isatty())

    def out(self, text: str = "") -> None:
        """Print a line on standard output."""
        print(text, file=self.stdout)

    def err(self, text: str) -> None:
        """Print a line on standard error."""
        print(text, file=self.stderr)


def arg_path(env: Environment, value: str) -> Path:
    """A path given on the command line: `~` expanded, relative to where the command runs.

    (A path inside a recipe is relative to the recipe's folder instead:
    `Recipe.resolve_path`.)
    """
    path = Path(value).expanduser()
    return path if path.is_absolute() else env.cwd / path
