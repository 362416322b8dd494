"""Benchmark: `tfwizard build` wall / the same commands run with the raw docker SDK.

Both run the plan's configure and build commands in new containers with the same image,
user, environment, mounts and cache volumes (warm disk cache, so tfwizard's own cost is
not hidden behind compiling), read the whole log and copy the wheel out. tfwizard adds
the record, progress parsing, the event stream and the CLI process start.
Both are timed as programs started from the shell (the raw run is this script in a new
Python process), so each pays an interpreter start. Target <= 1.05x. Runs: one warm-up,
then ROUNDS alternating pairs; medians are compared.

    .venv/bin/python bench/overhead.py [ROUNDS]
"""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

from _common import ROOT, fixture_recipe, remove_volumes, world

from tfwizard.core.building.plan.plan import OUTPUT_USER_ROOT, RECORD, make_plan
from tfwizard.core.recipe import load_recipe


def raw_sdk_build(client, plan, tmp: Path) -> float:
    """The plan's steps with nothing but the docker SDK (what tfwizard is compared with)."""
    import docker.types

    t = time.perf_counter()
    out_vol = client.volumes.create(name=f"bench-raw-out-{uuid.uuid4().hex[:8]}")
    rec = tmp / "raw-record"
    rec.mkdir(exist_ok=True)
    mounts = [docker.types.Mount(m.target, m.source, type=m.kind) for m in plan.mounts]
    mounts += [docker.types.Mount(OUTPUT_USER_ROOT, out_vol.name, type="volume"),
               docker.types.Mount(RECORD, str(rec), type="bind")]
    containers = []
    try:
        for step in plan.steps:
            c = client.containers.create(
                plan.image, list(step.argv), environment={**plan.container_env, **step.env},
                working_dir=step.workdir, user=plan.user or "", mounts=mounts,
                network_mode=plan.network_mode, init=True, detach=True)
            containers.append(c)
            c.start()
            for _chunk in c.logs(stream=True, follow=True):
                pass
            assert c.wait()["StatusCode"] == 0
        stream, _ = containers[-1].get_archive(plan.wheel_dir + "/.")
        buf = io.BytesIO(b"".join(stream))
        with tarfile.open(fileobj=buf) as tar:
            for m in tar.getmembers():
                if m.name.endswith(".whl"):
                    fh = tar.extractfile(m)
                    assert fh is not None
                    (tmp / "raw-out").mkdir(exist_ok=True)
                    (tmp / "raw-out" / Path(m.name).name).write_bytes(fh.read())
    finally:
        for c in containers:
            c.remove(force=True)
        out_vol.remove(force=True)
    return time.perf_counter() - t


def raw_sdk_process(recipe: Path, tmp: Path) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--raw", str(recipe), str(tmp)], check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - t


def tfwizard_build(recipe: Path, tmp: Path) -> float:
    t = time.perf_counter()
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp / "data"), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "tfwizard", "build", str(recipe), "--out",
                    str(tmp / "out")], check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    import docker

    if sys.argv[1:2] == ["--raw"]:
        recipe, tmp = Path(sys.argv[2]), Path(sys.argv[3])
        plan = make_plan(load_recipe(recipe), recipe_dir=tmp)
        raw_sdk_build(docker.from_env(timeout=300), plan, tmp)
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3

    client = docker.from_env(timeout=300)
    prefix = f"tfwizard-bench-over-{uuid.uuid4().hex[:6]}"
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            ws = world.copy_workspace(tmp)
            recipe = fixture_recipe(tmp / "r.toml", workspace=ws, prefix=prefix)
            plan = make_plan(load_recipe(recipe), recipe_dir=tmp)
            for vol in plan.cache_volumes.values():
                client.volumes.create(name=vol)
            print(f"warm-up (cold cache): {tfwizard_build(recipe, tmp):.1f} s")
            ours, raw = [], []
            for i in range(rounds):
                ours.append(tfwizard_build(recipe, tmp))
                raw.append(raw_sdk_process(recipe, tmp))
                print(f"round {i + 1}: tfwizard build {ours[-1]:.2f} s, raw SDK {raw[-1]:.2f} s")
    finally:
        remove_volumes(client, prefix)
    a, b = statistics.median(ours), statistics.median(raw)
    print(f"median: tfwizard build {a:.2f} s, raw docker SDK {b:.2f} s")
    print(f"ratio tfwizard/raw: {a / b:.3f}x  (target <= 1.05x)")


if __name__ == "__main__":
    main()
