"""Event plumbing without Docker: line splitting, the thread-to-loop feed, events as JSON."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tfwizard.core.building.run.events import BuildResult, Finished, LogLines, Progress
from tfwizard.core.streams import LineSplitter, ThreadFeed


def test_chunks_are_not_lines():
    s = LineSplitter()
    assert s.feed(b"[1 / 3] Comp") == []
    assert s.feed(b"iling a.cc\n[2 / 3] ") == ["[1 / 3] Compiling a.cc"]
    assert s.feed(b"x\r\ny\r") == ["[2 / 3] x", "y"]
    assert s.feed(b"\nz\n") == ["z"]  # the \n of a \r\n split across chunks: no empty line
    assert s.feed(b"45%\r50%\r100%\n") == ["45%", "50%", "100%"]  # progress redraws
    euro = "€".encode()
    assert s.feed(b"price " + euro[:1]) == []
    assert s.feed(euro[1:] + b"\ntail") == ["price €"]
    assert s.flush() == ["tail"] and s.flush() == []


def test_invalid_utf8_is_replaced_not_fatal():
    s = LineSplitter()
    assert s.feed(b"bad \xff byte\n") == ["bad \ufffd byte"]


def _collect(feed):
    async def main():
        return [x async for x in feed]

    return asyncio.run(main())


def test_thread_feed_crosses_items_in_order_from_another_thread():
    threads = []

    def source():
        threads.append(threading.current_thread())
        yield from range(1000)

    assert _collect(ThreadFeed(source, maxsize=8)) == list(range(1000))
    assert threads[0] is not threading.main_thread()


def test_thread_feed_exceptions_travel_as_items():
    def source():
        yield 1
        raise ValueError("engine went away")

    async def main():
        got = []
        with pytest.raises(ValueError, match="engine went away"):
            async for x in ThreadFeed(source):
                got.append(x)
        return got

    assert asyncio.run(main()) == [1]


def test_thread_feed_stop_unblocks_the_thread_when_the_consumer_leaves():
    stopped = threading.Event()

    def source():
        i = 0
        while not stopped.is_set():
            i += 1
            yield i
            time.sleep(0.01)

    async def main():
        async for x in ThreadFeed(source, stop=stopped.set, maxsize=2):
            if x == 3:
                break

    t = time.monotonic()
    asyncio.run(main())
    assert stopped.is_set() and time.monotonic() - t < 5


def test_events_serialise_with_their_type():
    assert LogLines("stdout", ("a",), 1).to_dict() == {
        "type": "log", "channel": "stdout", "lines": ("a",), "first_line": 1}
    assert Progress("compile", 1, 2).to_dict()["type"] == "progress"
    result = BuildResult("id", "succeeded", "/r", wheel="/w.whl")
    assert result.ok and Finished(result).to_dict()["result"]["wheel"] == "/w.whl"
    assert not BuildResult("id", "succeeded", "/r").ok


def test_thread_feed_readers_do_not_wait_for_the_default_executor():
    """Issue 15 item 9: stream readers ran in the loop's default executor, shared with every
    engine call, detection and verification; with that pool busy, no line came through."""
    from concurrent.futures import ThreadPoolExecutor

    release = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(max_workers=1)
        loop.set_default_executor(pool)
        busy = loop.run_in_executor(None, release.wait)  # the only worker, taken

        async def collect():
            return [item async for item in ThreadFeed(lambda: iter([1, 2, 3]))]

        try:
            return await asyncio.wait_for(collect(), 5)
        finally:
            release.set()
            await busy

    assert asyncio.run(main()) == [1, 2, 3]
