"""Build events, and the plumbing that carries blocking streams onto the event loop.

A build is an async generator of `BuildEvent`s. The docker SDK only offers blocking
iterators, so each one runs in an executor thread and its items cross to the loop as
data through an `asyncio.Queue` fed with `loop.call_soon_threadsafe`; an exception in
the thread travels as an item too and is raised again on the loop side.
"""

from __future__ import annotations

import codecs
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from ...vocab import BuildStatus, Phase, Severity

if TYPE_CHECKING:  # imported where a feed runs: commands that only read records skip ~20 ms
    import asyncio

#: log channels: what the build's processes wrote, and what tfwizard itself says
STDOUT = "stdout"
STDERR = "stderr"
TFWIZARD = "tfwizard"


@dataclass(frozen=True)
class BuildEvent:
    """Base of every event a build yields."""

    type: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON object: {"type": ..., fields...}."""
        return {"type": self.type, **asdict(self)}


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
class DiagnosisEvent(BuildEvent):
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
class UnrecognisedEvent(BuildEvent):
    """A failed build whose log no failure signature explains: the log's root-cause lines
    and a search query (unrecognised.py). Not a diagnosis: no id, cause or fix."""

    type: ClassVar[str] = "unrecognised"
    kind: str  # build
    #: (line number, text, speaker) of each root-cause line, in log order
    lines: tuple[tuple[int, str, str], ...] = ()
    query: str = ""
    recognised: bool = False  # always: the JSON says so to whoever reads it


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


class LineSplitter:
    """Turn chunks of bytes into lines: a chunk is not a line.

    Keeps the partial tail until its end arrives; `\\n`, `\\r\\n` and a lone `\\r` (progress
    bars that redraw a line) all end a line; UTF-8 split across chunks is decoded whole.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""
        self._cr_pending = False

    def feed(self, chunk: bytes) -> list[str]:
        """The complete lines `chunk` finishes (a partial line waits for the next chunk)."""
        text = self._decoder.decode(chunk)
        if not text:
            return []
        if self._cr_pending and text.startswith("\n"):
            text = text[1:]  # the \n of a \r\n cut between two chunks
        self._cr_pending = text.endswith("\r")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = self._tail + text
        lines = text.split("\n")
        self._tail = lines.pop()
        return lines

    def flush(self) -> list[str]:
        """The unterminated last line, if any (call at end of stream)."""
        text = self._tail + self._decoder.decode(b"", final=True)
        self._tail = ""
        return [text] if text else []


# -- blocking iterators onto the loop ----------------------------------------------------------

T = TypeVar("T")

_ITEM, _ERROR, _DONE = "item", "error", "done"


class ThreadFeed(Generic[T]):
    """Run a blocking iterator in a thread of its own; iterate its items asynchronously.

    Not the loop's default executor: a stream reader lives as long as its container, and
    that pool also runs every engine call, the GUI's detection and verification.

    The thread puts ("item", x), ("error", exc) and ("done", None) on an asyncio.Queue via
    `loop.call_soon_threadsafe`. `stop` (any callable) is called when the consumer stops
    early, to unblock the thread (e.g. close the socket it reads).
    """

    def __init__(self, source: Callable[[], Iterable[T]], *,
                 stop: Callable[[], None] | None = None, maxsize: int = 256) -> None:
        self._source = source
        self._stop = stop
        self._stopped = threading.Event()
        self._maxsize = maxsize

    def _run(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[tuple[str, Any]],
             room: threading.Semaphore) -> None:
        def put(kind: str, value: Any) -> None:
            with contextlib.suppress(RuntimeError):  # loop closed: nobody is listening
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        try:
            for item in self._source():
                # back-pressure: never more than maxsize items in flight
                while not room.acquire(timeout=0.5):
                    if self._stopped.is_set():
                        return
                if self._stopped.is_set():
                    return
                put(_ITEM, item)
        except BaseException as exc:  # noqa: BLE001 - every failure crosses as data
            if not self._stopped.is_set():
                put(_ERROR, exc)
        finally:
            put(_DONE, None)

    async def __aiter__(self) -> AsyncIterator[T]:
        import asyncio

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        room = threading.Semaphore(self._maxsize)
        # a daemon thread: a reader blocked on a dead socket must not hold up the exit
        thread = threading.Thread(target=self._run, args=(loop, queue, room),
                                  name="tfwizard stream reader", daemon=True)
        thread.start()
        finished = False
        try:
            while True:
                kind, value = await queue.get()
                if kind == _ITEM:
                    room.release()
                    yield value
                elif kind == _ERROR:
                    finished = True
                    raise value
                else:
                    finished = True
                    return
        finally:
            if not finished:
                self._stopped.set()
                if self._stop is not None:
                    with contextlib.suppress(Exception):
                        self._stop()
            # else: the thread has put "done" and ends at once
