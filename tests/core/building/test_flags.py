"""The Bazel flag groups: each flag's group, the groups' order, and groups on their own."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tfwizard.core.building.plan import flags as fl
from tfwizard.core.building.plan.plan import BuildPlan, make_plan
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[3]
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
SMALL = HostProfile.load(ROOT / "tests" / "data" / "hosts" / "small-laptop.json")


def test_every_flag_names_its_group_and_groups_come_in_order():
    recipe = LAPTOP.with_changes({"remote.cache": "grpc://cache:9092",
                                  "build.bazel_flags": ["--verbose_failures"]})
    plan = make_plan(recipe, build_host=SMALL, uid=1000, gid=1000)
    groups = [f.group for f in plan.bazel_flags]
    assert all(g in fl.GROUPS for g in groups)
    # the groups appear in GROUPS order, each as one run
    runs = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
    assert runs == sorted(set(runs), key=fl.GROUPS.index)
    by_flag = {f.flag: f.group for f in plan.bazel_flags}
    assert by_flag["--config=cuda"] == "backend"
    assert by_flag["--remote_cache=grpc://cache:9092"] == "remote"
    assert by_flag["--verbose_failures"] == "user" and groups[-1] == "user"
    assert by_flag["--disk_cache=/cache/disk"] == "caches"
    assert any(g == "resources" for g in groups)  # the small laptop's RAM sizes the jobs


def test_the_remote_group_alone():
    recipe = LAPTOP.with_changes({"remote.executor": "grpcs://exec:443",
                                  "remote.instance_name": "main",
                                  "remote.headers": ["x-api-key=${KEY}"]})
    assert [f.flag for f in fl.remote_flags(recipe.remote)] == [
        "--remote_executor=grpcs://exec:443", "--remote_instance_name=main",
        "--remote_header=x-api-key=${KEY}"]
    # headers go only to a remote service that is there
    bare = LAPTOP.with_changes({"remote.headers": ["a=b"]})
    assert fl.remote_flags(bare.remote) == []


def test_cache_group_follows_the_volumes():
    both = fl.cache_volumes(LAPTOP)
    assert [f.flag for f in fl.cache_flags(both)] == ["--disk_cache=/cache/disk",
                                                      "--repository_cache=/cache/repo"]
    repo_only = fl.cache_volumes(LAPTOP.with_changes({"cache.disk_cache": False}))
    assert list(repo_only) == ["repo"]
    assert [f.flag for f in fl.cache_flags(repo_only)] == ["--repository_cache=/cache/repo"]


def test_cache_volumes_are_the_users_own_unless_the_recipe_shares_them():
    """Users of one engine do not share (and cannot poison) each other's Bazel caches; a
    team shares one on purpose with cache.shared."""
    uid = str(os.getuid())
    own = fl.cache_volumes(LAPTOP)
    assert own == {"disk": f"tfwizard-u{uid}-bazel-disk-cache",
                   "repo": f"tfwizard-u{uid}-bazel-repo-cache"}
    team = fl.cache_volumes(LAPTOP.with_changes({"cache.shared": True,
                                                 "cache.volume_prefix": "lab"}))
    assert team == {"disk": "lab-bazel-disk-cache", "repo": "lab-bazel-repo-cache"}
    mounted = {m.source for m in make_plan(LAPTOP).mounts if m.kind == "volume"}
    assert set(own.values()) <= mounted


def test_the_group_survives_plan_json_and_old_records_load():
    plan = make_plan(LAPTOP, uid=1000, gid=1000)
    data = json.loads(plan.to_json())
    again = BuildPlan.from_dict(data)
    assert again.bazel_flags == plan.bazel_flags and again.steps == plan.steps
    # a plan.json written before flags had groups and steps had roles
    for f in data["bazel_flags"]:
        del f["group"]
    for s in data["steps"]:
        del s["role"], s["needs_record"]
    data["a_key_from_the_future"] = 1
    old = BuildPlan.from_dict(data)
    assert [s.role for s in old.steps] == [s.role for s in plan.steps]
    assert [s.needs_record for s in old.steps] == [s.needs_record for s in plan.steps]
    assert old.flag_list == plan.flag_list
