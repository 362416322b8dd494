"""Benchmark: reading a container's log through the runner's event stream vs `docker logs -f`.

A busybox container prints N Bazel-like lines. The runner streams them (frames cut from
big reads, lines split, progress parsed, every line written to the build record) and keeps
the container; then `docker logs -f` of the same container is timed to /dev/null.
Prints both rates and the ratio (target: runner >= 0.8x docker logs).

    .venv/bin/python bench/log_ingest.py [LINES]
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import fixture_recipe, world

from tfwizard.core.building.plan.plan import Step, make_plan
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.recipe import load_recipe

LINE = ("[12,345 / 23,456] Compiling tensorflow/core/kernels/conv_ops_fused_impl.cc; "
        "14s local ... (4 actions, 3 running)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    import docker

    client = docker.from_env(timeout=300)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        recipe = fixture_recipe(tmp / "r.toml", workspace=tmp, prefix="tfwizard-bench-ingest")
        plan = make_plan(load_recipe(recipe), recipe_dir=tmp)
        plan = dataclasses.replace(
            plan, image=world.BUSYBOX, cache_volumes={}, mounts=[],
            steps=[Step("build", "compile", ("sh", "-c", f"yes '{LINE}' | head -n {n}"),
                        workdir="/")])
        runner = BuildRunner(plan, out_dir=tmp / "out", data_root=tmp, client=client,
                             keep_containers=True)
        lines = 0
        first = last = None

        async def consume() -> None:
            nonlocal lines, first, last
            async for event in runner.events():
                if event.type == "phase" and event.step == "build" and first is None:
                    first = time.perf_counter()
                if event.type == "log" and event.channel == "stdout":
                    lines += len(event.lines)
                    last = time.perf_counter()

        t0 = time.perf_counter()
        asyncio.run(consume())
        total = time.perf_counter() - t0
        assert first is not None and last is not None
        runner_s = last - first
        container = client.containers.list(
            all=True, filters={"label": f"io.tfwizard.build={runner.build_id}"})[0]
        t1 = time.perf_counter()
        subprocess.run(["docker", "logs", "-f", container.id], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        docker_s = time.perf_counter() - t1
        container.remove(force=True)
        # the kept container held the build's volumes: remove them now
        for vol in client.volumes.list(filters={"label": f"io.tfwizard.build={runner.build_id}"}):
            vol.remove(force=True)
        logged = runner.record.lines if runner.record else 0
    print(f"lines: {lines:,} through the event stream ({logged:,} in the record's log.txt)")
    print(f"runner event stream: {runner_s:.2f} s  ({lines / runner_s:,.0f} lines/s); "
          f"whole build incl. container setup {total:.2f} s")
    print(f"docker logs -f:      {docker_s:.2f} s  ({n / docker_s:,.0f} lines/s)")
    print(f"ratio (runner rate / docker logs rate): {docker_s / runner_s:.2f}x  (target >= 0.8x)")


if __name__ == "__main__":
    main()
