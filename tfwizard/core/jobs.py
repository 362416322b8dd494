"""The one shape of a long job: a build, an install, a verification.

    job = BuildRunner(plan)            # or Installation(...), Verification(...)
    async for event in job.events():   # events as they happen; the last one carries
        ...                            # the result (Finished, InstallFinished, ...)
    job.cancel()                       # from any thread: stop it; events() ends soon
    job.result                         # how it ended (None until it has)

The CLI follows any job with one loop (`cli.follow`), the GUI adapts any job's events to
its widgets; both cancel the same way. Events are frozen dataclasses with a `type` name
and `to_dict()` for JSON (Orange3's TaskState, docker-compose's QueueItem).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class Event:
    """Base of every event a job yields: a `type` name and its fields as JSON."""

    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON object: {"type": ..., fields...}."""
        return {"type": self.type, **asdict(self)}


class JobResult(Protocol):
    """What every job's result says."""

    @property
    def status(self) -> str:
        """How the job ended (a vocab word)."""

    @property
    def ok(self) -> bool:
        """Whether it succeeded."""


class Job(Protocol):
    """A long job: its events, a way to stop it, and how it ended."""

    @property
    def result(self) -> Any:
        """The result once events() has ended."""

    def events(self) -> AsyncIterator[Any]:
        """The job's events, its result last."""

    def cancel(self) -> None:
        """Ask the job to stop; events() then ends with a cancelled result."""


def run_blocking(job: Job, on_event: Callable[[Any], None] | None = None) -> Any:
    """Run a job to its end without an event loop of one's own; returns its result."""

    async def main() -> Any:
        async for event in job.events():
            if on_event is not None:
                on_event(event)
        return job.result

    return asyncio.run(main())
