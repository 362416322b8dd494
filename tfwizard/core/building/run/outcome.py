"""How a build ended, decided from facts alone: a pure function, testable without Docker.

The runner gathers the facts (was it cancelled, the last step's name and exit code, did
the engine report an out-of-memory kill, which wheels came out) and `classify` turns them
into the build's status and the one-line message the record, the CLI and the GUI show.
`wants_wheels` says whether the runner should copy wheels out at all; `from_error` maps
an error that stopped the build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import BuildCancelled, TfWizardError
from ...i18n import _
from ...vocab import BuildStatus


@dataclass(frozen=True)
class Outcome:
    """A build's status, the message saying why, and the wheel it handed out (if any)."""

    status: BuildStatus
    message: str
    wheel: str | None = None


def wants_wheels(*, cancelled: bool, exit_code: int | None, wheel_dir: str) -> bool:
    """True when the steps all passed and the plan makes a wheel: time to copy it out."""
    return not cancelled and exit_code == 0 and bool(wheel_dir)


def classify(*, cancelled: bool, exit_code: int | None, last_step: str, oom: bool,
             wheel_dir: str, wheels: Sequence[str] = (), mismatch: str = "") -> Outcome:
    """The outcome of a build whose steps ran (or were stopped) without an error.

    `wheels` are the wheels copied out (oldest first), only looked at when
    `wants_wheels(...)` held; the last one is the build's wheel. `mismatch`: what that
    wheel says that its recipe did not ask for (wheelgate.py): the build failed, and
    hands out no wheel (the file stays where it was copied).
    """
    if cancelled:
        return Outcome("cancelled", _("cancelled by the user"))
    if exit_code != 0:
        return Outcome("failed", _failed_step(last_step, exit_code, oom))
    if not wheel_dir:  # a plan that makes no wheel (tfwizard fetch)
        return Outcome("succeeded", _("every step passed (this plan makes no wheel)"))
    if wheels and mismatch:
        return Outcome("failed", _("the wheel does not match the recipe: {difference} (the "
                                   "wheel is kept at {path}; wheel-check.json in the record "
                                   "has every fact)").format(difference=mismatch,
                                                             path=wheels[-1]))
    if wheels:
        wheel = str(wheels[-1])
        return Outcome("succeeded", _("wheel: {path}").format(path=wheel), wheel)
    return Outcome("failed", _("the build produced no wheel in {path}").format(path=wheel_dir))


def from_error(error: TfWizardError, *, cancelled: bool) -> Outcome:
    """The outcome of a build an error stopped (a cancel during an engine call included)."""
    if isinstance(error, BuildCancelled):
        return Outcome("cancelled", error.message)
    if cancelled:
        return Outcome("cancelled", _("cancelled by the user"))
    return Outcome("error", str(error))


def _failed_step(step: str, code: int | None, oom: bool) -> str:
    if oom:
        return _("step {step} was killed (exit {code}): out of memory (the container's memory "
                 "limit); lower build.jobs in the recipe (e.g. halve it), or give the build more "
                 "memory").format(step=step, code=code)
    if code == 137:
        return _("step {step} was killed (exit {code}): most likely out of memory; lower "
                 "build.jobs in the recipe (e.g. halve it), or give the build more "
                 "memory").format(step=step, code=code)
    return _("step {step} exited with {code}").format(step=step, code=code)
