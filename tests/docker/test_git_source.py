"""TensorFlow's source from git, for real: the fetch step clones a local mirror.

The fixture workspace becomes a git repository with the release tag `v2.21.0` and a
bare mirror of it (`file://`, mounted read-only, as `tensorflow.git_url` users point at a
company mirror). Builds then clone by tag and fetch by full commit hash inside the test
image, with no network, and produce the wheel; a ref the mirror lacks fails in the fetch
step with the diagnosis that says so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.recipe import load_recipe

pytestmark = pytest.mark.docker


def _git(*args: str, cwd: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_AUTHOR_NAME": "tfwizard",
           "GIT_AUTHOR_EMAIL": "tests@tfwizard.invalid", "GIT_COMMITTER_NAME": "tfwizard",
           "GIT_COMMITTER_EMAIL": "tests@tfwizard.invalid"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    """The module's world plus a bare mirror: tag v2.21.0, and a later commit on main."""
    if shutil.which("git") is None:
        pytest.fail("git is needed (the CI clone itself has it)")
    for ns in kit.docker_world(tmp_path_factory, "git"):
        work = world.copy_workspace(ns.base, version="2.21.0")  # as the tag's source says
        _git("init", "-q", "-b", "main", cwd=work)
        _git("add", "-A", cwd=work)
        _git("commit", "-q", "-m", "fixture at 2.21.0", cwd=work)
        _git("tag", "v2.21.0", cwd=work)
        ns.tagged = _git("rev-parse", "HEAD", cwd=work)
        (work / "AFTER_THE_TAG").write_text("a later commit\n")
        _git("add", "-A", cwd=work)
        _git("commit", "-q", "-m", "after the tag", cwd=work)
        ns.later = _git("rev-parse", "HEAD", cwd=work)
        ns.mirror = ns.base / "mirror" / "tensorflow.git"
        _git("clone", "-q", "--bare", str(work), str(ns.mirror), cwd=ns.base)
        yield ns


def _build(gw, tmp_path: Path, name: str, ref: str = "", mirror: Path | None = None):
    recipe = world.fixture_recipe(tmp_path / f"{name}.toml", workspace=None,
                                  prefix=gw.prefix, name=f"git-{name}",
                                  git_url=f"file://{mirror or gw.mirror}", ref=ref)
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=gw.base / "data",
                         client=gw.client)

    events = kit.run(runner)
    result = events[-1].result
    gw.builds.append(result.build_id)
    log = runner.record.log_path.read_text()
    return result, log, plan


def test_the_release_tag_is_cloned_from_a_file_mirror_and_built(gw, tmp_path):
    result, log, plan = _build(gw, tmp_path, "tag")
    assert plan.source_kind == "release" and plan.steps[0].argv[:2] == ("git", "clone")
    assert result.status == "succeeded", log[-3000:]
    assert "Cloning into '/src'" in log
    wheel = Path(result.wheel)
    assert wheel.is_file() and wheel.name.startswith("tensorflow_cpu-")
    # the wheel is the release asked for: held against it before the build says so
    facts = {f["fact"]: (f["found"], f["verdict"]) for f in result.wheel_check["facts"]}
    assert facts["version"] == ("2.21.0", "match"), result.wheel_check


def test_a_full_commit_hash_is_fetched_and_built(gw, tmp_path):
    result, log, plan = _build(gw, tmp_path, "sha", ref=gw.later)
    assert [s.name for s in plan.steps[:3]] == ["fetch", "fetch-commit", "checkout"]
    assert result.status == "succeeded", log[-3000:]
    assert Path(result.wheel).is_file()


def test_a_ref_the_mirror_lacks_fails_in_the_fetch_step_with_its_diagnosis(gw, tmp_path):
    result, log, _plan = _build(gw, tmp_path, "missing", ref="v9.9.9")
    assert result.status == "failed" and result.wheel is None
    assert "Remote branch v9.9.9 not found in upstream origin" in log
    assert "git-ref-not-found" in result.findings
    assert "step fetch" in log and "step configure" not in log  # it stopped at the fetch


def test_a_mirror_another_user_owns_is_warned_then_diagnosed(gw, tmp_path):
    """git refuses a repository another uid owns; preflight says so before the build, and
    the real failure is diagnosed from the log."""
    import os

    from tfwizard.core.building.run.preflight import preflight

    if os.geteuid() != 0:
        pytest.skip("needs root to give the mirror to another uid (CI runs as root)")
    theirs = tmp_path / "theirs.git"
    shutil.copytree(gw.mirror, theirs)
    for path in [theirs, *theirs.rglob("*")]:
        os.lchown(path, 4321, 4321)
    recipe = world.fixture_recipe(tmp_path / "pre.toml", workspace=None, prefix=gw.prefix,
                                  git_url=f"file://{theirs}")
    warned = {f.code for f in preflight(load_recipe(recipe), {})}
    assert "GIT_MIRROR_OWNER" in warned
    result, log, _plan = _build(gw, tmp_path, "theirs", mirror=theirs)
    assert result.status == "failed"
    assert "detected dubious ownership" in log
    assert "git-dubious-ownership" in result.findings
