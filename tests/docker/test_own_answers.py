"""Two recipes on one checkout each compile with their own configure answers, and every
wheel is held against its recipe before the build says it succeeded (reliability F3).

Recipes P and Q build the same TF-shaped checkout and differ only in build.opt_flags,
which configure writes into the checkout's `.tf_configure.bazelrc`
(`build:opt --copt=-DTFW_FIXTURE_MARK=recipe_p|recipe_q`). The fixture's C API keeps that
mark as text in libtensorflow_framework.so, so what Bazel really compiled is read from
the wheel itself, not from tfwizard's record. One checkout, one cache prefix, the two
warm workspaces kept between the tests; the order is the module's:

  P warm, Q warm, P warm (the third build reran ./configure), P warm (skipped, its own),
  Q cold, P warm (reran again), then P with a flag that makes its wheel contradict it.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.install.wheelcheck import RECORD_FILE
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NOTE = ".tf_configure.bazelrc is not what ./configure wrote for this recipe"


@pytest.fixture(scope="module")
def pq(tmp_path_factory):
    """The checkout, recipes P and Q on it, their warm workspaces (removed at the end)."""
    for ns in kit.docker_world(tmp_path_factory, "answers"):
        ns.source = world.copy_workspace(ns.base)
        ns.recipes = {}
        spaces = []
        for name in ("p", "q"):
            path = world.fixture_recipe(
                ns.base / f"{name}.toml", workspace=ns.source, prefix=ns.prefix,
                name=f"answers-{name}",
                opt_flags=["-Wno-sign-compare", f"-DTFW_FIXTURE_MARK=recipe_{name}"])
            ns.recipes[name] = path
            plan = make_plan(load_recipe(path), recipe_dir=path.parent)
            spaces.append(warm.workspace_for(plan, str(path.resolve())))
        ns.runs = 0
        try:
            yield ns
        finally:
            for space in spaces:
                world.remove_workspace(ns.client, space)


def _build(pq, name: str, *extra: str) -> tuple[int, dict, str]:
    """`tfwizard build` of recipe `name` (its own --out folder); (exit, result, log)."""
    pq.runs += 1
    out = pq.base / f"out-{pq.runs}-{name}"
    status, stdout, err = capture(
        ["build", str(pq.recipes[name]), "--out", str(out), "--json", *extra],
        env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(pq.base / "data")})
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    done = [e for e in events if e.get("type") == "finished"]
    assert done, err[-3000:] + stdout[-3000:]  # a refused check's findings are in stdout
    result = done[-1]["result"]
    pq.builds.append(result["build_id"])
    pq.wheels_offered = [e["path"] for e in events
                         if e.get("type") == "artifact" and e.get("kind") == "wheel"]
    log = (Path(result["record_dir"]) / "log.txt").read_text("utf-8")
    return int(status), result, log


def _mark(wheel: str | Path) -> str:
    """The TFW_FIXTURE_MARK the wheel's library was compiled with."""
    with zipfile.ZipFile(wheel) as zf:
        data = zf.read("tensorflow/libtensorflow_framework.so")
    at = data.index(b"tfw-fixture-mark=")
    return data[at:data.index(b"\0", at)].decode().split("=", 1)[1]


def _bep_marks(result: dict) -> set[str]:
    """The marks in the options Bazel parsed, its rc files (.tf_configure.bazelrc among
    them) expanded: the BEP's optionsParsed.cmdLine."""
    marks: set[str] = set()
    for line in (Path(result["record_dir"]) / "bep.json").read_text("utf-8").splitlines():
        options = json.loads(line).get("optionsParsed") or {}
        marks |= {o.split("TFW_FIXTURE_MARK=")[1] for o in options.get("cmdLine", [])
                  if "TFW_FIXTURE_MARK=" in o}
    return marks


def _succeeded(status: int, result: dict, log: str) -> str:
    assert status == 0 and result["status"] == "succeeded", (result, log[-4000:])
    check = json.loads((Path(result["record_dir"]) / RECORD_FILE).read_text("utf-8"))
    assert check["ok"] and result["wheel_check"]["ok"]
    return result["wheel"]


def test_p_q_p_warm_each_compiles_with_its_own_answers(pq):
    p1 = _succeeded(*_build(pq, "p"))
    assert _mark(p1) == "recipe_p" and pq.wheels_offered == [p1]
    q1 = _succeeded(*_build(pq, "q"))
    assert _mark(q1) == "recipe_q"
    assert "recipe_q" in (pq.source / ".tf_configure.bazelrc").read_text()

    status, result, log = _build(pq, "p")  # before: skipped configure, built with Q's flags
    p2 = _succeeded(status, result, log)
    assert _mark(p2) == "recipe_p"  # what compiled it (Q's answers: "recipe_q")
    assert _bep_marks(result) == {"recipe_p"}
    assert NOTE in log and warm.SKIP_LINE not in log, log[-4000:]
    # the checkout now holds P's answers again, as ./configure wrote them
    assert "recipe_p" in (pq.source / ".tf_configure.bazelrc").read_text()

    status, result, log = _build(pq, "p")  # its own answers are there: nothing to redo
    assert _mark(_succeeded(status, result, log)) == "recipe_p"
    assert warm.SKIP_LINE in log and NOTE not in log


def test_a_cold_build_in_between_uses_its_own_and_the_warm_one_notices(pq):
    status, result, log = _build(pq, "q", "--fresh")
    assert "warm exec" not in log  # a cold build: configure ran in a step container
    assert _mark(_succeeded(status, result, log)) == "recipe_q"
    assert _bep_marks(result) == {"recipe_q"}

    status, result, log = _build(pq, "p")
    assert _mark(_succeeded(status, result, log)) == "recipe_p"
    assert NOTE in log
    assert _bep_marks(result) == {"recipe_p"}


def test_a_wheel_that_contradicts_its_recipe_fails_the_build_naming_it(pq):
    """`--config=cuda` in a CPU recipe's flags (`check` warns FLAG_BACKEND): TF's .bazelrc,
    and the fixture's, turn it into TF_NEED_CUDA=1, so the wheel's build_info says it is a
    CUDA build. The build fails, names the fact, keeps the wheel, hands out none."""
    status, out, err = capture(["recipe", "set", str(pq.recipes["p"]),
                                "build.bazel_flags+=--config=cuda"])
    assert status == 0, err
    status, result, log = _build(pq, "p")
    assert status != 0 and result["status"] == "failed", result
    assert result["wheel"] is None and pq.wheels_offered == []  # nothing offers to install it
    said = "is_cuda_build: the wheel says True, the recipe False"
    assert said in result["message"], result["message"]
    assert "wheel check FAILED: " + said in log
    check = json.loads((Path(result["record_dir"]) / RECORD_FILE).read_text("utf-8"))
    assert check["ok"] is False
    facts = {f["fact"]: f for f in check["facts"]}
    assert facts["is_cuda_build"]["verdict"] == "mismatch"
    assert facts["version"]["verdict"] == "match"  # the checkout's own 2.18.0
    assert Path(check["wheel"]).is_file()  # nothing is lost: the wheel is kept
    assert _mark(check["wheel"]) == "recipe_p"
