"""Benchmark for issue 17: what `tfwizard build RECIPE` costs AFTER its imports, per step.

In ONE Python process: the fixture workspace, a bare-Bazel long-lived container of the same
image and flags (bench/rebuild_baseline.WarmContainer), and tfwizard's warm workspace made
by a first `tfwizard.cli.main(["build", recipe])`. A second call warms what is imported
lazily; then every round times one bare `bazel build` no-op and one `main(["build",
recipe])` no-op (alternating which goes first). Each tfwizard call is split into steps by
timing named functions (exclusive time: a step nested in another is not counted twice;
per thread, so the exec's reading thread and the engine's worker threads count too):

    gates (host profile, check, preflight), recipe load, plan, runner setup, the warm
    container lookup, the exec (configure-if-changed + bazel build + BEP report), the BEP
    and wheel report, the success-path scan, the record writes, terminal output

and "other" is the rest of the wall time (event loop, events, glue). Printed: per-step
medians in ms, the total, the total minus the exec ("post-import overhead over the warm
exec") and the total minus bare Bazel's no-op of the same round ("over bare Bazel").

    .venv/bin/python bench/build_overhead.py [--rounds N] [--profile PATH] [--json PATH]

`--profile PATH`: also cProfile one more tfwizard call (main thread) into PATH and print
its 30 most expensive functions (cumulative).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import json
import os
import pstats
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__:
    from . import rebuild_baseline as rb
    from ._common import ROOT, remove_warm, world
else:
    import rebuild_baseline as rb
    from _common import ROOT, remove_warm, world

from tfwizard.cli import capture  # noqa: E402

DEFAULT_JSON = ROOT / "bench" / "out" / "build_overhead.json"
#: step -> the functions whose (exclusive) time is that step's: "module:Qual.name"
STEPS: dict[str, list[str]] = {
    "host profile": ["tfwizard.core.detect.cache:cached_host"],
    "check gate": ["tfwizard.cli.gates:check_gate"],
    "preflight gate": ["tfwizard.cli.gates:preflight_gate"],
    "recipe load": ["tfwizard.core.recipe:load_recipe"],
    "plan": ["tfwizard.core.building.plan.plan:make_plan"],
    "runner setup": ["tfwizard.cli.build:make_runner"],
    "docker connect": ["tfwizard.core.docker.client:connect",
                       "tfwizard.core.docker.client:is_local_engine"],
    "container lookup": ["tfwizard.core.building.warm.container:WarmContainer.find",
                         "tfwizard.core.building.warm.container:WarmContainer.ensure",
                         "tfwizard.core.building.warm.container:WarmContainer.spec_digest"],
    "configure hash": ["tfwizard.core.building.warm.container:configure_digest"],
    "exec": ["tfwizard.core.building.warm.container:WarmContainer.exec"],
    "BEP/wheel report": ["tfwizard.core.building.warm.bep:BuildReport.parse",
                         "tfwizard.core.building.run.artifacts:store_bep",
                         "tfwizard.core.building.warm.container:WarmContainer.copy_wheel"],
    "success scan": ["tfwizard.core.building.run.runner:guarded_diagnoses"],
    "knowledge load": ["tfwizard.core.knowledge:load_knowledge_from"],
    "record writes": ["tfwizard.core.building.run.record:BuildRecord.create",
                      "tfwizard.core.building.run.record:BuildRecord.lock",
                      "tfwizard.core.building.run.record:BuildRecord.write_recipe",
                      "tfwizard.core.building.run.record:BuildRecord.write_plan",
                      "tfwizard.core.building.run.record:BuildRecord.write_result",
                      "tfwizard.core.building.run.record:BuildRecord.append"],
    "terminal output": ["tfwizard.cli.follow:PlainPrinter.event",
                        "tfwizard.cli.follow:Printer.finished"],
}


class StepTimer:
    """Exclusive wall time per step of the functions in STEPS, per thread."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.trips: list[str] = []
        self._local = threading.local()
        self._undo: list[Callable[[], None]] = []

    def _wrap(self, step: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        timer = self

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = timer._local.__dict__.setdefault("stack", [])
            stack.append(0.0)  # time spent in nested timed calls
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t
                nested = stack.pop()
                timer.totals[step] = timer.totals.get(step, 0.0) + spent - nested
                if stack:
                    stack[-1] += spent

        return timed

    def install(self) -> None:
        """Wrap every function named in STEPS (their module attribute or class attribute),
        and count the engine's round trips (requests.Session.send) in `trips`."""
        import requests

        send = requests.Session.send
        trips = self.trips

        def counted(session: Any, request: Any, **kw: Any) -> Any:
            parts = [p for p in request.path_url.split("?")[0].split("/") if p]
            if parts and parts[0].startswith("v1."):
                parts = parts[1:]  # the API version
            trips.append(" ".join([request.method, *(p[:24] for p in parts[:3])]))
            return send(session, request, **kw)

        requests.Session.send = counted  # type: ignore[method-assign]
        self._undo.append(functools.partial(setattr, requests.Session, "send", send))
        for step, names in STEPS.items():
            for name in names:
                module, qual = name.split(":")
                owner: Any = importlib.import_module(module)
                *path, attr = qual.split(".")
                for part in path:
                    owner = getattr(owner, part)
                original = owner.__dict__[attr]
                if isinstance(original, classmethod):
                    wrapped: Any = classmethod(self._wrap(step, original.__func__))
                else:
                    wrapped = self._wrap(step, original)
                setattr(owner, attr, wrapped)
                self._undo.append(functools.partial(setattr, owner, attr, original))

    def uninstall(self) -> None:
        """Put the original functions back."""
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    @contextmanager
    def measure(self) -> Iterator[dict[str, float]]:
        """Totals of one call, in seconds (filled when the block ends)."""
        self.totals = {}
        self.trips.clear()
        got: dict[str, float] = {}
        yield got
        got.update(self.totals)
        got["round trips"] = len(self.trips)
        self.last_trips = list(self.trips)


def clear_process_caches() -> int:
    """Forget what a new process would not have after its imports: every functools cache
    of tfwizard's modules (knowledge, failure signatures, catalogs...) and the kept docker
    client. Returns how many caches were cleared."""
    try:
        from tfwizard.core.docker import shared as sharedclient
    except ImportError:  # a tfwizard before sharedclient.py (a "before" figure)
        pass
    else:
        sharedclient.forget()
    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("tfwizard") or module is None:
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and \
                    getattr(value, "__module__", "") == name:
                value.cache_clear()
                cleared += 1
    return cleared


def _cli(recipe: Path, out: Path, env: dict[str, str]) -> float:
    """One `tfwizard build RECIPE` in this process: seconds."""
    t = time.perf_counter()
    status, stdout, stderr = capture(["build", str(recipe), "--out", str(out)], env)
    seconds = time.perf_counter() - t
    if int(status) != 0 or "warm build container" not in stdout + stderr:
        raise RuntimeError(f"tfwizard build exited {status}:\n{(stdout + stderr)[-3000:]}")
    if "reused" not in stdout + stderr:
        raise RuntimeError("the warm container was not reused:\n" + stdout[-2000:])
    return seconds


def measure(rounds: int, profile: Path | None, keep_caches: bool) -> dict[str, Any]:
    """Bare Bazel's and `tfwizard build`'s no-op, interleaved, with the per-step split."""
    import docker

    from tfwizard.core.building.warm import container as warm

    tmp = Path(tempfile.mkdtemp(prefix="tfwizard-bench-overhead-"))
    subject = rb.fixture_subject(tmp)
    bare_recipe = rb.write_recipe(subject, tmp / "bare.toml",
                                  prefix=f"tfwizard-bench-bare-{uuid.uuid4().hex[:6]}")
    recipe = rb.write_recipe(subject, tmp / "tfw.toml",
                             prefix=f"tfwizard-bench-warm-{uuid.uuid4().hex[:6]}")
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp / "data")}
    out = tmp / "wheels"
    plan = rb.plan_of(recipe)
    space = warm.workspace_for(plan, str(recipe.resolve()))
    timer = StepTimer()
    res: dict[str, Any] = {"rounds": rounds, "bare_s": [], "tfwizard_s": [], "steps": []}
    client = docker.from_env(timeout=900)
    prefix = f"tfwizard-bench-bare-{uuid.uuid4().hex[:6]}"
    try:
        with rb._bench(prefix) as bench:
            bare = rb.WarmContainer(bench, rb.plan_of(bare_recipe), "fixture",
                                    tmp / "record-bare")
            bare.start()
            for run, what in ((bare.configure(), "configure"), (bare.build(), "first build")):
                rb._check(run, what)
            capture(["build", str(recipe), "--out", str(out)], env)  # the first build
            _cli(recipe, out, env)  # warms the lazy imports
            timer.install()
            for i in range(rounds):
                for side in (["bare", "tfw"] if i % 2 == 0 else ["tfw", "bare"]):
                    if side == "bare":
                        run = bare.build()
                        rb._check(run, "bare no-op")
                        res["bare_s"].append(run.seconds)
                    else:
                        if not keep_caches:
                            clear_process_caches()
                        with timer.measure() as steps:
                            res["tfwizard_s"].append(_cli(recipe, out, env))
                        res["trips"] = timer.last_trips
                        res["steps"].append(steps)
            timer.uninstall()
            if profile is not None:
                if not keep_caches:
                    clear_process_caches()
                prof = cProfile.Profile()
                prof.enable()
                _cli(recipe, out, env)
                prof.disable()
                prof.dump_stats(str(profile))
                pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    finally:
        timer.uninstall()
        remove_warm(client, space, plan)
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return res


