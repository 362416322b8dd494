"""Benchmark: what the `tfwizard` command costs to start, and a warm no-op rebuild against
bare Bazel.

Times three commands of one or more `tfwizard` console scripts (SUBJECTS, as a person runs
them: a new process each, the interpreter's start and the imports included):

- `tfwizard --help`;
- `tfwizard plan RECIPE` (the fixture's recipe);
- `tfwizard build RECIPE` with nothing changed, on its warm workspace (a no-op rebuild), and
  in the same round bare Bazel's no-op `bazel build` with the same image and flags in a
  long-lived container (bench/rebuild_baseline.WarmContainer, as bench/rebuild.py has it).

Every subject first runs each command WARMUP times untimed (the first build makes the warm
workspace). Then ROUNDS rounds, interleaved: each round times every side once per command,
the order rotating from round to round, so load from elsewhere falls on all sides alike.
Each run is checked (exit 0; the build went the warm path). Besides the wall time, each
command's CPU time (user + system of its process and its children: less sensitive to other
load than the wall time; a command run by another process shows only its own part). Also
recorded once per subject: the modules each command imports (PYTHONPROFILEIMPORTTIME).

    .venv/bin/python bench/startup.py [--rounds N] [--warmup N]
        [--subject LABEL=PATH ...] [--env LABEL:NAME=VALUE ...] [--json PATH]

Without --subject: the `tfwizard` beside this Python. --env adds a variable to one
subject's environment (several subjects may be one script in two settings). Prints the
median (min, max) per command and side, and the no-op's ratio to bare Bazel and its
difference from it; the target is at most 1.25x bare Bazel, or within 1 s of it (the fixed
cost of starting any CLI). Writes JSON (default bench/out/startup.json).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__:
    from . import rebuild_baseline as rb
    from ._common import ROOT, remove_warm, world
else:
    import rebuild_baseline as rb
    from _common import ROOT, remove_warm, world

from tfwizard.core.building.warm import container as warm  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "out" / "startup.json"
BAR = 1.25  # the no-op's ratio to bare Bazel ...
SLACK_S = 1.0  # ... or its difference from it
COMMANDS = ("help", "plan", "noop")


@dataclass
class Subject:
    """One `tfwizard` console script in one environment."""

    label: str
    script: Path
    env: dict[str, str] = field(default_factory=dict)

    def argv(self, command: str, recipe: Path, out: Path) -> list[str]:
        """The command line of COMMAND (one of COMMANDS)."""
        if command == "help":
            return [str(self.script), "--help"]
        if command == "plan":
            return [str(self.script), "plan", str(recipe)]
        return [str(self.script), "build", str(recipe), "--out", str(out)]

    def run(self, command: str, recipe: Path, base: Path, *,
            extra: dict[str, str] | None = None) -> tuple[float, float, str]:
        """Run COMMAND once: its wall and CPU seconds and its stderr; RuntimeError when it
        did not do its job."""
        env = {**os.environ, "TFWIZARD_DATA_DIR": str(base / f"data-{self.label}"),
               **self.env, **(extra or {})}
        argv = self.argv(command, recipe, base / f"wheels-{self.label}")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False,
                              timeout=900)
        seconds = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0 or (command == "noop" and "warm build container"
                                    not in done.stdout + done.stderr):
            raise RuntimeError(f"{self.label}: {' '.join(argv[1:])} exited {done.returncode}"
                               f":\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        return seconds, cpu, done.stderr

    def modules(self, recipe: Path, base: Path) -> dict[str, dict[str, float]]:
        """Per command: how many modules it imports, and their cumulative import ms (the
        second of two runs: the host profile is kept per PYTHON* setting, so the first
        run with PYTHONPROFILEIMPORTTIME detects the host again)."""
        found: dict[str, dict[str, float]] = {}
        for command in COMMANDS:
            for _ in range(2):
                err = self.run(command, recipe, base,
                               extra={"PYTHONPROFILEIMPORTTIME": "1"})[2]
            rows = [line.split("|") for line in err.splitlines()
                    if line.startswith("import time:") and "cumulative" not in line]
            top = [int(r[1]) for r in rows if not r[2].startswith("  ")]  # top level only
            found[command] = {"modules": len(rows), "import_ms": round(sum(top) / 1000, 1)}
        return found


def _subjects(specs: list[str], envs: list[str]) -> list[Subject]:
    if not specs:
        specs = [f"cli={Path(sys.executable).parent / 'tfwizard'}"]
    subjects = {}
    for spec in specs:
        label, sep, path = spec.partition("=")
        if not sep or not Path(path).is_file():
            raise SystemExit(f"--subject {spec!r}: give LABEL=PATH of a tfwizard script")
        subjects[label] = Subject(label, Path(path))
    for spec in envs:
        label, _sep, pair = spec.partition(":")
        name, sep, value = pair.partition("=")
        if label not in subjects or not sep:
            raise SystemExit(f"--env {spec!r}: give LABEL:NAME=VALUE for a --subject's label")
        subjects[label].env[name] = value
    return list(subjects.values())


def _rotated(items: list[Any], by: int) -> list[Any]:
    by %= len(items)
    return items[by:] + items[:by]


def _stats(values: list[float]) -> dict[str, Any]:
    return {"s": [round(v, 3) for v in values], "median_s": round(statistics.median(values), 3),
            "min_s": round(min(values), 3), "max_s": round(max(values), 3)}


def measure(subjects: list[Subject], base: Path, rounds: int, warmup: int) -> dict[str, Any]:
    """Every side's seconds per command (see the module's docstring)."""
    import docker

    subject = rb.fixture_subject(base)
    bare_recipe = rb.write_recipe(subject, base / "bare.toml",
                                  prefix=f"tfwizard-bench-bare-{uuid.uuid4().hex[:6]}")
    prefix = f"tfwizard-bench-start-{uuid.uuid4().hex[:6]}"
    recipe = rb.write_recipe(subject, base / "tfw.toml", prefix=prefix)
    plan = rb.plan_of(recipe)
    client = docker.from_env(timeout=900)
    space = warm.workspace_for(plan, str(recipe.resolve()))
    times: dict[str, dict[str, list[float]]] = {c: {} for c in COMMANDS}
    cpu: dict[str, dict[str, list[float]]] = {c: {} for c in COMMANDS}
    report: dict[str, Any] = {"rounds": rounds, "warmup": warmup, "subjects": {
        s.label: {"script": str(s.script), "env": s.env} for s in subjects}}
    try:
        with rb._bench(f"{prefix}-bare") as bench:
            bare = rb.WarmContainer(bench, rb.plan_of(bare_recipe), "fixture",
                                    base / "record-bare")
            bare.start()
            rb._check(bare.configure(), "bare configure")
            rb._check(bare.build(), "bare first build")
            for s in subjects:
                for _ in range(warmup):
                    for command in COMMANDS:
                        s.run(command, recipe, base)
            report["imports"] = {s.label: s.modules(recipe, base) for s in subjects}
            for i in range(rounds):
                for command in COMMANDS:
                    sides: list[Subject | None] = [*subjects, None] if command == "noop" \
                        else list(subjects)
                    for side in _rotated(sides, i):
                        if side is None:
                            run = bare.build()
                            rb._check(run, "bare no-op")
                            seconds, label = run.seconds, "bare"
                        else:
                            seconds, used, _err = side.run(command, recipe, base)
                            label = side.label
                            cpu[command].setdefault(label, []).append(used)
                        times[command].setdefault(label, []).append(seconds)
                print(f"round {i + 1}/{rounds}: " + ", ".join(
                    f"{c} {label} {v[-1]:.3f}" for c in COMMANDS
                    for label, v in times[c].items()), flush=True)
    finally:
        remove_warm(client, space, plan)  # closes the client
    for command, sides in times.items():
        report[command] = {label: _stats(values) for label, values in sides.items()}
        for label, values in cpu[command].items():
            report[command][label]["cpu_median_s"] = round(statistics.median(values), 3)
    bare_s = report["noop"]["bare"]["median_s"]
    for s in subjects:
        noop = report["noop"][s.label]["median_s"]
        report["noop"][s.label].update(ratio=round(noop / bare_s, 2),
                                       over_bare_s=round(noop - bare_s, 3),
                                       target_met=noop <= BAR * bare_s or noop - bare_s <= SLACK_S)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--subject", action="append", default=[], metavar="LABEL=PATH")
    parser.add_argument("--env", action="append", default=[], metavar="LABEL:NAME=VALUE")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    subjects = _subjects(args.subject, args.env)

    world.ensure_images()
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": list(os.getloadavg())}
    base = Path(tempfile.mkdtemp(prefix="tfwizard-bench-startup-"))
    try:
        report.update(measure(subjects, base, args.rounds, args.warmup))
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    report["load_after"] = list(os.getloadavg())
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for command in COMMANDS:
        for label, fig in report[command].items():
            line = (f"{command:5} {label:10} median {fig['median_s']:.3f} s "
                    f"(min {fig['min_s']:.3f}, max {fig['max_s']:.3f})")
            if "cpu_median_s" in fig:
                line += f", CPU {fig['cpu_median_s']:.3f} s"
            if command == "noop" and label != "bare":
                line += (f"  {fig['ratio']}x bare, {fig['over_bare_s']:+.3f} s; target "
                         f"{'met' if fig['target_met'] else 'MISSED'}")
            print(line)
    for label, found in report["imports"].items():
        print(f"imports {label}: " + ", ".join(
            f"{c} {f['modules']} modules {f['import_ms']} ms" for c, f in found.items()))
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
