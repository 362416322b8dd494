"""The pipeline both front ends call (core/session.py): prepare refuses what `tfwizard
build` refuses, start chooses warm or cold in one place, the install and the verification
leave their reports in the build record. Real recipes, host profiles, a real venv and pip;
the preflight's refusal is a proxy nothing listens on (no Docker needed)."""

from __future__ import annotations

import json
import socket
import venv
from pathlib import Path

import pytest

from tfwizard.core import session
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.building.warm.run import WarmRunner
from tfwizard.core.errors import TfWizardError
from tfwizard.core.host import HostProfile
from tfwizard.core.install.job import resolve_target
from tfwizard.core.recipe import load_recipe, save_recipe

from .install.test_install import make_wheel

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
CPU = ROOT / "recipes" / "tf221-cpu-portable.toml"
PACKAGED = ROOT / "recipes" / "tf216-rocm-gfx90a.toml"  # packages in a step of its own


def ada() -> HostProfile:
    return HostProfile.load(HOSTS / "ada-8.9-driver550.json")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def proxied(tmp_path: Path) -> Path:
    """The portable CPU recipe behind a proxy nothing listens on."""
    recipe = load_recipe(CPU)
    recipe.network.http_proxy = f"http://127.0.0.1:{closed_port()}"
    path = tmp_path / "proxied.toml"
    save_recipe(recipe, path)
    return path


def test_prepare_refuses_at_the_preflight_and_start_refuses_too(tmp_path):
    path = proxied(tmp_path)
    stages: list[tuple[str, list[str]]] = []
    prepared = session.prepare(load_recipe(path), ada(), recipe_path=path,
                               report=lambda s, f: stages.append((s, [x.code for x in f])))
    assert [s for s, _codes in stages] == ["check", "preflight"]
    assert "PROXY_UNREACHABLE" in stages[1][1]
    assert prepared.refused_by == session.PREFLIGHT and not prepared.may_build
    assert prepared.plan is not None and prepared.preflight_ran
    with pytest.raises(TfWizardError, match="preflight found errors"):
        session.start(prepared)
    forced = session.prepare(load_recipe(path), ada(), recipe_path=path, force=True)
    assert forced.refused_by is None and forced.may_build  # reported, gone past


def test_prepare_stops_at_the_check_before_planning():
    recipe = load_recipe(CPU)
    recipe.backend.kind = "cuda"
    recipe.cuda.compute_capabilities = ["3.5"]  # below what TensorFlow 2.21 builds for
    prepared = session.prepare(recipe, ada())
    assert prepared.refused_by == session.CHECK
    assert prepared.plan is None and not prepared.preflight_ran
    assert any(f.severity == "error" for f in prepared.check)


def test_a_dry_run_plans_without_the_preflight():
    prepared = session.prepare(load_recipe(CPU), ada(), recipe_path=CPU, preflight=False)
    assert prepared.plan is not None and not prepared.preflight_ran
    assert not prepared.may_build  # a plan to print, not a build to start


def test_start_is_warm_unless_fresh_or_the_plan_cannot(tmp_path):
    path = proxied(tmp_path)
    prepared = session.prepare(load_recipe(path), ada(), recipe_path=path, force=True,
                               out_dir=tmp_path / "out")
    warm = session.start(prepared)
    assert warm.warm and isinstance(warm.runner, WarmRunner) and warm.cold_reason is None
    assert warm.runner.out_dir == tmp_path / "out"
    assert warm.runner.replan is prepared.replan
    assert warm.runner.recipe_text == path.read_text("utf-8")  # the file, as saved
    cold = session.start(prepared, fresh=True)
    assert not cold.warm and not isinstance(cold.runner, WarmRunner)
    assert isinstance(cold.runner, BuildRunner) and cold.cold_reason is None
    packaged = session.prepare(load_recipe(PACKAGED), ada(), recipe_path=PACKAGED,
                               force=True)
    why = session.start(packaged)
    assert not why.warm and not isinstance(why.runner, WarmRunner)
    assert why.cold_reason and "packages its wheel in a separate step" in why.cold_reason


def test_an_output_folder_that_is_a_file_is_refused_before_the_preflight(tmp_path):
    file = tmp_path / "a-file"
    file.write_text("x")
    with pytest.raises(TfWizardError, match="the output folder"):
        session.prepare(load_recipe(CPU), ada(), recipe_path=CPU, out_dir=file)


def test_verification_is_judged_on_this_machine():
    mine = ada()
    assert session.verification_host(mine) is mine  # the profile the front end holds


@pytest.mark.slow
def test_install_and_verify_write_the_records_reports(tmp_path):
    folder = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(folder)
    record = tmp_path / "record"
    record.mkdir()
    wheel = make_wheel(tmp_path / "wheels", "tinypkg")
    recipe = load_recipe(CPU)
    recipe.install.extras = []
    target = resolve_target(venv=folder)
    assert not session.only_the_wheel(recipe, wheel, target, warm=False)
    result = session.install_built(recipe, wheel, target, record=record, no_index=True)
    assert result.ok, result.message
    saved = json.loads((record / "install.json").read_text("utf-8"))
    assert saved["status"] == "installed"
    assert saved["argv"][:4] == [str(target.python), "-m", "pip", "install"]
    # no TensorFlow in that venv: the verification fails, and says so in the record
    job = session.verify_installed(str(target.python), ada(), recipe=recipe, record=record,
                                   timeout=120)
    report = job.run()
    paths = session.record_verification(report, record, [tmp_path / "copy.json"])
    assert paths == [record / "verify.json", tmp_path / "copy.json"]
    kept = json.loads((record / "verify.json").read_text("utf-8"))
    assert kept["ok"] is False and kept == json.loads(report.to_json())
