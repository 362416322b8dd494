"""The build image is looked at before any build step, against the real Docker engine (issue 14).

Two small images are made here from the busybox test image with `docker commit`: one that
has what a clang 17 CPU plan names (/usr/bin/python3, /usr/lib/llvm-17/bin/clang, bazel on
PATH; busybox links standing in for the programs, since only their presence is checked)
and one made from it with a file more, to move a tag between them. A plan naming clang 18
must fail within seconds, naming the path, in `check --preflight`, in `build`'s gate and in
the runner itself; a tag that moved since the recorded build is a warning; an image whose
registry cannot be reached is an error that says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.docker import kit
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import Step, make_plan
from tfwizard.core.building.run.preflight import check_image, image_needs, recorded_image
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.recipe import Recipe, load_recipe

pytestmark = [pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[2]
NO_GPU = str(ROOT / "tests" / "data" / "hosts" / "no-gpu-server.json")
LLVM17 = "/usr/lib/llvm-17/bin/clang"
LLVM18 = "/usr/lib/llvm-18/bin/clang"
#: what the llvm-17 image holds: the programs a clang 17 CPU plan names (busybox links)
SETUP = ("busybox mkdir -p /usr/bin /usr/lib/llvm-17/bin && "
         "busybox ln -s /bin/busybox /usr/bin/python3 && "
         f"busybox ln -s /bin/busybox {LLVM17} && "
         "busybox ln -s busybox /bin/bazel")  # the image's PATH is /bin


def _commit(client, base: str, script: str, repository: str, tag: str):
    container = client.containers.run(base, ["/bin/busybox", "sh", "-c", script], detach=True,
                                      network_mode="none")
    try:
        assert container.wait(timeout=60)["StatusCode"] == 0, container.logs()
        return container.commit(repository=repository, tag=tag)
    finally:
        container.remove(force=True)


@pytest.fixture(scope="module")
def img(tmp_path_factory):
    """The module's images (removed at the end) and a source folder for recipes."""
    world.require_docker()
    world.ensure_images()
    import docker

    client = docker.from_env(timeout=120)
    repo = f"tfwizard-test/preflight-{uuid.uuid4().hex[:8]}"
    llvm17 = _commit(client, world.BUSYBOX, SETUP, repo, "llvm17")
    other = _commit(client, f"{repo}:llvm17", "busybox mkdir -p /opt/other", repo, "other")
    base = tmp_path_factory.mktemp("preflight")
    src = base / "src"
    src.mkdir()
    (src / "configure.py").write_text("")  # a checkout, as check wants one
    yield SimpleNamespace(client=client, repo=repo, ref=f"{repo}:llvm17", llvm17=llvm17,
                          other=other, base=base, src=src)
    for tag in ("llvm17", "other", "moving"):
        try:
            client.images.remove(f"{repo}:{tag}", force=True)
        except docker.errors.ImageNotFound:
            pass
    client.close()


def _recipe(img, clang: str, *, image: str | None = None, name: str = "preflight") -> Recipe:
    return Recipe(name=name).with_changes({
        "tensorflow.version": "2.21.0", "tensorflow.source_dir": str(img.src),
        "backend.kind": "cpu", "toolchain.clang": clang, "build.image": image or img.ref,
        # the image's clang (2.21 otherwise compiles with its hermetic LLVM and names none)
        "toolchain.local_clang": True,
        "build.network": "none", "cache.disk_cache": False, "cache.repository_cache": False})


def test_the_needs_are_what_the_plan_runs_and_names(img):
    plan = make_plan(_recipe(img, "18"), recipe_dir=img.base)
    needs = {n.candidates: n for n in image_needs(plan)}
    assert set(needs) == {("/usr/bin/python3",), ("bazel",), (LLVM18,)}
    assert needs[("bazel",)].command and not needs[(LLVM18,)].command
    assert needs[(LLVM18,)].key == "toolchain.clang"


def test_an_image_with_what_the_plan_names_passes(img):
    plan = make_plan(_recipe(img, "17"), recipe_dir=img.base)
    assert check_image(plan, client=img.client, data_root=img.base / "none") == []


def test_the_fixture_image_has_what_the_fixture_recipe_names(img, tmp_path):
    """gcc recipe, no clang in the image: the check looks for what the plan names (gcc)."""
    recipe = world.fixture_recipe(tmp_path / "fixture.toml", workspace=img.src, prefix="x")
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path)
    assert ("gcc",) in {n.candidates for n in image_needs(plan)}
    assert check_image(plan, client=img.client, data_root=tmp_path) == []


