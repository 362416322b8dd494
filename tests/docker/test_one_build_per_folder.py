"""Two builds of one source folder at once run one after the other: configure writes its
answers into the folder (`.tf_configure.bazelrc`), so the second waits, says for which
build, and a cancel ends its wait (core/building/run/checkout.py).

Real builds in busybox on this machine's engine: each writes its recipe's answer into
the bind-mounted folder, waits, and reads it back; two at once would read each other's.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.docker import kit
from tfwizard.core.building.plan.plan import SRC
from tfwizard.core.building.run.runner import BuildRunner

pytestmark = [pytest.mark.docker]


@pytest.fixture(scope="module")
def fw(tmp_path_factory):
    yield from kit.docker_world(tmp_path_factory, "onefolder")


def _answer_script(name: str, wait_s: int) -> str:
    """Write this build's answer into the folder, wait, and fail unless it is still ours."""
    return (f"echo {name} > {SRC}/.answers && sleep {wait_s} && "
            f'test "$(cat {SRC}/.answers)" = {name} && echo "read back {name}" && '
            + kit.make_wheel_script(f"{name}-1-py3-none-any.whl"))


def _runners(fw, tmp_path, scripts: dict[str, str]) -> list[BuildRunner]:
    runners = []
    for name, script in scripts.items():  # one tmp_path: both plans bind-mount tmp_path/src
        plan = kit.busybox_plan(tmp_path, script, prefix=fw.prefix, name=name)
        runners.append(BuildRunner(plan, out_dir=tmp_path / f"out-{name}",
                                   data_root=tmp_path / "data", client=fw.client))
    fw.builds.extend(r.build_id for r in runners)
    return runners


def _lines(events) -> list[str]:
    return [line for e in events if e.type == "log" for line in e.lines]


def test_the_second_build_of_a_folder_waits_for_the_first(fw, tmp_path):
    first, second = _runners(fw, tmp_path, {"first": _answer_script("first", 4),
                                            "second": _answer_script("second", 0)})

    async def both():
        async def one(runner, delay):
            await asyncio.sleep(delay)
            return [e async for e in runner.events()]

        return await asyncio.gather(one(first, 0), one(second, 1.5))

    events_first, events_second = asyncio.run(both())
    for events, name in ((events_first, "first"), (events_second, "second")):
        result = events[-1].result
        assert result.status == "succeeded", (name, result.message, _lines(events)[-20:])
        assert f"read back {name}" in _lines(events)
    waited = [line for line in _lines(events_second) if "waiting for build" in line]
    assert waited and first.build_id in waited[0], _lines(events_second)[:20]
    assert any("this build goes on" in line for line in _lines(events_second))
    assert not any("waiting for build" in line for line in _lines(events_first))
    # the wait is in the second build's record too
    assert first.build_id in (second.record.path / "log.txt").read_text()


def test_a_cancel_ends_the_wait_and_the_first_build_goes_on(fw, tmp_path):
    first, second = _runners(fw, tmp_path, {"first": _answer_script("first", 8),
                                            "second": _answer_script("second", 0)})
    ended: dict[str, float] = {}

    async def both():
        async def one(runner, name, delay):
            await asyncio.sleep(delay)
            events = []
            async for event in runner.events():
                events.append(event)
                if event.type == "log" and any("waiting for build" in line
                                                for line in event.lines):
                    runner.cancel()  # while it waits for the first
            ended[name] = time.monotonic()
            return events

        return await asyncio.gather(one(first, "first", 0), one(second, "second", 1.5))

    events_first, events_second = asyncio.run(both())
    assert any("waiting for build" in line for line in _lines(events_second))
    assert events_second[-1].result.status == "cancelled", _lines(events_second)[-10:]
    assert ended["second"] < ended["first"] - 2  # it did not wait for the first to end
    assert events_first[-1].result.status == "succeeded", _lines(events_first)[-10:]
    assert "read back first" in _lines(events_first)
    # the second build never ran its step: its answer never reached the folder
    assert not any("read back second" in line for line in _lines(events_second))
