"""Benchmark for issue 23: the contributor's test loop, `tfwizard test` after a one-file edit
against bare `bazel test` of the same targets in a long-lived container, as a ratio.

In ONE run, two copies of the fixture workspace (git checkouts, each its own Bazel server
and output root, the same image, user and flags):

- bare: bench/rebuild_baseline's long-lived container (`docker exec` per command); the
  command is the build plan's `bazel test` with TensorFlow's tag filters
  (testrun.test_argv, without the BEP file) of the targets tfwizard selected;
- tfwizard: `tfwizard test RECIPE --json` with no targets, as a new process each time (what
  a person runs; with its .pyc files, as pip installs it): the warm container reused, the
  changed files from git, `bazel query` rdeps (asked once: the answer is kept while the
  BUILD files stay as they are), configure-if-changed, `bazel test`, the BEP read, the
  record written. Its time outside its own `bazel test` exec is reported as fixed cost.

After a first (cold) run of each, ROUNDS rounds: the same code edit of the kernel in both
copies, then both commands, in alternating order (interleaved, so load on this shared
machine hits both alike). Each run is checked: it passed and the selected tests ran again
(not cached). Medians and their ratio; the issue's bar: at most 1.1x, or within 1 s.

    .venv/bin/python bench/test_loop.py [--rounds N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

if __package__:
    from . import rebuild_baseline as rb
    from ._common import ROOT, remove_warm, world
else:
    import rebuild_baseline as rb
    from _common import ROOT, remove_warm, world

from tfwizard.core.building.warm import container as warm  # noqa: E402
from tfwizard.core.testloop.run import tag_filters, test_argv  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "out" / "test_loop.json"
EDIT_FILE = "tensorflow/core/kernels/reduce_sum_op.cc"
SELECTED = {"//tensorflow/core:reduction_ops_test",
            "//tensorflow/python/kernel_tests:reduction_ops_test"}
BAR, BAR_S = 1.1, 1.0
#: what configure and Bazel write into the checkout, ignored as TensorFlow's .gitignore does
IGNORED = "/bazel-*\n.tf_configure.bazelrc\n/tools/python_bin_path.sh\n"


def _git_workspace(base: Path) -> Path:
    ws = world.copy_workspace(base)
    (ws / ".gitignore").write_text(IGNORED)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fixture"]):
        subprocess.run([*git, *args], cwd=ws, check=True, capture_output=True)
    return ws


def _edit(ws: Path, n: int) -> None:
    """A code edit (the object file changes, so the tests that depend on it run again)."""
    path = ws / EDIT_FILE
    path.write_text(path.read_text() + f'\nextern "C" int tfw_bench_edit_{n}() {{ return {n}; }}\n')


def _tfwizard(recipe: Path, data: Path) -> tuple[float, dict[str, Any]]:
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(data)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed tfwizard has its .pyc files
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tfwizard", "test", str(recipe), "--json"],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"tfwizard test exited {done.returncode}:\n{done.stderr[-4000:]}")
    run = json.loads(done.stdout)
    return seconds, run


def _check_ran(run: dict[str, Any]) -> None:
    got = {t["label"]: t for t in run["tests"]}
    if set(got) != SELECTED or any(t["cached"] for t in got.values()):
        raise RuntimeError(f"tfwizard ran {got}, not {SELECTED} afresh")


def _bare(box: rb.WarmContainer, argv: list[str]) -> float:
    step = next(s for s in box.plan.steps if s.name == "build")
    run = box.exec(argv, step.env, step.workdir)
    if run.exit_code != 0 or "(cached)" in run.output or run.output.count("PASSED in") != 2:
        raise RuntimeError(f"bare bazel test: exit {run.exit_code}\n{run.output[-4000:]}")
    return run.seconds


def measure(tmp: Path, rounds: int, say: Any = print) -> dict[str, Any]:
    """The figures of one run (see the module's docstring)."""
    import docker

    bare_ws, tfw_ws = _git_workspace(tmp / "bare"), _git_workspace(tmp / "tfw")
    tag = uuid.uuid4().hex[:6]
    bare_recipe = world.fixture_recipe(tmp / "bare.toml", workspace=bare_ws, name="bench",
                                       prefix=f"tfwizard-bench-bare-{tag}")
    tfw_recipe = world.fixture_recipe(tmp / "tfw.toml", workspace=tfw_ws, name="bench",
                                      prefix=f"tfwizard-bench-tfw-{tag}")
    plan = rb.plan_of(bare_recipe)
    argv = [a for a in test_argv(plan, sorted(SELECTED), "-", tag_filters().for_container(False))
            if not a.startswith(warm.BEP_FLAG)]
    out: dict[str, Any] = {"rounds": rounds, "edit_file": EDIT_FILE, "bare_argv": argv}
    client = docker.from_env(timeout=900)
    tfw_plan = rb.plan_of(tfw_recipe)
    space = warm.workspace_for(tfw_plan, str(tfw_recipe.resolve()))
    try:
        with rb._bench(f"tfwizard-bench-bare-{tag}") as bench:
            box = rb.WarmContainer(bench, plan, "bare", tmp / "record")
            box.start()
            rb._check(box.configure(), "configure")
            _edit(bare_ws, 0)
            _edit(tfw_ws, 0)
            out["bare_first_s"] = round(_bare(box, argv), 2)
            first, run = _tfwizard(tfw_recipe, tmp / "data")
            _check_ran(run)
            out["tfwizard_first_s"] = round(first, 2)
            say(f"first runs: bare {out['bare_first_s']} s, tfwizard {out['tfwizard_first_s']} s")
            bare_s: list[float] = []
            tfw_s: list[float] = []
            exec_s: list[float] = []  # tfwizard's own configure-if-changed + bazel test exec
            for n in range(1, rounds + 1):
                _edit(bare_ws, n)
                _edit(tfw_ws, n)
                order = ("bare", "tfw") if n % 2 else ("tfw", "bare")
                for who in order:
                    if who == "bare":
                        bare_s.append(_bare(box, argv))
                    else:
                        s, run = _tfwizard(tfw_recipe, tmp / "data")
                        _check_ran(run)
                        tfw_s.append(s)
                        exec_s.append(run["seconds"])
                say(f"round {n}: bare {bare_s[-1]:.2f} s, tfwizard {tfw_s[-1]:.2f} s")
    finally:
        remove_warm(client, space, tfw_plan)
    out["bare_s"] = [round(x, 2) for x in bare_s]
    out["tfwizard_s"] = [round(x, 2) for x in tfw_s]
    out["tfwizard_bazel_exec_s"] = [round(x, 2) for x in exec_s]
    out["tfwizard_fixed_cost_median_s"] = round(statistics.median(
        t - e for t, e in zip(tfw_s, exec_s, strict=True)), 2)
    out["bare_median_s"] = round(statistics.median(bare_s), 2)
    out["tfwizard_median_s"] = round(statistics.median(tfw_s), 2)
    out["ratio"] = round(out["tfwizard_median_s"] / out["bare_median_s"], 2)
    out["difference_s"] = round(out["tfwizard_median_s"] - out["bare_median_s"], 2)
    out["meets_bar"] = out["ratio"] <= BAR or out["difference_s"] <= BAR_S
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    world.ensure_images()
    tmp = Path(tempfile.mkdtemp(prefix="tfwizard-bench-test-loop-"))
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": list(os.getloadavg())}
    try:
        report.update(measure(tmp, args.rounds))
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    report["load_after"] = list(os.getloadavg())
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"bare bazel test {report['bare_median_s']:.2f} s, tfwizard test "
          f"{report['tfwizard_median_s']:.2f} s (medians of {args.rounds}): ratio "
          f"{report['ratio']}, {report['difference_s']:+.2f} s; bar met: {report['meets_bar']}; "
          f"tfwizard's time outside its bazel exec: {report['tfwizard_fixed_cost_median_s']} s")
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