def test_a_missing_compiler_fails_within_seconds_and_names_the_path(img):
    plan = make_plan(_recipe(img, "18"), recipe_dir=img.base)
    t0 = time.monotonic()
    found = check_image(plan, client=img.client, data_root=img.base / "none")
    elapsed = time.monotonic() - t0
    assert [(f.code, f.severity, f.key) for f in found] == [
        ("PATH_NOT_IN_IMAGE", "error", "toolchain.clang")]
    assert LLVM18 in found[0].message and img.ref in found[0].message
    assert "toolchain.clang" in found[0].message  # the fix
    assert elapsed < 10, elapsed
    # no probe container is left behind
    assert not img.client.containers.list(all=True, filters={"label": "io.tfwizard.step=probe"})


def test_check_preflight_and_build_stop_on_the_missing_compiler(img):
    recipe = img.base / "clang18.toml"
    recipe.write_text(_recipe(img, "18").to_toml(), encoding="utf-8")
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(img.base / "data")}
    t0 = time.monotonic()
    status, out, err = capture(["check", str(recipe), "--host", NO_GPU, "--preflight"],
                               env_vars=env)
    assert status == ExitStatus.ERROR, out + err
    assert "ERROR PATH_NOT_IN_IMAGE" in out and LLVM18 in out
    assert time.monotonic() - t0 < 15
    t0 = time.monotonic()
    status, out, err = capture(["build", "--fresh", str(recipe), "--host", NO_GPU], env_vars=env)
    assert status == ExitStatus.ERROR
    assert "PATH_NOT_IN_IMAGE" in err and LLVM18 in err and "preflight found 1 error" in err
    assert time.monotonic() - t0 < 15
    assert not (img.base / "data" / "builds").exists()  # stopped before the build began


def test_the_runner_stops_before_any_step(img, tmp_path):
    """Without the CLI's gate (the GUI, or --force), the runner looks inside first."""
    plan = make_plan(_recipe(img, "18"), recipe_dir=img.base)
    runner = BuildRunner(plan, data_root=tmp_path, client=img.client, pull=False)
    t0 = time.monotonic()
    events = kit.run(runner)
    result = events[-1].result
    assert result.status == "error" and LLVM18 in result.message
    assert time.monotonic() - t0 < 15
    log = runner.record.log_path.read_text()
    assert "step configure" not in log and LLVM18 in log
    saved = json.loads((runner.record.path / "plan.json").read_text())
    assert saved["image_id"] == img.llvm17.id
    assert kit.leftovers(img.client, runner.build_id) == []


def test_a_tag_that_moved_since_the_recorded_build_is_a_warning(img, tmp_path):
    moving = f"{img.repo}:moving"
    img.llvm17.tag(img.repo, "moving")
    plan = make_plan(_recipe(img, "17", image=moving, name="moving"), recipe_dir=img.base)
    quick = dataclasses.replace(plan, wheel_dir=kit.WHEEL_DIR, steps=[
        Step("build", "analyse", ("sh", "-c", kit.make_wheel_script()), workdir="/")])
    result = kit.run(BuildRunner(quick, data_root=tmp_path, client=img.client))[-1].result
    assert result.status == "succeeded", result.message
    record = json.loads((Path(result.record_dir) / "result.json").read_text())
    assert record["image_id"] == img.llvm17.id
    assert recorded_image(plan, data_root=tmp_path) == (result.build_id, img.llvm17.id, "")
    assert check_image(plan, client=img.client, data_root=tmp_path) == []
    img.other.tag(img.repo, "moving")  # the tag now names another image
    [changed] = check_image(plan, client=img.client, data_root=tmp_path)
    assert (changed.code, changed.severity) == ("IMAGE_CHANGED", "warning")
    assert result.build_id in changed.message and img.other.id in changed.message
    assert img.llvm17.id in changed.message


def test_an_image_whose_registry_cannot_be_reached_is_an_error_that_says_so(img):
    # .invalid never resolves (RFC 2606): the registry data cannot be had, wherever this runs
    plan = make_plan(_recipe(img, "17", image="registry.invalid/tfwizard/absent:1"),
                     recipe_dir=img.base)
    t0 = time.monotonic()
    [f] = check_image(plan, client=img.client, data_root=img.base / "none")
    assert (f.code, f.severity) == ("IMAGE_UNAVAILABLE", "error")
    assert "registry.invalid/tfwizard/absent:1 is not on this machine" in f.message
    assert "docker save" in f.message and "registry.invalid" in f.message
    assert time.monotonic() - t0 < 30
