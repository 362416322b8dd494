"""The Build page's Start builds warm, through the same session call as `tfwizard build`:
the real fixture build in the offline test image leaves the recipe's warm container
running, and `tfwizard build` of the same recipe file then reuses that container and skips
configure. Real Docker engine, real images, the TF-shaped fixture workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from tests import world
from tfwizard.core.building.warm import container as warm
from tfwizard.core.building.warm.run import WarmRunner
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe
from tfwizard.gui import jobs
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.main_window import CLOSE_CANCEL
from tfwizard.gui.pages import PageId

from .conftest import host

pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.qt_log_ignore("This plugin does not support")]

BUILD_TIMEOUT_MS = 420_000


@pytest.fixture
def fixture_recipe(tmp_path, monkeypatch):
    """The fixture recipe with cache volumes and a data folder of its own, removed after."""
    world.require_docker()
    world.ensure_images()
    import docker

    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=world.copy_workspace(tmp_path),
                                  prefix=prefix, name="gui-warm")
    client = docker.from_env(timeout=300)
    spaces: list = []  # the warm workspaces the test made
    yield SimpleNamespace(path=recipe, spaces=spaces)
    for space in spaces:
        world.remove_workspace(client, space)
    for vol in client.volumes.list(filters={"label": LABEL}):
        if vol.name.startswith(prefix):
            vol.remove(force=True)
    client.close()


def test_start_builds_warm_and_the_cli_reuses_its_workspace(qtbot, make_window, fixture_recipe,
                                                            tmp_path):
    started: list = []

    def factory(state):  # the page's own default job, recorded
        job = jobs.default_build_job(state)
        started.append(job)
        return job

    window = make_window(recipe=load_recipe(fixture_recipe.path), host=host("no-gpu-server"),
                         jobs=Jobs(build=factory), ask_close=lambda: CLOSE_CANCEL)
    assert window.wizard.go_to(PageId.BUILD) == PageId.BUILD
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None, timeout=BUILD_TIMEOUT_MS)
    assert page.result.ok, page.result.message
    runner = started[0]
    assert isinstance(runner, WarmRunner)
    fixture_recipe.spaces.append(runner.workspace)
    import docker

    client = docker.from_env(timeout=120)
    try:
        box = client.containers.get(runner.workspace.container_name)
        assert box.status == "running"  # kept up for the next build
        # its own process: this test's event loop is running (asyncio.run would refuse)
        done_cli = subprocess.run(  # noqa: S603 - argv list, our own interpreter
            [sys.executable, "-m", "tfwizard", "build", str(fixture_recipe.path), "--json",
             "--out", str(tmp_path / "cli-out")], capture_output=True, text=True,
            env=dict(os.environ), timeout=BUILD_TIMEOUT_MS / 1000, check=False)
        out, err = done_cli.stdout, done_cli.stderr
        assert done_cli.returncode == 0, err[-2000:]
        done = [json.loads(line) for line in out.splitlines()
                if line.startswith("{") and '"finished"' in line][-1]["result"]
        log = (Path(done["record_dir"]) / "log.txt").read_text("utf-8")
        assert "reused" in log and warm.SKIP_LINE in log, log[-3000:]
        assert client.containers.get(runner.workspace.container_name).id == box.id
    finally:
        client.close()
