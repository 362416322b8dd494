"""A source whose own files disagree with the knowledge table is planned and built from its
files, for real, in the offline Bazel image.

The recipes name TensorFlow 2.21.0, whose table entry builds a CUDA wheel with
`--config=cuda_wheel` (TF >= 2.18). The sources here are fixture workspaces whose
`.bazelrc` has no `cuda_wheel` config (as TF up to 2.17 had none): Bazel refuses a config
no rc file defines, at once. So:

- a checkout (`tensorflow.source_dir`): `check` names the disagreement, the plan follows
  the file (no `--config=cuda_wheel`), the build makes the wheel;
- a clone at the tag: the plan is the table's until the fetch step; then the runner reads
  the clone's files and configure and the build follow them (the log and the record say
  so), while the same build without following them stops on Bazel's refusal;
- a clone whose lock files lack the recipe's Python stops right after the fetch, before
  ./configure, with the finding.

(A `.bazelversion` that disagrees would be the likelier case, but the image's Debian
Bazel wrapper refuses any .bazelversion that does not name its `bazel-4` binary.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.building.run.sourcefollow import FACTS_FILE, SourceReplan
from tfwizard.core.recipe import load_recipe

pytestmark = pytest.mark.docker

HOSTS = Path(__file__).resolve().parents[1] / "data" / "hosts"
TREES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_trees"


@pytest.fixture(scope="module")
def sw(tmp_path_factory):
    """The module's world and two bare mirrors of the fixture tagged v2.21.0 without the
    cuda_wheel config: one with lock files for Python 3.10-3.13, one for 3.12-3.13."""
    if shutil.which("git") is None:
        pytest.fail("git is needed")
    for ns in kit.docker_world(tmp_path_factory, "srcfacts"):
        ns.mirrors = {}
        for name, pythons in (("nowheelcfg", (10, 11, 12, 13)), ("nopy311", (12, 13))):
            work = _disagreeing(ns.base / name, pythons)
            kit.git(work, "init", "-q", "-b", "main")
            kit.git(work, "add", "-A")
            kit.git(work, "commit", "-q", "-m", "fixture at 2.21.0")
            kit.git(work, "tag", "v2.21.0")
            ns.mirrors[name] = ns.base / "mirrors" / f"{name}.git"
            kit.git(ns.base, "clone", "-q", "--bare", str(work), str(ns.mirrors[name]))
        yield ns


def _disagreeing(where: Path, pythons: tuple[int, ...]) -> Path:
    work = world.copy_workspace(where, version="2.21.0")  # the release its recipes name
    rc = work / ".bazelrc"
    rc.write_text("".join(line for line in rc.read_text().splitlines(keepends=True)
                          if not line.startswith("build:cuda_wheel ")))
    for minor in pythons:
        (work / f"requirements_lock_3_{minor}.txt").write_text("# lock file\n")
    return work


def _recipe(path: Path, python: str = "", **kwargs: object) -> Path:
    """A CUDA fixture recipe (nvcc with the image's gcc 12; hermetic CUDA is only named,
    the fixture downloads nothing)."""
    extra = CUDA + (f'[python]\nversion = "{python}"\n' if python else "")
    world.fixture_recipe(path, extra=extra, **kwargs)  # type: ignore[arg-type]
    path.write_text(path.read_text().replace('kind = "cpu"', 'kind = "cuda"'))
    return path


CUDA = """[cuda]
version = "12.5.1"
cudnn = "9.3.0"
compute_capabilities = ["sm_80"]
compiler = "nvcc"
"""


def _runner(sw, recipe_path: Path, tmp_path: Path, *, follow: bool) -> BuildRunner:
    recipe = load_recipe(recipe_path)
    replan = SourceReplan(recipe, make_plan, {"recipe_dir": tmp_path})
    runner = BuildRunner(make_plan(recipe, **replan.kwargs), out_dir=tmp_path / "out",
                         data_root=sw.base / "data", client=sw.client)
    if follow:
        runner.replan = replan
    return runner


def _build(sw, runner: BuildRunner) -> tuple[object, str]:
    events = kit.run(runner)
    result = events[-1].result
    sw.builds.append(result.build_id)
    return result, runner.record.log_path.read_text()


def test_a_checkout_s_files_are_checked_planned_and_built(sw, tmp_path):
    checkout = _disagreeing(tmp_path / "checkout", (10, 11, 12, 13))
    path = _recipe(tmp_path / "checkout.toml", workspace=checkout, prefix=sw.prefix,
                   name="srcfacts-checkout")
    status, out, err = capture(["check", str(path), "--host", str(HOSTS / "no-gpu-server.json")])
    assert "SOURCE_FACT_DIFFERS" in out, out + err
    said = " ".join(out.split())
    assert ".bazelrc says the cuda_wheel config: off; tfwizard's table for TensorFlow 2.21.0 " \
           "says on" in said
    runner = _runner(sw, path, tmp_path, follow=True)
    assert "--config=cuda" in runner.plan.flag_list
    assert "--config=cuda_wheel" not in runner.plan.flag_list
    result, log = _build(sw, runner)
    assert result.status == "succeeded", log[-3000:]
    assert Path(result.wheel).is_file()


def test_a_clone_is_built_from_its_files_not_the_table(sw, tmp_path):
    path = _recipe(tmp_path / "clone.toml", workspace=None, prefix=sw.prefix,
                   name="srcfacts-clone", git_url=f"file://{sw.mirrors['nowheelcfg']}")
    # the table's plan, followed as it is: Bazel refuses the config no rc file defines
    table = _runner(sw, path, tmp_path / "table", follow=False)
    assert "--config=cuda_wheel" in table.plan.flag_list
    result, log = _build(sw, table)
    assert result.status == "failed"
    assert "Config value 'cuda_wheel' is not defined in any .rc file" in log
    assert result.findings[:1] == ("bazel-config-undefined",)  # not "the Bazel version"
    # the same recipe, following the clone's files after the fetch
    runner = _runner(sw, path, tmp_path / "follow", follow=True)
    result, log = _build(sw, runner)
    assert result.status == "succeeded", log[-3000:]
    assert Path(result.wheel).is_file()
    assert "1 build fact(s) differ from tfwizard's table" in log
    said = re.search(r"\.bazelrc @ [0-9a-f]{12}: the cuda_wheel config off \(table: on\)", log)
    assert said and said.start() < log.index("step configure:")
    record = Path(result.record_dir)
    facts = json.loads((record / FACTS_FILE).read_text())
    assert "cuda_wheel" not in facts["configs"] and len(facts["commit"]) == 40
    assert facts["pythons"] == ["3.10", "3.11", "3.12", "3.13"]
    plan = json.loads((record / "plan.json").read_text())
    build = next(s for s in plan["steps"] if s["role"] == "build")
    assert "--config=cuda" in build["argv"] and "--config=cuda_wheel" not in build["argv"]
    assert plan["source_facts"]["differences"][0]["fact"] == "cuda_wheel_config"


def test_a_clone_that_cannot_build_the_recipe_stops_before_configure(sw, tmp_path):
    path = _recipe(tmp_path / "nopy.toml", "3.11", workspace=None, prefix=sw.prefix,
                   name="srcfacts-nopy", git_url=f"file://{sw.mirrors['nopy311']}")
    runner = _runner(sw, path, tmp_path, follow=True)
    assert runner.plan.python == "3.11"
    result, log = _build(sw, runner)
    assert result.status == "error"
    assert "outside TensorFlow 2.21.0's tested range (3.12-3.13)" in log
    assert "build.network" not in log  # only what the files changed stops the build
    assert "step configure:" not in log and "step build:" not in log
    assert result.elapsed_s < 60


def test_tfwizard_build_on_the_warm_path_follows_the_clone_too(sw, tmp_path):
    """`tfwizard build` (warm by default): the CLI hands its replanner to the warm runner,
    which reads the clone in its warm container after the fetch."""
    from tfwizard.core.building.warm import container as warm

    path = _recipe(tmp_path / "warm.toml", workspace=None, prefix=sw.prefix,
                   name="srcfacts-warm", git_url=f"file://{sw.mirrors['nowheelcfg']}")
    space = warm.workspace_for(make_plan(load_recipe(path), recipe_dir=tmp_path),
                               str(path.resolve()))
    try:
        status, out, err = capture(["build", str(path), "--out", str(tmp_path / "out"),
                                    "--json", "--force"],
                                   env_vars={**os.environ,
                                             "TFWIZARD_DATA_DIR": str(sw.base / "data")})
        events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        done = [e for e in events if e.get("type") == "finished"][-1]["result"]
        log = (Path(done["record_dir"]) / "log.txt").read_text()
        assert status == 0 and done["status"] == "succeeded", log[-3000:] + err
        assert "warm build container" in log
        assert re.search(r"the cuda_wheel config off \(table: on\)", log)
        plan = json.loads((Path(done["record_dir"]) / "plan.json").read_text())
        assert "--config=cuda_wheel" not in plan["steps"][-1]["argv"]
    finally:
        world.remove_workspace(sw.client, space)


def test_the_container_readers_read_what_the_host_reader_reads(sw, tmp_path):
    """A stopped step's container (one archive per file) and a running one (one exec, the
    warm path's) give the facts srcfacts reads from a folder here."""
    from types import SimpleNamespace

    from tfwizard.core.building.run.sourcefollow import read_container_facts, read_running_facts
    from tfwizard.core.paths import LABEL
    from tfwizard.core.tfsource.facts import read_source_facts

    tree = tmp_path / "src"
    shutil.copytree(TREES / "2.22-rc0", tree)  # symbolic links copied as files
    box = sw.client.containers.run(
        world.BUSYBOX, ["sleep", "120"], detach=True, network_mode="none",
        volumes={str(tree): {"bind": "/src", "mode": "ro"}},
        labels={LABEL: "1", f"{LABEL}.build": f"{sw.prefix}-readers"},
        name=f"{sw.prefix}-readers")

    class Running:  # the warm container's exec, as WarmContainer.exec answers
        def exec(self, argv, workdir):
            run = box.exec_run(argv, workdir=workdir)
            return SimpleNamespace(output=run.output.decode().splitlines())

    try:
        here = read_source_facts(tree)
        assert here.tf_version == "2.22.0rc0" and here.pythons[-1] == "3.14"
        assert read_running_facts(Running(), str(tree)) == here
        box.stop(timeout=1)
        assert read_container_facts(box, str(tree)) == here
    finally:
        box.remove(force=True)
