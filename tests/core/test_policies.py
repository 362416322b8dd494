"""One owner per policy (code-review section 4): the functions that CLI, GUI, plan and rules
all call, and the places that used to write their own copy agreeing with them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tfwizard.core import cc as ccmod
from tfwizard.core import paths
from tfwizard.core.building.plan.plan import make_plan, resource_limits
from tfwizard.core.building.run import record
from tfwizard.core.defaults import default_recipe
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import default_python, load_knowledge, recipe_python
from tfwizard.core.recipe import load_recipe
from tfwizard.core.rules import evaluate
from tfwizard.core.secrets import references, substitute
from tfwizard.core.sizing import job_sizing

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
KB = load_knowledge()


def test_cc_tokens_parse_back_to_the_capability_they_name():
    for cc in KB.known_ccs():
        parsed = ccmod.parse_cc(cc)
        assert parsed is not None
        cubin = ccmod.parse_target(ccmod.cc_token(cc))
        ptx = ccmod.parse_target(ccmod.cc_token(cc, ptx=True))
        assert cubin is not None and ptx is not None
        assert (cubin.major, cubin.minor, cubin.cubin, cubin.ptx) == (*parsed, True, False)
        # compute_XY: a cubin and PTX (TF's CUDA rules, tf-cuda-rules)
        assert (ptx.major, ptx.minor, ptx.cubin, ptx.ptx) == (*parsed, True, True)
        assert ccmod.token(*parsed) == ccmod.cc_token(cc)
    assert ccmod.token(10, 0) == "sm_100" and ccmod.token(8, 9, ptx=True) == "compute_89"
    assert ccmod.auto_targets(["8.6", "7.5", "8.6"]) == ["sm_75", "compute_86"]


def test_secret_substitution_is_one_pass_and_leaves_unknown_names():
    text = "--remote_header=x-api-key=${KEY} ${OTHER} ${KEY}"
    assert references([text, "${THIRD} ${KEY}"]) == ["KEY", "OTHER", "THIRD"]
    # a value that itself looks like a reference is not expanded again
    assert substitute(text, {"KEY": "${OTHER}", "OTHER": "o"}) == \
        "--remote_header=x-api-key=${OTHER} o ${OTHER}"
    assert substitute(text, {"KEY": "k"}) == "--remote_header=x-api-key=k ${OTHER} k"


def test_every_release_default_python_is_one_it_supports_and_all_callers_agree():
    for rel in KB.releases:
        assert default_python(rel) in rel.pythons
    host = HostProfile.load(HOSTS / "small-laptop.json")
    recipe = default_recipe(host, KB)
    release = KB.release_for(recipe)
    assert release is not None
    # defaults writes the release's default; the plan and an empty python.version agree
    assert recipe.python.version == default_python(release)
    empty = recipe.with_changes({"python.version": ""})
    assert make_plan(empty, kb=KB).python == recipe_python(empty, release) == \
        recipe.python.version


def test_release_for_takes_master_when_the_recipe_names_no_version():
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
    assert KB.release_for(recipe) == KB.release(recipe.tensorflow.version)
    master = KB.release_for(recipe.with_changes({"tensorflow.version": ""}))
    assert master is not None and master.is_master


@pytest.mark.parametrize("ram_gib", [3, 8, 16, 30, 64, 256])
def test_plan_and_check_size_jobs_by_the_same_rule(ram_gib):
    host = HostProfile.load(HOSTS / "small-laptop.json")
    host = dataclasses.replace(host, resources=dataclasses.replace(
        host.resources, ram_total_bytes=ram_gib * 2**30, cpu_count=16))
    per_job = KB.platforms["memory"]["gib_per_job"]
    sizing = job_sizing(host, per_job)
    assert sizing is not None and 1 <= sizing.jobs <= 16
    jobs, ram_mb, _why = resource_limits(host, 0, per_job)
    assert jobs == sizing.jobs and ram_mb == int(ram_gib * 1024 * 0.8)
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
    codes = {f.code: f for f in evaluate(recipe, build_host=host, kb=KB)}
    if sizing.jobs < 16:  # check says how many jobs the plan passes: the plan's number
        assert f"--jobs={sizing.jobs}" in codes["RAM_LIMITS_JOBS"].message
    else:
        assert "RAM_LIMITS_JOBS" not in codes


def test_record_location_is_one_rule(tmp_path):
    env = {paths.DATA_DIR_ENV: str(tmp_path)}
    assert record.builds_dir(env=env) == tmp_path / "builds"
    assert record.record_path("20250102-130405-a1b2c3", env=env) == \
        tmp_path / "builds" / "20250102-130405-a1b2c3"
    assert record.record_path("x", root=tmp_path / "other") == tmp_path / "other" / "builds" / "x"


def test_detect_measures_free_disk_where_the_data_dir_is(tmp_path, monkeypatch):
    from tfwizard.core.detect.resources import default_disk_path

    monkeypatch.setenv(paths.DATA_DIR_ENV, str(tmp_path / "data"))
    assert default_disk_path() == paths.data_dir() == tmp_path / "data"
