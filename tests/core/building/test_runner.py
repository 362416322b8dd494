"""The runner without an engine: what it does before and around Docker."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tfwizard.core.building.run.record import BuildRecord


def test_a_consumer_leaving_after_the_first_event_frees_the_record(tmp_path):
    """Issue 15 item 9: events() yielded the record artifact before entering the try whose
    finally unlocks the record, so a consumer that stopped there kept the lock."""
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.run.runner import BuildRunner
    from tfwizard.core.recipe import load_recipe

    root = Path(__file__).resolve().parents[3]
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
