"""A diagnosis's fix is a value (issue 15, item 2).

Every fix failures.toml and the runtime diagnosis offer is resolved against a real plan
and recipe, applied, loaded again as `tfwizard check` loads a recipe, and checked with the
rules; a fix that cannot apply says why and changes nothing. `tfwizard diagnose` prints
values `check` accepts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.core.verify.test_verify import cuda_probe, gpu_host, log
from tfwizard.cli import ExitStatus, capture
from tfwizard.core import cc as ccmod
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.diagnosis.build import load_failures
from tfwizard.core.diagnosis.runtime import diagnose as runtime_diagnose
from tfwizard.core.errors import UsageError
from tfwizard.core.fixes import (
    apply_fix,
    is_symbolic,
    plan_jobs,
    resolve_diagnoses,
    resolve_fix,
)
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import load_recipe, parse_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
RECIPES = sorted((ROOT / "recipes").glob("*.toml"))
BUILD_HOSTS = [HostProfile.load(HOSTS / f"{n}.json")
               for n in ("small-laptop", "no-gpu-server", "h100-driver560")]


def _errors(recipe, host) -> set[tuple[str, str]]:
    return {(f.code, f.key) for f in evaluate(recipe, host) if f.severity == "error"}


def test_every_build_fix_is_resolved_applied_and_checked():
    fixes = {s.id: dict(s.recipe_fix) for s in load_failures() if s.recipe_fix}
    assert {"oom-compiler-killed", "bazel-server-oom", "clang-gnu-offsetof",
            "clang-c23-extensions"} <= set(fixes)
    applied = {sig: 0 for sig in fixes}
    refused: dict[str, set[str]] = {sig: set() for sig in fixes}
    for path in RECIPES:
        # nvcc: a recipe the compiler fix (cuda.compiler = "clang") changes; x86 options
        # (x86-flags-on-arm puts the default back) and gcc (gcc-instead-of-clang clears it);
        # a Build Event Service (bes-upload-failed clears it)
        for variant in ({}, {"build.jobs": 8}, {"build.jobs": 1}, {"cuda.compiler": "nvcc"},
                        {"build.opt_flags": ["-mavx2", "-mfma"]}, {"toolchain.gcc": "13"},
                        {"remote.bes_backend": "grpcs://bes.example.com"}):
            recipe = load_recipe(path).with_changes(variant)
            recipe.path = path
            for host in BUILD_HOSTS:
                plan = make_plan(recipe, build_host=host, target_host=host,
                                 recipe_dir=path.parent)
                for sig, symbolic in fixes.items():
                    fix = resolve_fix(symbolic, recipe=recipe, plan=plan)
                    if not fix.ok:
                        assert fix.problem and not fix.changes, (sig, path.name, fix)
                        if any(map(is_symbolic, symbolic.values())):
                            with pytest.raises(UsageError):
                                apply_fix(recipe, symbolic)  # symbolic: never applied as is
                        refused[sig].add(fix.problem)
                        continue
                    fixed = apply_fix(recipe, fix.changes)
                    assert parse_recipe(fixed.to_toml(), "fixed") == fixed  # check loads it
                    assert _errors(fixed, host) <= _errors(recipe, host), (sig, path.name)
                    again = make_plan(fixed, build_host=host, target_host=host,
                                      recipe_dir=path.parent)
                    if symbolic.get("build.jobs") == "halve":
                        assert fix.changes["build.jobs"] == plan_jobs(plan) // 2 >= 1
                        assert plan_jobs(again) == plan_jobs(plan) // 2
                    else:
                        for key, value in symbolic.items():
                            if isinstance(value, str) and value.startswith("+"):  # appended
                                assert fixed.get(key)[-1] == value[1:]
                                if key == "build.bazel_flags":
                                    assert value[1:] in again.flag_list
                            else:  # a plain value (the release's image, a compiler)
                                assert fix.changes[key] == fixed.get(key) == value
                                assert recipe.get(key) != value
                    applied[sig] += 1
    assert all(applied.values()), applied
    # why a fix cannot apply is said, e.g. one job already, or the flag already passed
    assert any("one job at a time" in p for p in refused["oom-compiler-killed"]), refused
    assert any("already passed" in p for p in refused["clang-gnu-offsetof"]), refused
    # a plain value the recipe has already is no fix (build.image = "": the default image)
    assert any("already has" in p for p in refused["numpy-headers-missing"]), refused


def test_halve_needs_the_plan_and_a_jobs_flag_in_bazel_flags_wins():
    recipe = load_recipe(RECIPES[0])
    assert resolve_fix({"build.jobs": "halve"}).problem  # no plan, no recipe
    assert resolve_fix({"build.jobs": "halve"}, recipe=recipe, plan=None).problem
    flagged = recipe.with_changes({"build.bazel_flags": ["--jobs=16"]})
    plan = make_plan(flagged, build_host=BUILD_HOSTS[1])
    assert "build.bazel_flags sets --jobs" in resolve_fix({"build.jobs": "halve"},
                                                          recipe=flagged, plan=plan).problem
    # plan.json (a dict) works as well as a BuildPlan
    plan = make_plan(recipe, build_host=BUILD_HOSTS[1])
    as_json = json.loads(plan.to_json())
    assert resolve_fix({"build.jobs": "halve"}, recipe=recipe, plan=as_json).changes == \
        resolve_fix({"build.jobs": "halve"}, recipe=recipe, plan=plan).changes


RUNTIME_CASES = [  # (probe log, GPU's CC, the wheel's CCs, whether a CUDA 12.5 recipe can)
    ("ptx_jit.log", "9.0", ["sm_80", "compute_80"], True),
    ("ptx_jit_suffix.log", "12.0", ["sm_90", "compute_90"], False),  # sm_120: CUDA >= 12.8
    ("cc_below_minimum.log", "3.7", ["sm_80"], False),  # sm_37: no CUDA 12 builds it
    (None, "8.6", ["sm_70", "compute_70"], True),  # cc-ptx-only, from the facts
    (None, "6.1", ["sm_70", "sm_80", "compute_80"], True),  # cc-not-in-build
]


@pytest.mark.parametrize("logname,gpu_cc,built,possible", RUNTIME_CASES)
def test_every_runtime_fix_is_resolved_against_the_recipe_and_checked(logname, gpu_cc, built,
                                                                       possible):
    probe = cuda_probe(lines=log(logname) if logname else None, gpus=1, ccs=built)
    host = gpu_host(gpu_cc)
    found = [d for d in runtime_diagnose(probe, host) if d.recipe_fix]
    assert found, [d.id for d in runtime_diagnose(probe, host)]
    cuda_recipes = [r for r in map(load_recipe, RECIPES)  # those the cases are about
                    if r.backend.kind == "cuda" and r.cuda.version.startswith("12.5.")]
    assert cuda_recipes
    applied, problems = 0, []
    for recipe in cuda_recipes:
        for d in resolve_diagnoses(found, recipe=recipe):
            if not d.recipe_fix:
                assert d.fix_problem, d  # it says why: already there, or would not build
                problems.append(d.fix_problem)
                continue
            fixed = apply_fix(recipe, d.recipe_fix)
            assert parse_recipe(fixed.to_toml(), "fixed") == fixed
            key = "cuda.compute_capabilities"
            assert {e for e in _errors(fixed, host) if e[1] == key} <= _errors(recipe, host)
            targets = [t for t in map(ccmod.parse_target, fixed.cuda.compute_capabilities) if t]
            assert ccmod.coverage(targets, gpu_cc).cubin is not None, (d.id, targets)
            applied += 1
    assert bool(applied) == possible, (applied, problems)
    if not possible:
        assert any("new problem" in p for p in problems), problems
    # without a recipe the fix cannot be stated as a value: it says what it needs
    for d in resolve_diagnoses(found, recipe=None):
        assert not d.recipe_fix and "needs the recipe" in d.fix_problem


def _record(tmp_path: Path, recipe_path: Path, host: HostProfile, lines: list[str]) -> Path:
    folder = tmp_path / "20990101-000000-abcdef"
    folder.mkdir()
    shutil.copy(recipe_path, folder / "recipe.toml")
    recipe = load_recipe(recipe_path)
    (folder / "plan.json").write_text(make_plan(recipe, build_host=host).to_json())
    (folder / "log.txt").write_text("".join(f"err | {line}\n" for line in lines))
    (folder / "result.json").write_text(json.dumps({"exit_code": 1, "status": "failed"}))
    return folder


def test_diagnose_prints_a_fix_check_accepts(tmp_path):
    """The UX review: `tfwizard diagnose` printed build.jobs = "halve", which check
    rejects. Now the value, resolved against the record's plan; pasted, it checks."""
    recipe_path = ROOT / "recipes" / "tf221-cpu-portable.toml"
    host = HostProfile.load(HOSTS / "no-gpu-server.json")
    folder = _record(tmp_path, recipe_path, host,
                     ["clang-18: error: unable to execute command: Killed"])
    jobs = plan_jobs(json.loads((folder / "plan.json").read_text()))
    assert jobs and jobs > 2
    status, out, err = capture(["diagnose", str(folder)])
    assert status == ExitStatus.OK, err
    assert f"recipe fix: build.jobs = {jobs // 2}\n" in out and '"halve"' not in out
    status, out, err = capture(["diagnose", str(folder), "--json"])
    oom = json.loads(out)["diagnoses"][0]
    assert oom["recipe_fix"] == {"build.jobs": jobs // 2} and oom["fix_problem"] == ""
    edited = tmp_path / "edited.toml"
    edited.write_text(recipe_path.read_text().replace("[build]\n",
                                                      f"[build]\njobs = {jobs // 2}\n"))
    status, out, err = capture(["check", str(edited), "--host", str(HOSTS / "no-gpu-server.json")])
    assert status == ExitStatus.OK, out + err
    # a bare log has no plan: the fix says what it needs instead of a word check rejects
    bare = tmp_path / "build.log"
    bare.write_text("clang-18: error: unable to execute command: Killed\n")
    status, out, err = capture(["diagnose", str(bare)])
    assert "no recipe fix:" in out and '"halve"' not in out


def test_diagnose_file_streams_a_record_and_resolves_against_its_plan(tmp_path):
    """diagnose_file on a record folder (or its log.txt) reads the log through the streaming
    scanner and resolves the fix against the record's plan.json and recipe.toml; given a
    recipe, that one wins."""
    from tfwizard.core.diagnosis.build import diagnose_file

    recipe_path = ROOT / "recipes" / "tf221-cpu-portable.toml"
    host = HostProfile.load(HOSTS / "no-gpu-server.json")
    folder = _record(tmp_path, recipe_path, host,
                     ["noise", "clang-18: error: unable to execute command: Killed"])
    jobs = plan_jobs(json.loads((folder / "plan.json").read_text()))
    assert jobs and jobs > 2
    for path in (folder, folder / "log.txt"):
        oom, = diagnose_file(path)
        assert oom.id == "oom-compiler-killed" and oom.lines == (2,)
        assert oom.recipe_fix == {"build.jobs": jobs // 2} and oom.fix_problem == ""
    flagged = load_recipe(recipe_path).with_changes({"build.bazel_flags": ["--jobs=4"]})
    oom, = diagnose_file(folder, recipe=flagged)
    assert oom.recipe_fix == {} and "build.bazel_flags sets --jobs" in oom.fix_problem
