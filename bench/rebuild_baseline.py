"""Benchmark baseline for issue 17: bare Bazel's rebuilds, warm and cold, with tfwizard's flags.

The half of bench/rebuild.py that tfwizard is compared against. For each workspace (the
fixture, and the generated TF-shaped one of bench/bigws.py with @big_external in distdir):

- warm: ONE long-lived container of the recipe's image (what tfwizard's build container
  is given: user, environment, mounts, network none, no capabilities, an init) with a
  persistent output-root volume; every command is a `docker exec` into it, so the Bazel
  server stays up between builds. Timed: configure, the first `bazel build` of the wheel,
  ROUNDS no-op rebuilds, ROUNDS rebuilds each after a one-line edit of the designated
  kernel file.
- cold (what every `tfwizard build` pays today): new containers, a new output-root
  volume, the same disk- and repository-cache volumes. Timed: a no-op rebuild and a
  rebuild after an edit, each as configure + build, each step in its own container.

The Bazel commands are the build plan's own (tfwizard.core.building.plan.plan.make_plan of the recipe
that write_recipe() writes, which bench/rebuild.py builds with tfwizard as well): the same
--config, --jobs, --output_user_root, --disk_cache, --repository_cache, --distdir and
progress flags. Each timed build is checked: it passed, and the wheel's sha256 changed
after an edit and stayed the same after a no-op. One warm container per workspace: a
Bazel server serves one workspace, and both are mounted at /src as tfwizard mounts them.

    .venv/bin/python bench/rebuild_baseline.py [--rounds N] [--only fixture|big]
        [--files N] [--packages N] [--external-mb N] [--json PATH] [--keep]

Prints seconds; writes JSON (default bench/out/rebuild_baseline.json). The API for
bench/rebuild.py: fixture_subject(), big_subject(), write_recipe(), measure_bare().
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__:  # imported as bench.rebuild_baseline
    from . import bigws
    from ._common import ROOT, world
else:
    import bigws
    from _common import ROOT, world

# every tfwizard name this baseline mirrors, in one place (after _common: sys.path)
from tfwizard.core.building.plan.plan import (  # noqa: E402
    OUTPUT_USER_ROOT,
    RECORD,
    SRC,
    BuildPlan,
    Step,
    make_plan,
)
from tfwizard.core.building.run.containers import PREPARE_CAPS  # noqa: E402
from tfwizard.core.building.run.containers import ROOT as ROOT_USER  # noqa: E402
from tfwizard.core.building.run.progress import BuildStats, ProgressParser  # noqa: E402
from tfwizard.core.recipe import load_recipe  # noqa: E402

#: the fixture's kernel that bench/rebuild.py edits (bigws.edit_kernel appends a line)
FIXTURE_EDIT_FILE = "tensorflow/core/kernels/add_op.cc"
#: label on every container and volume this benchmark creates (never tfwizard's own)
BENCH_LABEL = "org.tfwizard.bench"
DEFAULT_JSON = ROOT / "bench" / "out" / "rebuild_baseline.json"


@dataclass
class Subject:
    """A workspace to measure: where it is, the kernel file to edit, what it holds."""

    name: str  # fixture | big
    workspace: Path
    edit_file: str  # relative to workspace
    distdir: Path | None = None
    size: dict[str, Any] = field(default_factory=dict)


def fixture_subject(tmp: Path) -> Subject:
    """A fresh copy of tests/fixtures/tf_workspace under tmp."""
    ws = world.copy_workspace(tmp)
    files = [p for p in ws.rglob("*") if p.is_file()]
    return Subject("fixture", ws, FIXTURE_EDIT_FILE, size={
        "workspace_files": len(files), "workspace_bytes": sum(p.stat().st_size for p in files),
        "cc_files": sum(1 for p in files if p.suffix == ".cc")})


def big_subject(tmp: Path, **generate: Any) -> Subject:
    """bench/bigws.py's workspace, generated under tmp (keyword arguments: generate()'s)."""
    big = bigws.generate(tmp, **generate)
    return Subject("big", big.workspace, big.edit_file, big.distdir, size=big.to_dict())


def write_recipe(subject: Subject, path: Path, *, prefix: str) -> Path:
    """The recipe both halves build: the fixture recipe of the tests (gcc, 2 jobs, disk and
    repository caches in volumes named after prefix), plus network.distdir for the big one."""
    extra = (f"[network]\ndistdir = {json.dumps(str(subject.distdir))}\n"
             if subject.distdir else "")
    return world.fixture_recipe(path, workspace=subject.workspace, prefix=prefix,
                                name=f"bench-{subject.name}", extra=extra)


def plan_of(recipe: Path) -> BuildPlan:
    """tfwizard's build plan of the recipe: the image, mounts, steps and flags mirrored."""
    return make_plan(load_recipe(recipe), recipe_dir=recipe.parent)


