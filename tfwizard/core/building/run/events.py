"""Build events: a build is an async generator of them, its result last.

The events a diagnosis adds (DiagnosisEvent, UnrecognisedEvent) are the diagnosis
package's own (diagnosis/types.py); the plumbing that reads the engine's blocking streams
is core/streams.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ...jobs import Event
from ...vocab import BuildStatus, Phase

#: the base of every event a build yields: the long-job protocol's Event
BuildEvent = Event


@dataclass(frozen=True)
class PhaseChanged(BuildEvent):
    """The build moved on to a phase (and maybe a new plan step)."""

    type: ClassVar[str] = "phase"
    phase: Phase
    step: str = ""  # the plan step running (fetch | configure | build | package)


@dataclass(frozen=True)
class LogLines(BuildEvent):
    """Consecutive log lines of one channel.

    Lines travel in batches (one per chunk read from the engine) rather than one event
    per line: a TensorFlow build prints hundreds of thousands of lines, and consumers
    (the GUI's log view, the record) want them batched anyway.
    """

    type: ClassVar[str] = "log"
    channel: str
    lines: tuple[str, ...]
    first_line: int = 0  # 1-based number of lines[0] in the build's log.txt


@dataclass(frozen=True)
class Progress(BuildEvent):
    """Where Bazel is: its phase, actions done of the total, the time left."""

    type: ClassVar[str] = "progress"
    phase: Phase
    done: int | None = None  # actions done, from `[done / total]`
    total: int | None = None
    eta_s: float | None = None
    rate: float | None = None  # actions per second, recent
    message: str = ""  # what Bazel is doing, e.g. "Compiling tensorflow/core/..."
    packages_loaded: int | None = None
    targets_configured: int | None = None


@dataclass(frozen=True)
class Artifact(BuildEvent):
    """A file the build made: the wheel, the record folder, the BEP file."""

    type: ClassVar[str] = "artifact"
    kind: str  # wheel | record | bep
    path: str


@dataclass(frozen=True)
class BuildResult:
    """How a build ended (result.json; the Finished event carries it)."""

    build_id: str
    status: BuildStatus
    record_dir: str
    wheel: str | None = None
    exit_code: int | None = None  # of the last step that ran
    bazel_exit: str | None = None  # BEP's authoritative exit name, e.g. SUCCESS, BUILD_FAILURE
    message: str = ""
    elapsed_s: float = 0.0
    actions: int | None = None
    cache_hits: int | None = None
    findings: tuple[str, ...] = ()  # ids of the matched failure signatures
    #: where the actions came from (progress.CacheSummary.to_dict()); None: Bazel never said
    cache: dict[str, Any] | None = None
    #: the wheel held against its recipe (wheelcheck.WheelCheck.to_dict()); None: no wheel
    wheel_check: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True when the build succeeded and handed out a wheel."""
        return self.status == "succeeded" and self.wheel is not None

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        return asdict(self)


@dataclass(frozen=True)
class Finished(BuildEvent):
    """The last event of a build: its result."""

    type: ClassVar[str] = "finished"
    result: BuildResult


# -- lines -----------------------------------------------------------------------------


# -- blocking iterators onto the loop ----------------------------------------------------------


            # else: the thread has put "done" and ends at once
