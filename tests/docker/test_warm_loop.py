"""Issue 17's loop against the real engine: `tfwizard build r.toml --install --verify` on a
warm workspace, then one kernel file edited and the same command again: an incremental
rebuild, the TensorFlow wheel alone reinstalled (no dependency resolution), verified."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests import world
from tfwizard.cli import capture
from tfwizard.cli.context import ExitStatus
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "tests/data/hosts/no-gpu-server.json"
KERNEL = "tensorflow/core/kernels/add_op.cc"


def _record(out: str) -> Path:
    line = next(x for x in out.splitlines()[::-1] if x.startswith("Record: "))
    return Path(line.split()[1])


def test_build_install_verify_on_a_warm_workspace_reinstalls_only_the_wheel(tmp_path):
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the fixture wheel is cp311")
    world.require_docker()
    world.ensure_images()
    import docker

    workspace = world.copy_workspace(tmp_path)
    links = tmp_path / "links"
    world.build_cuda_stub_wheel(links)
    venv = tmp_path / "venv"
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    recipe = world.fixture_recipe(
        tmp_path / "r.toml", workspace=workspace, prefix=prefix,
        extra=f'[install]\nvenv = "{venv}"\nextras = ["and-cuda"]\n')
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    argv = ["build", str(recipe), "--host", str(HOST), "--install", "--find-links",
            str(links), "--no-index", "--verify"]
    client = docker.from_env(timeout=300)
    space = warm.workspace_for(make_plan(load_recipe(recipe), recipe_dir=recipe.parent),
                               str(recipe.resolve()))
    try:
        status, out, err = capture(argv, env)
        assert status == ExitStatus.OK, out + err
        first = _record(out)
        assert "reinstalling only" not in out  # a new venv: the full install
        freeze = subprocess.run([str(venv / "bin/python"), "-m", "pip", "freeze"],
                                capture_output=True, text=True, check=True).stdout
        assert "tfwizard-fixture-cuda-stub==1.0" in freeze

        kernel = workspace / KERNEL
        kernel.write_text(kernel.read_text("utf-8")
                          + '\nextern "C" int tfw_loop_edit(void) { return 17; }\n', "utf-8")
        status, out, err = capture(argv, env)
        assert status == ExitStatus.OK, out + err
        again = _record(out)
        assert again != first
        assert "warm build container" in out + err and "reused" in out + err
        # incremental: fewer actions ran than in the first build, and some did
        ran = [json.loads((r / "result.json").read_text())["stats"]["processes"]
               for r in (first, again)]
        assert 0 < ran[1] < ran[0], ran
        # wheel-only: pip was told --no-deps and never looked at the links folder
        assert "reinstalling only the TensorFlow wheel" in out
        installed = json.loads((again / "install.json").read_text())
        assert installed["status"] == "installed", installed
        assert "[and-cuda]" not in installed["requirement"]
        started = [e for e in _install_argv(again)]
        assert "--no-deps" in started and str(links) not in started, started
        assert json.loads((again / "verify.json").read_text())["ok"] is True
        print(f"\nwheel-only reinstall: {installed['elapsed_s']} s "
              f"(first, full install: {json.loads((first / 'install.json').read_text())['elapsed_s']} s)")
        assert installed["elapsed_s"] < 10
    finally:
        world.remove_workspace(client, space)
        for vol in client.volumes.list(filters={"label": LABEL}):
            if vol.name.startswith(prefix):
                vol.remove(force=True)
        client.close()


def _install_argv(record: Path) -> list[str]:
    """pip's argv of the record's install (install.json keeps it)."""
    data = json.loads((record / "install.json").read_text())
    return list(data.get("argv") or [])
