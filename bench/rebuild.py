"""Benchmark for issue 17: tfwizard's warm rebuild loop against bare Bazel, as ratios.

For each workspace (the fixture; bench/bigws.py's TF-shaped one with @big_external in
distdir), in ONE run and interleaved (measure_interleaved): bare Bazel in a long-lived
container with the same image and flags (bench/rebuild_baseline.WarmContainer) and
tfwizard's warm workspace (core/building/warm/container.py, its own volumes) are both up; after a first
build of each, every round times one bare and one tfwizard rebuild on the same state of the
source, in alternating order, so load from elsewhere falls on both sides: NOOP_ROUNDS no-op
rounds (cheap, so more of them: 9 by default), then ROUNDS rounds after a one-line kernel
edit. tfwizard is timed twice:
its warm path in this process (ensure the container, configure-if-changed, the build exec
with its BEP report, the wheel), and `tfwizard build RECIPE` as a person runs it (the
console script: Python's start and imports, the recipe, the gates, the record; after its
own edit in the edit rounds). Each is checked: it passed, an edit changed the wheel, a
no-op did not. bench/startup.py has the command's start on its own (`--help`, `plan`).

(c) reinstall: the fixture's wheel installed with its [and-cuda] extra into a new venv
(offline, the stub dependency from a --find-links folder), then the rebuilt wheel
reinstalled with `wheel_only` (pip --no-deps --force-reinstall, no index, no links).

    .venv/bin/python bench/rebuild.py [--rounds N] [--noop-rounds N]
        [--only fixture|big|reinstall]
        [--files N] [--packages N] [--external-mb N] [--json PATH]

Prints seconds and ratios (warm tfwizard / bare Bazel, medians; min/median/max per side);
writes JSON (default
bench/out/rebuild.json). The bar: every ratio at most 1.25, or for the command within 1 s of
bare Bazel (the fixed cost of starting any CLI).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import venv
from pathlib import Path
from typing import Any

if __package__:
    from . import bigws
    from . import rebuild_baseline as rb
    from ._common import ROOT, remove_warm, world
else:
    import bigws
    import rebuild_baseline as rb
    from _common import ROOT, remove_warm, world

from tfwizard.core.building.warm import container as warm  # noqa: E402
from tfwizard.core.install.job import install_wheel, resolve_target  # noqa: E402
from tfwizard.core.recipe import load_recipe  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "out" / "rebuild.json"
BAR = 1.25
#: the console script, as a person runs it
TFWIZARD = str(Path(sys.executable).parent / "tfwizard")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rebuild(box: warm.WarmContainer, out: Path) -> tuple[float, Path]:
    """One warm `tfwizard build`: seconds and the wheel."""
    t = time.perf_counter()
    assert box.ensure() is True, "the warm container went away"
    built = box.build(configure=True)  # configure-if-changed and build: one exec
    if not built.skipped:
        raise RuntimeError(f"configure ran again: {built.output[-20:]}")
    if built.exit_code != 0:
        raise RuntimeError("warm rebuild failed:\n" + "\n".join(built.output[-40:]))
    wheel = box.copy_wheel(built, out)
    if wheel is None:
        raise RuntimeError("the warm rebuild named no wheel in its BEP")
    return time.perf_counter() - t, wheel


def _cli_rebuild(recipe: Path, out: Path, data: Path) -> float:
    """One warm `tfwizard build` as a person runs it (the console script): seconds."""
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(data)}
    t = time.perf_counter()
    run = subprocess.run([TFWIZARD, "build", str(recipe), "--out", str(out)],
                         capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - t
    if run.returncode != 0 or "warm build container" not in run.stdout + run.stderr:
        raise RuntimeError(f"tfwizard build exited {run.returncode}:\n{run.stderr[-3000:]}")
    return seconds


def measure_interleaved(subject: rb.Subject, bare_recipe: Path, recipe: Path,
                        rounds: int, noop_rounds: int | None = None) -> dict[str, Any]:
    """Bare Bazel's and tfwizard's figures for one workspace, interleaved: both long-lived
    containers are up, and each round times one of each (in alternating order) on the same
    state of the source, so load from elsewhere falls on both sides alike. tfwizard is
    timed twice: its warm path in this process (`_rebuild`) and the `tfwizard build`
    command (a new process: Python's start, the recipe, the gates, the record)."""
    import docker

    bare_plan, plan = rb.plan_of(bare_recipe), rb.plan_of(recipe)
    client = docker.from_env(timeout=900)
    space = warm.workspace_for(plan, str(recipe.resolve()))
    box = warm.WarmContainer(client, plan, space)
    edit = subject.workspace / subject.edit_file
    value = (bigws.edit_value(edit) or 0) + 100
    out_dir, data = recipe.parent / f"wheels-{subject.name}", recipe.parent / "data"
    res: dict[str, Any] = {"bare": {}, "tfwizard": {}}
    prefix = f"{load_recipe(bare_recipe).cache.volume_prefix}-{uuid.uuid4().hex[:6]}"
    try:
        with rb._bench(prefix) as bench:
            bare = rb.WarmContainer(bench, bare_plan, subject.name,
                                    bare_recipe.parent / f"record-{subject.name}")
            bare.start()
            for run, what in ((bare.configure(), "configure"), (bare.build(), "first build")):
                rb._check(run, what)
            t = time.perf_counter()
            box.ensure()
            conf, built = box.configure(), box.build()
            wheel = box.copy_wheel(built, out_dir)
            if conf.exit_code != 0 or wheel is None:
                raise RuntimeError("first warm build failed:\n" + "\n".join(built.output[-40:]))
            res["tfwizard"]["first_build_s"] = round(time.perf_counter() - t, 2)
            keep = recipe.parent / f"first-{subject.name}"  # for the reinstall figure
            keep.mkdir(exist_ok=True)
            res["tfwizard"]["first_wheel"] = str(keep / wheel.name)
            (keep / wheel.name).write_bytes(wheel.read_bytes())
            times: dict[str, list[float]] = {k: [] for k in (
                "bare_noop", "tfw_noop", "cli_noop", "bare_edit", "tfw_edit", "cli_edit")}
            sha, bare_sha = _sha(wheel), bare.wheel_sha256()
            _cli_rebuild(recipe, out_dir, data)  # its first run looks inside the image
            for kind in ("noop", "edit"):
                for i in range(rounds if kind == "edit" else (noop_rounds or rounds)):
                    if kind == "edit":
                        value += 1
                        bigws.edit_kernel(edit, value)
                    sides = ["bare", "tfw"] if i % 2 == 0 else ["tfw", "bare"]
                    for side in sides:
                        if side == "bare":
                            run = bare.build()
                            rb._check(run, f"bare {kind}")
                            times[f"bare_{kind}"].append(run.seconds)
                            now = bare.wheel_sha256()
                            if (now == bare_sha) != (kind == "noop"):
                                raise RuntimeError(f"bare {kind}: the wheel did not behave")
                            bare_sha = now
                        else:
                            s, wheel = _rebuild(box, out_dir)
                            times[f"tfw_{kind}"].append(s)
                            if (_sha(wheel) == sha) != (kind == "noop"):
                                raise RuntimeError(f"tfwizard {kind}: the wheel did not behave")
                            sha = _sha(wheel)
                    # the command, on its own edit in the edit rounds
                    if kind == "edit":
                        value += 1
                        bigws.edit_kernel(edit, value)
                    times[f"cli_{kind}"].append(_cli_rebuild(recipe, out_dir, data))
            box_now = box.copy_wheel(box.build(configure=True), out_dir)
            assert box_now is not None
            res["tfwizard"]["wheel"] = str(box_now)
    finally:
        remove_warm(client, space, plan)
    for key, vals in times.items():
        side = "bare" if key.startswith("bare") else "tfwizard"
        res[side][f"{key}_s"] = [round(x, 3) for x in vals]
        res[side][f"{key}_median_s"] = round(statistics.median(vals), 3)
        res[side][f"{key}_min_s"], res[side][f"{key}_max_s"] = round(min(vals), 3), round(
            max(vals), 3)
    return res


def measure_reinstall(tmp: Path, wheel: Path, rebuilt: Path) -> dict[str, Any]:
    """(c): a full install with [and-cuda] into a new venv, then the wheel-only reinstall."""
    folder = tmp / "venv"
    venv.EnvBuilder(with_pip=True).create(folder)
    target = resolve_target(venv=folder)
    links = tmp / "links"
    world.build_cuda_stub_wheel(links)
    t = time.perf_counter()
    full = install_wheel(wheel, target, ["and-cuda"], find_links=[str(links)], no_index=True)
    full_s = time.perf_counter() - t
    t = time.perf_counter()
    again = install_wheel(rebuilt, target, ["and-cuda"], wheel_only=True)
    again_s = time.perf_counter() - t
    if not (full.ok and again.ok):
        raise RuntimeError(f"install failed: {full.message} / {again.message}")
    return {"full_install_s": round(full_s, 2), "wheel_only_reinstall_s": round(again_s, 2),
            "reinstalled": again.installed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="edit rounds")
    parser.add_argument("--noop-rounds", type=int, default=9, help="no-op rounds")
    parser.add_argument("--only", choices=("fixture", "big", "reinstall"))
    parser.add_argument("--files", type=int, default=bigws.DEFAULT_FILES)
    parser.add_argument("--packages", type=int, default=bigws.DEFAULT_PACKAGES)
    parser.add_argument("--external-mb", type=float, default=bigws.DEFAULT_EXTERNAL_MB)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    world.ensure_images()
    # the command as an installed tfwizard runs it: pip compiles a package's bytecode when it
    # installs it, and an editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise
    # compile every module again on every run (~0.5 s of the command on this 2-core machine)
    compileall.compile_dir(str(ROOT / "tfwizard"), quiet=1)
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": list(os.getloadavg()),
                              "workspaces": {}}
    tmp = Path(tempfile.mkdtemp(prefix="tfwizard-bench-warm-"))
    names = [args.only] if args.only else ["fixture", "big", "reinstall"]
    wheels: list[tuple[Path, Path]] = []  # (first, last) wheel of a workspace
    try:
        for name in [n for n in names if n != "reinstall"] or (
                ["fixture"] if "reinstall" in names else []):
            base = tmp / name
            base.mkdir()
            subject = (rb.fixture_subject(base) if name == "fixture" else
                       rb.big_subject(base, files=args.files, packages=args.packages,
                                      external_mb=args.external_mb))
            bare_recipe = rb.write_recipe(subject, base / "bare.toml",
                                          prefix=f"tfwizard-bench-bare-{uuid.uuid4().hex[:6]}")
            tfw_recipe = rb.write_recipe(subject, base / "tfw.toml",
                                         prefix=f"tfwizard-bench-warm-{uuid.uuid4().hex[:6]}")
            assert load_recipe(tfw_recipe).name == load_recipe(bare_recipe).name
            fig = measure_interleaved(subject, bare_recipe, tfw_recipe, args.rounds,
                                      args.noop_rounds)
            tfw, bare = fig["tfwizard"], fig["bare"]
            wheels.append((Path(tfw["first_wheel"]), Path(tfw["wheel"])))
            for kind in ("noop", "edit"):
                for way, key in (("tfw", "ratio"), ("cli", "ratio_cli")):
                    fig[f"{key}_{kind}"] = round(tfw[f"{way}_{kind}_median_s"]
                                                 / bare[f"bare_{kind}_median_s"], 2)
            report["workspaces"][name] = fig
        if "reinstall" in names and wheels:
            # the first and the last wheel of the fixture: the same version, rebuilt
            report["reinstall"] = measure_reinstall(tmp / "reinstall", *wheels[0])
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    report["load_after"] = list(os.getloadavg())
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for name, fig in report["workspaces"].items():
        bare, tfw = fig["bare"], fig["tfwizard"]
        for kind in ("noop", "edit"):
            print(f"{name} {kind}: bare {bare[f'bare_{kind}_median_s']} s, tfwizard warm "
                  f"path {tfw[f'tfw_{kind}_median_s']} s (ratio {fig[f'ratio_{kind}']}), "
                  f"`tfwizard build` {tfw[f'cli_{kind}_median_s']} s (ratio "
                  f"{fig[f'ratio_cli_{kind}']}, "
                  f"{tfw[f'cli_{kind}_median_s'] - bare[f'bare_{kind}_median_s']:+.2f} s); "
                  f"bar {BAR}x, or within 1 s for the command")
            for way, label in (("bare", "bare Bazel"), ("tfw", "warm path"),
                               ("cli", "command")):
                side = bare if way == "bare" else tfw
                print(f"  {label:12} {kind}: min {side[f'{way}_{kind}_min_s']} s, median "
                      f"{side[f'{way}_{kind}_median_s']} s, max {side[f'{way}_{kind}_max_s']} s")
    if "reinstall" in report:
        r = report["reinstall"]
        print(f"reinstall: full install {r['full_install_s']} s, wheel-only "
              f"{r['wheel_only_reinstall_s']} s")
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
