"""Benchmark: the restructure (issue 16) before and after, in fresh interpreters.

Checks out a base commit (default `main`) with `git worktree add` in a temporary folder,
then runs, alternately in that checkout and in this one, N times each:
  help    ``python -m tfwizard --help``            (cold start of the command line)
  check   ``python -m tfwizard check RECIPE --host PROFILE --json``   (load the knowledge
          base, evaluate every rule; a host profile, so no probing of this machine)
and prints the median wall and CPU time (the child's user + system time: other work on a
shared machine does not count) of each, and the ratio now/base. Target: no slower.

Usage: python bench/restructure.py [--base main] [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECIPE = "recipes/tf221-cpu-portable.toml"
HOST = "tests/data/hosts/no-gpu-server.json"
CASES = {
    "help": ["--help"],
    "check": ["check", RECIPE, "--host", HOST, "--json"],
}


def run_once(checkout: Path, args: list[str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one `python -m tfwizard ARGS` run in `checkout`."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "TFWIZARD_LANG": "en"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tfwizard", *args], cwd=checkout, env=env,
                          capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # check exits 1 when it finds an error
        raise SystemExit(f"{checkout}: tfwizard {' '.join(args)} exited "
                         f"{done.returncode}:\n{done.stderr[-2000:]}")
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    base_commit = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout.strip()
    now_commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="tfwizard-bench-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), base_commit],
                       cwd=ROOT, check=True)
        try:
            results: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for name, case in CASES.items():
                for where in (base, ROOT):  # warm the file cache, compile .pyc
                    run_once(where, case)
                for _ in range(args.runs):
                    for label, where in (("base", base), ("now", ROOT)):
                        results.setdefault((name, label), []).append(run_once(where, case))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT,
                           check=False)
    print(f"base {args.base} ({base_commit}) vs now ({now_commit}), {args.runs} runs each, "
          "median ms")
    print(f"{'case':8} {'base wall':>10} {'now wall':>10} {'base cpu':>10} {'now cpu':>10} "
          f"{'cpu now/base':>13}")
    for name in CASES:
        b = results[(name, "base")]
        n = results[(name, "now")]
        bw, nw = (statistics.median(w for w, _c in r) for r in (b, n))
        bc, nc = (statistics.median(c for _w, c in r) for r in (b, n))
        print(f"{name:8} {bw:10.0f} {nw:10.0f} {bc:10.0f} {nc:10.0f} {nc / bc:13.2f}")


if __name__ == "__main__":
    main()
