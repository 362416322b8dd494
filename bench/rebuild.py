"""Benchmark for issue 17: tfwizard's warm rebuild loop against bare Bazel, as ratios.

For each workspace (the fixture; bench/bigws.py's TF-shaped one with @big_external in
distdir), in ONE run: bench/rebuild_baseline.measure_bare() (bare Bazel in a long-lived
container, the same image and flags), then tfwizard's warm path (core/warm.py) on the same
workspace with its own volumes: a first build, ROUNDS no-op rebuilds, ROUNDS rebuilds after
a one-line kernel edit. A tfwizard rebuild is timed as `tfwizard build` on a warm
workspace runs it: ensure the container (reused), configure-if-changed (skipped), the
`bazel build` exec, the BEP read and the wheel copied out. Each is checked: it passed, an
edit changed the wheel, a no-op did not.

(c) reinstall: the fixture's wheel installed with its [and-cuda] extra into a new venv
(offline, the stub dependency from a --find-links folder), then the rebuilt wheel
reinstalled with `wheel_only` (pip --no-deps --force-reinstall, no index, no links).

    .venv/bin/python bench/rebuild.py [--rounds N] [--only fixture|big|reinstall]
        [--files N] [--packages N] [--external-mb N] [--json PATH]

Prints a table of seconds and ratios (warm tfwizard / bare Bazel); writes JSON (default
bench/out/rebuild.json). The issue's bar: every ratio at most 1.25.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
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
    from ._common import ROOT, world
else:
    import bigws
    import rebuild_baseline as rb
    from _common import ROOT, world

from tfwizard.core.build import warm  # noqa: E402
from tfwizard.core.install import install_wheel, resolve_target  # noqa: E402
from tfwizard.core.recipe import load_recipe  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "out" / "rebuild.json"
BAR = 1.25


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


def measure_warm(subject: rb.Subject, recipe: Path, rounds: int) -> dict[str, Any]:
    """tfwizard's warm figures for one workspace (its own volumes, removed at the end)."""
    import docker

    plan = rb.plan_of(recipe)
    client = docker.from_env(timeout=900)
    space = warm.workspace_for(plan, str(recipe))
    box = warm.WarmContainer(client, plan, space)
    edit = subject.workspace / subject.edit_file
    value = (bigws.edit_value(edit) or 0) + 100
    out_dir = recipe.parent / f"wheels-{subject.name}"
    res: dict[str, Any] = {}
    try:
        t = time.perf_counter()
        box.ensure()
        conf = box.configure()
        built = box.build()
        if conf.exit_code != 0 or built.exit_code != 0:
            raise RuntimeError("first warm build failed:\n" + "\n".join(built.output[-40:]))
        wheel = box.copy_wheel(built, out_dir)
        assert wheel is not None
        res["first_build_s"] = round(time.perf_counter() - t, 2)
        keep = recipe.parent / f"first-{subject.name}"  # for the reinstall figure
        keep.mkdir(exist_ok=True)
        res["first_wheel"] = str(keep / wheel.name)
        (keep / wheel.name).write_bytes(wheel.read_bytes())
        sha = _sha(wheel)
        noops = []
        for _ in range(rounds):
            s, wheel = _rebuild(box, out_dir)
            if _sha(wheel) != sha:
                raise RuntimeError("a no-op rebuild changed the wheel")
            noops.append(s)
        edits = []
        for _ in range(rounds):
            value += 1
            bigws.edit_kernel(edit, value)
            s, wheel = _rebuild(box, out_dir)
            if _sha(wheel) == sha:
                raise RuntimeError("an edit did not change the wheel")
            sha = _sha(wheel)
            edits.append(s)
        res["noop_s"] = [round(x, 2) for x in noops]
        res["edit_s"] = [round(x, 2) for x in edits]
        res["noop_median_s"] = round(statistics.median(noops), 2)
        res["edit_median_s"] = round(statistics.median(edits), 2)
        res["wheel"] = str(wheel)
    finally:
        warm.remove_workspace(client, space)
        for vol in plan.cache_volumes.values():
            try:
                client.volumes.get(vol).remove(force=True)
            except docker.errors.APIError:
                pass
        client.close()
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
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("fixture", "big", "reinstall"))
    parser.add_argument("--files", type=int, default=bigws.DEFAULT_FILES)
    parser.add_argument("--packages", type=int, default=bigws.DEFAULT_PACKAGES)
    parser.add_argument("--external-mb", type=float, default=bigws.DEFAULT_EXTERNAL_MB)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)

    world.ensure_images()
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
            fig: dict[str, Any] = {}
            if args.only != "reinstall":
                fig["bare"] = rb.measure_bare(subject, bare_recipe, rounds=args.rounds,
                                              cold=False)
            tfw = measure_warm(subject, tfw_recipe, args.rounds)
            fig["tfwizard"] = tfw
            wheels.append((Path(tfw["first_wheel"]), Path(tfw["wheel"])))
            if "bare" in fig:
                fig["ratio_noop"] = round(tfw["noop_median_s"]
                                          / fig["bare"]["noop_warm_median_s"], 2)
                fig["ratio_edit"] = round(tfw["edit_median_s"]
                                          / fig["bare"]["edit_warm_median_s"], 2)
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
        bare, tfw = fig.get("bare", {}), fig["tfwizard"]
        print(f"{name}: no-op bare {bare.get('noop_warm_median_s', '-')} s, tfwizard "
              f"{tfw['noop_median_s']} s, ratio {fig.get('ratio_noop', '-')}; edit bare "
              f"{bare.get('edit_warm_median_s', '-')} s, tfwizard {tfw['edit_median_s']} s, "
              f"ratio {fig.get('ratio_edit', '-')} (bar {BAR})")
    if "reinstall" in report:
        r = report["reinstall"]
        print(f"reinstall: full install {r['full_install_s']} s, wheel-only "
              f"{r['wheel_only_reinstall_s']} s")
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
