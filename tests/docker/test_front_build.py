"""A warm no-op `tfwizard build` served by the front end (tfwizard/front/) against the real
engine gives what the same command in its own process gives: exit 0, a succeeded record of
the warm path, the same wheel (issue 17's no-op bar is met through the front end)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests import world
from tests.front.front_world import TFWIZARD, Front
from tfwizard.core.build import warm
from tfwizard.core.build.plan import make_plan
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _build(recipe: Path, out: Path, env: dict[str, str]) -> tuple[dict, str]:
    """`tfwizard build RECIPE --json`: its result, and the record's log."""
    done = subprocess.run([TFWIZARD, "build", str(recipe), "--out", str(out), "--json"],
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    result = [e for e in events if e.get("type") == "finished"][-1]["result"]
    return result, (Path(result["record_dir"]) / "log.txt").read_text("utf-8")


def _sha(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_a_warm_noop_through_the_front_end_is_the_in_process_one(tmp_path):
    world.require_docker()
    world.ensure_images()
    import docker

    workspace = world.copy_workspace(tmp_path)
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=workspace, prefix=prefix)
    front = Front(tmp_path / "run")
    data = {"TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    here = {**os.environ, "TFWIZARD_FRONTEND": "0", **data}
    served = {**front.env, **data}
    client = docker.from_env(timeout=300)
    space = warm.workspace_for(make_plan(load_recipe(recipe), recipe_dir=recipe.parent),
                               str(recipe.resolve()))
    try:
        first, _log = _build(recipe, tmp_path / "out", here)  # makes the warm workspace
        front.up()
        n = front.served()
        via, via_log = _build(recipe, tmp_path / "out-front", served)
        assert front.served() == n + 1 and "served ['build'" in front.log()
        assert f"child {front.child_pids()[-1]} exited 0" in front.log()
        own, own_log = _build(recipe, tmp_path / "out-here", here)
        for result, log in ((via, via_log), (own, own_log)):
            assert result["status"] == "succeeded", result
            assert "warm build container" in log and "step build: warm exec" in log
            assert _sha(result["wheel"]) == _sha(first["wheel"])  # a no-op: the same wheel
        assert sorted(via) == sorted(own)  # the same record fields
        assert {k: v for k, v in via.items() if k in ("status", "target", "cached")} == \
            {k: v for k, v in own.items() if k in ("status", "target", "cached")}
        assert {p.name for p in Path(via["record_dir"]).iterdir()} == \
            {p.name for p in Path(own["record_dir"]).iterdir()}
    finally:
        front.stop()
        world.remove_warm(client, space, prefix)
