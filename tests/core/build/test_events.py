"""Event plumbing without Docker: line splitting, the thread-to-loop feed, the build record,
and the translation of docker SDK errors."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from tfwizard.core.build import dockerutil
from tfwizard.core.build.events import (
    BuildResult,
    Finished,
    LineSplitter,
    LogLines,
    Progress,
    ThreadFeed,
)
from tfwizard.core.build.record import BuildRecord, atomic_write, data_dir, new_build_id, read_log
from tfwizard.core.errors import DockerUnavailable


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


def test_record_is_written_as_lines_arrive(tmp_path):
    build_id = new_build_id()
    record = BuildRecord.create(build_id, root=tmp_path)
    assert record.path == tmp_path / "builds" / build_id
    assert record.read_result()["status"] == "running"
    assert record.append("stdout", ["one", "two"]) == 1
    # flushed per batch: another reader sees it while the record is still open
    assert record.log_path.read_text() == "out | one\nout | two\n"
    assert record.append("stderr", ["three"]) == 3
    assert record.append("tfwizard", ["four"]) == 4
    record.close()
    assert list(read_log(record.log_path)) == [
        ("stdout", "one"), ("stdout", "two"), ("stderr", "three"), ("tfwizard", "four")]


def test_data_dir_and_atomic_write(tmp_path):
    assert data_dir({"TFWIZARD_DATA_DIR": str(tmp_path)}) == tmp_path
    assert "tfwizard" in str(data_dir({}))
    target = tmp_path / "wheel.whl"
    atomic_write(target, b"new")
    atomic_write(target, b"newer")
    assert target.read_bytes() == b"newer"
    assert [p.name for p in tmp_path.iterdir()] == ["wheel.whl"]  # no temporary left
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_unreachable_engine_says_what_to_do():
    with pytest.raises(DockerUnavailable) as err:
        dockerutil.connect({"DOCKER_HOST": "unix:///nonexistent/docker.sock"}, timeout=2)
    assert "systemctl start docker" in str(err.value) and "DOCKER_HOST" in str(err.value)


def test_permission_denied_gets_docker_group_advice():
    import docker.errors

    exc = docker.errors.DockerException("Error while fetching server API version: "
                                        "('Connection aborted.', PermissionError(13, "
                                        "'Permission denied'))")
    translated = dockerutil.translate(exc, "connecting to Docker")
    assert isinstance(translated, DockerUnavailable)
    assert "docker group" in str(translated)


def test_gpu_runtime_missing_is_explained():
    import docker.errors

    exc = docker.errors.APIError("500", explanation='could not select device driver "" with '
                                 "capabilities: [[gpu]]")
    assert "NVIDIA Container Toolkit" in str(dockerutil.translate(exc, "starting"))


def test_frames_are_cut_from_big_reads():
    import struct

    def frame(stream, data):
        return struct.pack(">BxxxL", stream, len(data)) + data

    wire = frame(1, b"out\n") + frame(2, b"err\n") + frame(1, b"x" * 100)
    chunks = [wire[:3], wire[3:17], wire[17:], b""]

    class Sock:
        def recv(self, n):
            return chunks.pop(0)

    batches = list(dockerutil.read_frames(Sock()))
    assert [f for b in batches for f in b] == [(1, b"out\n"), (2, b"err\n"), (1, b"x" * 100)]


def test_a_consumer_leaving_after_the_first_event_frees_the_record(tmp_path):
    """Issue 15 item 9: events() yielded the record artifact before entering the try whose
    finally unlocks the record, so a consumer that stopped there kept the lock."""
    from tfwizard.core.build.plan import make_plan
    from tfwizard.core.build.runner import BuildRunner
    from tfwizard.core.recipe import load_recipe

    root = __import__("pathlib").Path(__file__).resolve().parents[3]
    plan = make_plan(load_recipe(root / "recipes" / "tf221-cpu-portable.toml"))
    runner = BuildRunner(plan, data_root=tmp_path, env={"DOCKER_HOST": "tcp://127.0.0.1:9"})

    async def first_then_leave():
        events = runner.events()
        first = await events.__anext__()
        await events.aclose()
        return first

    first = asyncio.run(first_then_leave())
    assert first.type == "artifact" and first.kind == "record"
    record = BuildRecord.reopen(runner.record.path)
    assert record.lock(), "the record is still locked by a build nobody follows"
    record.unlock()
    assert '"status": "cancelled"' in (runner.record.path / "result.json").read_text()


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


def test_only_the_engines_missing_init_words_mean_no_init():
    """Issue 15 item 9: the retry without init took any engine error containing "init"."""
    import docker.errors
    import requests

    def api_error(text):
        response = requests.Response()
        response.status_code = 500
        return docker.errors.APIError("500 Server Error", response=response, explanation=text)

    # Docker 28's words (seen from a real dockerd with --init-path pointing nowhere)
    real = api_error('failed to create shim task: OCI runtime create failed: runc create '
                     'failed: unable to start container process: error during container init: '
                     'error mounting "/run/x/docker-init" to rootfs at "/sbin/docker-init": '
                     'stat /run/x/docker-init: no such file or directory: unknown')
    assert dockerutil.missing_init(real)
    translated = dockerutil.translate(real, "starting the build container")
    try:
        raise translated from real
    except Exception as exc:  # noqa: BLE001 - the runner sees the translated error
        assert dockerutil.missing_init(exc)
    assert dockerutil.missing_init(
        docker.errors.InvalidVersion("init param is not supported for API version < 1.25"))
    for other in ("error during container init: mkdir /x: permission denied",
                  "initialization failed", "OCI runtime create failed: init: no such process"):
        assert not dockerutil.missing_init(api_error(other)), other
