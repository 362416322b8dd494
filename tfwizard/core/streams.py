"""Log channels, the tags that keep them apart in a log file, and the plumbing that carries
blocking streams onto the event loop.

The docker SDK (and pip, and a probe's pipes) offer only blocking iterators: each one runs in
a thread of its own and its items cross to the loop as data through an `asyncio.Queue` fed
with `loop.call_soon_threadsafe`; an exception in the thread travels as an item too and is
raised again on the loop side. Builds, installations and verifications all read this way.
"""

from __future__ import annotations

import codecs
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # imported where a feed runs: commands that only read records skip ~20 ms
    import asyncio

#: log channels: what the build's processes wrote, and what tfwizard itself says
STDOUT = "stdout"
STDERR = "stderr"
TFWIZARD = "tfwizard"

#: the prefix of each channel's lines in a log file (a build record's log.txt)
TAGS = {STDOUT: "out | ", STDERR: "err | ", TFWIZARD: "tfw | "}
_UNTAG = {v: k for k, v in TAGS.items()}


def untag(line: str) -> tuple[str | None, str]:
    """(channel, text) of one log.txt line; (None, line) for a plain log."""
    tag = line[:6]
    channel = _UNTAG.get(tag)
    return (channel, line[6:]) if channel else (None, line)


# -- lines ---------------------------------------------------------------------------------


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


# -- blocking iterators onto the loop -----------------------------------------------------

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