def summarize(res: dict[str, Any]) -> dict[str, Any]:
    """Medians in ms: per step, other, total, over the exec, over bare Bazel."""
    names = [*STEPS, "other"]
    per: dict[str, list[float]] = {n: [] for n in names}
    over_exec: list[float] = []
    over_bare: list[float] = []
    exec_over_bare: list[float] = []
    for total, bare, timed in zip(res["tfwizard_s"], res["bare_s"], res["steps"],
                                  strict=True):
        steps = {k: v for k, v in timed.items() if k != "round trips"}
        for n in STEPS:
            per[n].append(steps.get(n, 0.0))
        per["other"].append(total - sum(steps.values()))
        over_exec.append(total - steps.get("exec", 0.0))
        over_bare.append(total - bare)
        exec_over_bare.append(steps.get("exec", 0.0) - bare)

    def ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    return {"steps_ms": {n: ms(v) for n, v in per.items()},
            "total_ms": ms(res["tfwizard_s"]), "bare_noop_ms": ms(res["bare_s"]),
            "over_exec_ms": ms(over_exec), "over_bare_ms": ms(over_bare),
            "exec_over_bare_ms": ms(exec_over_bare),
            "round_trips": res["trips"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", type=Path, help="cProfile one more call into this file")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--keep-caches", action="store_true",
                        help="keep the process's caches between calls (a front end that "
                        "stays up); default: cleared, as a new process after its imports")
    args = parser.parse_args(argv)
    world.ensure_images()
    load = list(os.getloadavg())
    res = measure(args.rounds, args.profile, args.keep_caches)
    report = {"cpus": os.cpu_count(), "load_before": load, "load_after": list(os.getloadavg()),
              "caches": "kept" if args.keep_caches else "cleared", **summarize(res),
              "raw": res}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    width = max(len(n) for n in report["steps_ms"])
    for name, value in report["steps_ms"].items():
        print(f"{name:<{width}}  {value:7.1f} ms")
    print(f"{'total':<{width}}  {report['total_ms']:7.1f} ms   (bare Bazel no-op "
          f"{report['bare_noop_ms']} ms; medians of {args.rounds}; process caches "
          f"{report['caches']})")
    print(f"docker round trips per build: {len(report['round_trips'])}: "
          + ", ".join(report["round_trips"]))
    print(f"post-import overhead over the warm exec: {report['over_exec_ms']} ms; "
          f"over bare Bazel: {report['over_bare_ms']} ms (the exec itself: "
          f"{report['exec_over_bare_ms']} ms over bare Bazel's)")
    print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