# -- one Bazel command ------------------------------------------------------------------------


@dataclass
class Run:
    """One timed command: wall seconds as seen from here, and what Bazel said."""

    seconds: float
    exit_code: int
    output: str
    stats: BuildStats

    def summary(self) -> dict[str, Any]:
        s = self.stats
        return {"seconds": round(self.seconds, 2), "bazel_elapsed_s": s.elapsed_s,
                "critical_path_s": s.critical_path_s, "actions": s.total_actions,
                "processes": s.processes, "process_kinds": s.process_kinds,
                "packages_loaded": s.packages_loaded,
                "targets_configured": s.targets_configured}


def _run(seconds: float, exit_code: int, output: str) -> Run:
    parser = ProgressParser()
    for line in output.splitlines():
        parser.feed(line)
    return Run(seconds, exit_code, output, parser.stats)


def _step(plan: BuildPlan, name: str) -> Step:
    return next(s for s in plan.steps if s.name == name)


def _mounts(plan: BuildPlan, output_root: str, record: Path) -> list[Any]:
    """The plan's mounts plus what the runner adds: output root volume, /record folder."""
    import docker.types

    mounts = [docker.types.Mount(m.target, m.source, type=m.kind, read_only=m.read_only)
              for m in plan.mounts]
    mounts.append(docker.types.Mount(OUTPUT_USER_ROOT, output_root, type="volume"))
    mounts.append(docker.types.Mount(RECORD, str(record), type="bind"))
    return mounts


def _container_kwargs(plan: BuildPlan, mounts: list[Any], name: str) -> dict[str, Any]:
    """What tfwizard's runner gives a build container (runner.BuildRunner._create)."""
    return {"environment": dict(plan.container_env), "working_dir": SRC,
            "user": plan.user or "", "mounts": mounts, "network_mode": plan.network_mode,
            "labels": {BENCH_LABEL: "rebuild-baseline"}, "name": name, "detach": True,
            "privileged": False, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges"],
            "init": True}


