"""core/warm.py without Docker: workspace identity, the configure digest, the BEP's wheel."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests import world
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
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


def test_build_script_runs_configure_then_build_and_drops_idle_bep_files(tmp_path):
    import subprocess

    (tmp_path / "bep-old.json").write_text("{}")
    (tmp_path / "bep-busy.json").write_text("{}")
    (tmp_path / "busy.busy").write_text("1")
    argv = ["sh", "-c", warm.BUILD_SCRIPT, "sh", str(tmp_path / "bep-new.json"), "3",
            "echo", "configure", "a b", "echo", "build", "--x=1"]
    run = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["configure a b", "build --x=1"]
    assert not (tmp_path / "bep-old.json").exists()
    assert (tmp_path / "bep-busy.json").exists()  # its exec still runs
    failed = subprocess.run(["sh", "-c", warm.BUILD_SCRIPT, "sh", str(tmp_path / "bep-n.json"),
                             "1", "false", "echo", "built"], capture_output=True, text=True,
                            check=False)
    assert failed.returncode != 0 and "built" not in failed.stdout
    alone = subprocess.run(["sh", "-c", warm.BUILD_SCRIPT, "sh", str(tmp_path / "bep-m.json"),
                            "0", "echo", "only"], capture_output=True, text=True, check=False)
    assert alone.stdout.strip() == "only"


def test_idle_key_is_validated_and_defaults_to_30_minutes(tmp_path):
    import pytest

    from tfwizard.core.building.warm.run import cold_reason, recipe_idle_s
    from tfwizard.core.errors import TfWizardError

    ok = world.fixture_recipe(tmp_path / "ok.toml", workspace=tmp_path, prefix="p",
                              extra="")
    assert load_recipe(ok).build.warm_idle_min == 30
    text = ok.read_text().replace("jobs = 2", "jobs = 2\nwarm_idle_min = 5")
    ok.write_text(text)
    assert recipe_idle_s(load_recipe(ok).build.warm_idle_min) == 300
    assert recipe_idle_s(0) == warm.DEFAULT_IDLE_S == 1800
    for bad in ("-1", '"ten"', "5000"):
        ok.write_text(text.replace("warm_idle_min = 5", f"warm_idle_min = {bad}"))
        with pytest.raises(TfWizardError) as err:
            load_recipe(ok)
        assert "warm_idle_min" in str(err.value.message)
    assert cold_reason(_plan(tmp_path)) is None
