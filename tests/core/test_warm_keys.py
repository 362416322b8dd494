"""core/warm.py without Docker: workspace identity, the configure digest, the BEP's wheel."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests import world
from tfwizard.core.build import warm
from tfwizard.core.build.plan import make_plan
from tfwizard.core.recipe import load_recipe

TARGET = "//tensorflow/tools/pip_package:wheel"


def _plan(tmp_path: Path, **kw):
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=tmp_path, prefix="p", **kw)
    return make_plan(load_recipe(recipe), recipe_dir=tmp_path, uid=1000, gid=1000)


def test_workspace_key_follows_recipe_release_ref_and_backend(tmp_path):
    plan = _plan(tmp_path)
    a = warm.workspace_for(plan, "/r/a.toml")
    assert a == warm.workspace_for(plan, "/r/a.toml")
    others = [warm.workspace_for(plan, "/r/b.toml"),
              warm.workspace_for(dataclasses.replace(plan, release="2.20.0"), "/r/a.toml"),
              warm.workspace_for(dataclasses.replace(plan, backend="cuda"), "/r/a.toml"),
              warm.workspace_for(dataclasses.replace(plan, source_dir="/elsewhere"),
                                 "/r/a.toml")]
    assert len({a.key, *(o.key for o in others)}) == 5
    git = dataclasses.replace(plan, source_kind="ref", source_dir=None, git_url="file:///m",
                              git_ref="v1")
    assert warm.workspace_for(git, "/r/a.toml").key != warm.workspace_for(
        dataclasses.replace(git, git_ref="v2"), "/r/a.toml").key
    assert a.volume("out") == f"tfwizard-ws-{a.key}-out"
    assert a.labels()["io.tfwizard"] == "1" and a.labels()[warm.WORKSPACE_LABEL] == a.key


def test_configure_digest_changes_with_a_configure_key_only(tmp_path):
    plan = _plan(tmp_path)
    step = next(s for s in plan.steps if s.name == "configure")
    same = _plan(tmp_path, bazel_flags=("--verbose_failures",))  # a build flag, not configure's
    assert warm.configure_digest(plan, step) == warm.configure_digest(
        same, next(s for s in same.steps if s.name == "configure"))
    text = (tmp_path / "r.toml").read_text().replace("jobs = 2", 'jobs = 2\nopt_flags = ["-O1"]')
    (tmp_path / "r.toml").write_text(text)
    changed = make_plan(load_recipe(tmp_path / "r.toml"), recipe_dir=tmp_path, uid=1000,
                        gid=1000)
    assert warm.configure_digest(plan, step) != warm.configure_digest(
        changed, next(s for s in changed.steps if s.name == "configure"))


def _bep(success: bool, overall: bool) -> list[str]:
    uri = "file:///tmp/tfwizard-bazel/x/execroot/org_tensorflow/bazel-out/k8-opt/bin/" \
          "tensorflow/tools/pip_package/wheel_house/tensorflow_cpu-2.21.0-cp311-cp311-" \
          "linux_x86_64.whl"
    events = [
        {"id": {"namedSet": {"id": "0"}},
         "namedSetOfFiles": {"files": [{"name": "wheel_house/x.whl", "uri": uri}]}},
        {"id": {"targetCompleted": {"label": TARGET}},
         "completed": {**({"success": True} if success else {}),
                       "outputGroup": [{"name": "default", "fileSets": [{"id": "0"}]}]}},
        {"id": {"buildFinished": {}},
         "finished": {**({"overallSuccess": True} if overall else {}),
                      "exitCode": {"name": "SUCCESS" if overall else "BUILD_FAILURE",
                                   **({} if overall else {"code": 1})}}},
    ]
    return [json.dumps(e) for e in events]


def test_bep_wheel_only_from_a_successful_target_of_a_successful_build():
    assert warm.bep_wheels(_bep(True, True), TARGET) == [
        "/tmp/tfwizard-bazel/x/execroot/org_tensorflow/bazel-out/k8-opt/bin/tensorflow/tools/"
        "pip_package/wheel_house/tensorflow_cpu-2.21.0-cp311-cp311-linux_x86_64.whl"]
    assert warm.bep_wheels(_bep(False, False), TARGET) == []
    assert warm.bep_wheels(_bep(True, False), TARGET) == []
    assert warm.bep_wheels(_bep(True, True), "//other:target") == []
    assert warm.bep_wheels(_bep(True, True)[1:], TARGET) == []  # the set never arrived
    assert warm.bep_wheels([], TARGET) == []


def test_the_build_flag_points_the_bep_at_this_builds_own_file():
    assert warm.bep_flag("--build_event_json_file=/record/bep.json", "/record/b-1.json") == \
        "--build_event_json_file=/record/b-1.json"
    assert warm.bep_flag("--config=opt", "/x") == "--config=opt"