class Bench:
    """The engine, the run's names and everything it created (removed by close())."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.volumes: list[Any] = []
        self.containers: list[Any] = []

    def volume(self, name: str) -> str:
        import docker.errors

        try:
            vol = self.client.volumes.get(name)
        except docker.errors.NotFound:
            vol = self.client.volumes.create(name=name,
                                             labels={BENCH_LABEL: "rebuild-baseline"})
        self.volumes.append(vol)
        return name

    def hand_volumes(self, plan: BuildPlan, mounts: list[Any]) -> None:
        """As the runner does for a non-root build uid: chown the volumes' top folders."""
        user = plan.user
        if not user or user.split(":")[0] == "0":
            return
        targets = [m["Target"] for m in mounts if m["Type"] == "volume"]
        kw = _container_kwargs(plan, mounts, f"{self.prefix}-prepare-{uuid.uuid4().hex[:6]}")
        kw.update(user=ROOT_USER, cap_add=list(PREPARE_CAPS), working_dir="/")
        c = self.client.containers.run(plan.image, ["chown", user, *targets], **kw)
        try:
            if c.wait()["StatusCode"] != 0:
                raise RuntimeError(f"chown of {targets} failed: {c.logs().decode()}")
        finally:
            c.remove(force=True)

    def close(self) -> None:
        import docker.errors

        for thing in [*self.containers, *self.volumes]:
            try:
                thing.remove(force=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:  # say so, and remove the rest
                print(f"note: could not remove {thing.name}: {exc}", file=sys.stderr)
        self.containers.clear()
        self.volumes.clear()


class WarmContainer:
    """One long-lived build container; commands run in it with `docker exec`."""

    def __init__(self, bench: Bench, plan: BuildPlan, name: str, record: Path) -> None:
        self.bench, self.plan, self.name = bench, plan, name
        output_root = bench.volume(f"{bench.prefix}-out-{name}")
        for vol in plan.cache_volumes.values():
            bench.volume(vol)
        record.mkdir(parents=True, exist_ok=True)
        self.mounts = _mounts(plan, output_root, record)
        self.container: Any = None

    def start(self) -> float:
        """Start the container (sleeping); returns seconds from create to running."""
        t = time.perf_counter()
        self.bench.hand_volumes(self.plan, self.mounts)
        kw = _container_kwargs(self.plan, self.mounts, f"{self.bench.prefix}-warm-{self.name}")
        self.container = self.bench.client.containers.run(self.plan.image,
                                                          ["sleep", "infinity"], **kw)
        self.bench.containers.append(self.container)
        return time.perf_counter() - t

    def exec(self, argv: Sequence[str], env: dict[str, str] | None = None,
             workdir: str = SRC) -> Run:
        api = self.bench.client.api
        t = time.perf_counter()
        exec_id = api.exec_create(self.container.id, list(argv), stdout=True, stderr=True,
                                  environment={**self.plan.container_env, **(env or {})},
                                  workdir=workdir, user=self.plan.user or "")["Id"]
        output = b"".join(api.exec_start(exec_id, stream=True))
        code = api.exec_inspect(exec_id)["ExitCode"]
        return _run(time.perf_counter() - t, int(code), output.decode("utf-8", "replace"))

    def configure(self) -> Run:
        step = _step(self.plan, "configure")
        return self.exec(step.argv, step.env, step.workdir)

    def build(self) -> Run:
        step = _step(self.plan, "build")
        return self.exec(step.argv, step.env, step.workdir)

    def wheel_sha256(self) -> str:
        run = self.exec(["sh", "-c", 'sha256sum "$1"/*.whl', "sh", self.plan.wheel_dir])
        if run.exit_code != 0:
            raise RuntimeError(f"no wheel in {self.plan.wheel_dir}: {run.output}")
        return run.output.split()[0]


def cold_build(bench: Bench, plan: BuildPlan, name: str, record: Path) -> tuple[Run, Run, str]:
    """What a `tfwizard build` does today: configure, then build, each in a new container,
    with a new output root and the plan's cache volumes. Returns (configure, build, wheel
    sha256); each Run's seconds count from its container's create to its exit."""
    output_root = bench.volume(f"{bench.prefix}-out-{name}")
    record.mkdir(parents=True, exist_ok=True)
    mounts = _mounts(plan, output_root, record)
    bench.hand_volumes(plan, mounts)
    runs: list[Run] = []
    last: Any = None
    for step_name in ("configure", "build"):
        step = _step(plan, step_name)
        t = time.perf_counter()
        kw = _container_kwargs(plan, mounts, f"{bench.prefix}-{name}-{step_name}")
        kw["environment"] = {**plan.container_env, **step.env}
        kw["working_dir"] = step.workdir
        container = bench.client.containers.run(plan.image, list(step.argv), **kw)
        bench.containers.append(container)
        code = container.wait()["StatusCode"]
        seconds = time.perf_counter() - t
        output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
        runs.append(_run(seconds, int(code), output))
        _check(runs[-1], f"cold {name} {step_name}")
        last = container
    return runs[0], runs[1], _archive_wheel_sha256(last, plan.wheel_dir)


def _archive_wheel_sha256(container: Any, wheel_dir: str) -> str:
    stream, _stat = container.get_archive(wheel_dir + "/.")
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        for member in tar.getmembers():
            if member.name.endswith(".whl"):
                fh = tar.extractfile(member)
                assert fh is not None
                return hashlib.sha256(fh.read()).hexdigest()
    raise RuntimeError(f"no wheel in {wheel_dir}")


def _check(run: Run, what: str) -> None:
    if run.exit_code != 0:
        raise RuntimeError(f"{what} exited with {run.exit_code}:\n{run.output[-4000:]}")


def _median(runs: list[Run]) -> float:
    return round(statistics.median(r.seconds for r in runs), 2)


@contextmanager
def _bench(prefix: str) -> Iterator[Bench]:
    import docker

    client = docker.from_env(timeout=900)
    bench = Bench(client, prefix)
    try:
        yield bench
    finally:
        bench.close()
        client.close()


def measure_bare(subject: Subject, recipe: Path, *, rounds: int = 3, cold: bool = True,
                 say: Callable[[str], None] = print) -> dict[str, Any]:
    """Bare Bazel's figures for one workspace (see the module docstring); a JSON-able dict.

    Uses its own cache and output-root volumes (named after the recipe's volume_prefix and
    removed at the end): give the tfwizard half a recipe with another prefix.
    """
    plan = plan_of(recipe)
    prefix = f"{load_recipe(recipe).cache.volume_prefix}-{uuid.uuid4().hex[:6]}"
    edit = subject.workspace / subject.edit_file
    value = bigws.edit_value(edit) or 0
    record = recipe.parent / f"record-{subject.name}"
    out: dict[str, Any] = {"workspace": subject.size, "edit_file": subject.edit_file,
                           "flags": plan.flag_list, "image": plan.image, "rounds": rounds}
    with _bench(prefix) as bench:
        warm = WarmContainer(bench, plan, subject.name, record)
        out["container_start_s"] = round(warm.start(), 2)
        run = warm.configure()
        _check(run, "configure")
        out["configure_s"] = round(run.seconds, 2)
        run = warm.build()
        _check(run, "first build")
        out["first_build"] = run.summary()
        say(f"{subject.name}: first build {run.seconds:.1f} s, {run.stats.total_actions} "
            f"actions, {run.stats.targets_configured} targets configured")
        sha = warm.wheel_sha256()
        noops: list[Run] = []
        for _ in range(rounds):
            run = warm.build()
            _check(run, "no-op rebuild")
            if warm.wheel_sha256() != sha:
                raise RuntimeError("the wheel changed in a no-op rebuild")
            noops.append(run)
        edits: list[Run] = []
        for _ in range(rounds):
            value += 1
            bigws.edit_kernel(edit, value)
            run = warm.build()
            _check(run, "rebuild after edit")
            new = warm.wheel_sha256()
            if new == sha:
                raise RuntimeError(f"editing {subject.edit_file} did not change the wheel")
            sha = new
            edits.append(run)
        out["noop_warm_s"] = [round(r.seconds, 2) for r in noops]
        out["noop_warm_median_s"] = _median(noops)
        out["noop_warm"] = noops[-1].summary()
        out["edit_warm_s"] = [round(r.seconds, 2) for r in edits]
        out["edit_warm_median_s"] = _median(edits)
        out["edit_warm"] = edits[-1].summary()
        say(f"{subject.name}: warm no-op {out['noop_warm_median_s']:.2f} s, warm edit "
            f"{out['edit_warm_median_s']:.2f} s (medians of {rounds})")
        # the warm server goes away before the cold runs, so it takes no memory from them
        warm.container.remove(force=True)
        if cold:
            conf, build, new = cold_build(bench, plan, "cold-noop", record)
            if new != sha:
                raise RuntimeError("a cold no-op build made another wheel")
            out["cold_noop_s"] = round(conf.seconds + build.seconds, 2)
            out["cold_noop"] = {"configure_s": round(conf.seconds, 2), **build.summary()}
            value += 1
            bigws.edit_kernel(edit, value)
            conf, build, new = cold_build(bench, plan, "cold-edit", record)
            if new == sha:
                raise RuntimeError(f"editing {subject.edit_file} did not change the wheel")
            out["cold_edit_s"] = round(conf.seconds + build.seconds, 2)
            out["cold_edit"] = {"configure_s": round(conf.seconds, 2), **build.summary()}
            say(f"{subject.name}: cold no-op {out['cold_noop_s']:.2f} s, cold edit "
                f"{out['cold_edit_s']:.2f} s (new containers and output root, same caches)")
    return out


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="no-op and edit rebuilds each")
    parser.add_argument("--only", choices=("fixture", "big"), help="one workspace only")
    parser.add_argument("--files", type=int, default=bigws.DEFAULT_FILES,
                        help="bigws: generated kernels")
    parser.add_argument("--packages", type=int, default=bigws.DEFAULT_PACKAGES,
                        help="bigws: kernel packages")
    parser.add_argument("--external-mb", type=float, default=bigws.DEFAULT_EXTERNAL_MB,
                        help="bigws: extracted size of @big_external in MB")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-container runs")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)

    world.ensure_images()
    report: dict[str, Any] = {"cpus": os.cpu_count(), "load_before": _load(), "workspaces": {}}
    tmp = Path(tempfile.mkdtemp(prefix="tfwizard-bench-rebuild-"))
    try:
        names = [args.only] if args.only else ["fixture", "big"]
        for name in names:
            base = tmp / name
            base.mkdir()
            if name == "fixture":
                subject = fixture_subject(base)
            else:
                subject = big_subject(base, files=args.files, packages=args.packages,
                                      external_mb=args.external_mb)
                print(f"big: generated in {subject.size['seconds']:.1f} s: "
                      f"{subject.size['workspace_files']} files "
                      f"({subject.size['kernel_sources']} generated kernels in "
                      f"{len(subject.size['packages'])} packages), @big_external "
                      f"{subject.size['archive_bytes'] / 1e6:.1f} MB archive, "
                      f"{subject.size['external_files']} files, "
                      f"{subject.size['external_bytes'] / 1e6:.1f} MB extracted")
            prefix = f"tfwizard-bench-bare-{uuid.uuid4().hex[:6]}"
            recipe = write_recipe(subject, base / "recipe.toml", prefix=prefix)
            figures = measure_bare(subject, recipe, rounds=args.rounds, cold=not args.no_cold)
            if name == "big":  # the time budget: generation + first build
                figures["generate_and_first_build_s"] = round(
                    subject.size["seconds"] + figures["container_start_s"]
                    + figures["configure_s"] + figures["first_build"]["seconds"], 1)
            report["workspaces"][name] = figures
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    report["load_after"] = _load()
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(_table(report))
    print(f"JSON: {args.json}")
    return 0


def _table(report: dict[str, Any]) -> str:
    rows = [("", *report["workspaces"])]
    keys = [("first build", lambda f: f["first_build"]["seconds"]),
            ("no-op, warm", lambda f: f["noop_warm_median_s"]),
            ("edit, warm", lambda f: f["edit_warm_median_s"]),
            ("no-op, cold container", lambda f: f.get("cold_noop_s")),
            ("edit, cold container", lambda f: f.get("cold_edit_s")),
            ("actions (first build)", lambda f: f["first_build"]["actions"])]
    for label, get in keys:
        rows.append((label, *[_fmt(get(f)) for f in report["workspaces"].values()]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths, strict=True)))
                     for r in rows)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.2f} s" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    sys.exit(main())
