"""Benchmark: second fixture build / first fixture build, wall time (target <= 0.25).

Both builds go through the runner in new containers with fresh Bazel output roots; the
second reuses the disk-cache volume the first filled. Uses fresh cache volumes.

    .venv/bin/python bench/cache.py
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

from _common import fixture_recipe, remove_volumes, world

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.runner import build_blocking
from tfwizard.core.recipe import load_recipe


def main() -> None:
    import docker

    client = docker.from_env(timeout=300)
    prefix = f"tfwizard-bench-cache-{uuid.uuid4().hex[:6]}"
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            ws = world.copy_workspace(tmp)
            plan = make_plan(load_recipe(fixture_recipe(tmp / "r.toml", workspace=ws,
                                                        prefix=prefix)), recipe_dir=tmp)
            walls = []
            for label in ("first (cold cache)", "second (disk cache)"):
                t = time.perf_counter()
                result = build_blocking(plan, out_dir=tmp / "out", data_root=tmp, client=client)
                walls.append(time.perf_counter() - t)
                assert result.ok, result.message
                print(f"{label}: {walls[-1]:.1f} s wall, {result.actions} actions, "
                      f"{result.cache_hits} cache hits")
    finally:
        remove_volumes(client, prefix)
    print(f"ratio second/first: {walls[1] / walls[0]:.3f}  (target <= 0.25)")


if __name__ == "__main__":
    main()
