"""One truth about the choices, driven by the target machine: an imported profile (an RTX
4090 Laptop GPU on driver 550, the UX review's) sets the backend, a CUDA its driver runs,
its compute capabilities ticked, and the recipe's name and venv; the advice box, the
checklist and `tfwizard advise --target` agree; ROCm for it is an error finding."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from tfwizard.cli import capture
from tfwizard.core.defaults import default_recipe
from tfwizard.core.host import HostProfile
from tfwizard.gui.pages import PageId

from .conftest import HOSTS, host

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


@pytest.fixture
def laptop(tmp_path):
    data = json.loads((HOSTS / "rtx4090-driver550-py311.json").read_text())
    data["nvidia"]["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090 Laptop GPU"
    path = tmp_path / "rtx4090-laptop.json"
    path.write_text(json.dumps(data))
    return path


def test_an_imported_target_drives_every_choice(qtbot, make_window, laptop):
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    state = wizard.state
    assert state.recipe.backend.kind == "cpu" and state.recipe.name == "tf221-cpu"
    assert wizard.welcome.import_target(str(laptop))
    r = state.recipe
    # what `recipe new --target` writes, through the same core function
    expected = default_recipe(state.build_host, state.kb, target=HostProfile.load(laptop),
                              target_path=str(laptop))
    # install.extras ([and-cuda]) follows the backend in Recipe.with_changes on another
    # branch; every other key is the same
    assert r.with_changes({"install.extras": expected.install.extras}) == expected
    assert r.backend.kind == "cuda" and r.cuda.version == "12.4.1"  # driver 550: CUDA 12.4
    assert r.name == "tf221-cuda-rtx-4090-laptop"
    assert r.install.venv == "~/.venvs/tf221-cuda-rtx-4090-laptop"
    assert not state.errors_for(None), [f.message for f in state.errors_for(None)]
    readiness = {c.key: c.status for c in wizard.welcome.readiness.checks}
    assert readiness["driver_cuda"] == "pass"  # the review's warning is gone
    # the advice box says what `tfwizard advise --target` says, and the checklist's time
    _status, out, _ = capture(["advise", "--host", str(HOSTS / "no-gpu-server.json"),
                               "--target", str(laptop), "--json"])
    advice = json.loads(out)
    box = wizard.welcome.advice
    assert box.advice is not None and box.advice.summary == advice["summary"]
    assert "tensorflow[and-cuda]" in advice["summary"] and "`" not in box.summary.text()
    hours = box.advice.estimate.text()
    rows = {c.key: c.text for c in wizard.welcome.readiness.checks}
    # the same estimate as the checklist's (the summary, as the CLI's, says no source
    # build is needed when the official wheel serves the target)
    assert hours in rows["resources"]
    # the GPU page: the target's 8.9 ticked, and the button that ticks it says so
    assert wizard.go_to(PageId.COMPUTE) == PageId.COMPUTE
    page = wizard.compute
    assert page.ticked() == ["8.9"]
    preset = page.findChild(QPushButton, "preset-target")
    assert preset is not None and preset.text() == "Target machine"


def test_backend_switches_follow_the_target(qtbot, make_window, laptop):
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    state = wizard.state
    wizard.welcome.import_target(str(laptop))
    assert wizard.go_to(PageId.BACKEND) == PageId.BACKEND
    backend = wizard.backend
    # ROCm for an NVIDIA-only target: an error finding, its radio not offered
    assert not backend.radios["rocm"].isEnabled()
    assert backend.reasons["rocm"].text().startswith("Not available: A ROCm wheel runs only")
    state.update({"backend.kind": "rocm"})
    codes = {f.code: f.severity for f in state.findings}
    assert codes.get("ROCM_FOR_NVIDIA_TARGET") == "error"
    assert state.recipe.name == "tf221-rocm-rtx-4090-laptop"
    assert not state.recipe.cuda.version  # no [cuda] settings left for a ROCm build
    fix = backend.findings.row("ROCM_FOR_NVIDIA_TARGET").fix_button
    qtbot.mouseClick(fix, Qt.MouseButton.LeftButton)  # "Build for CUDA"
    r = state.recipe
    assert r.backend.kind == "cuda" and r.cuda.version == "12.4.1" and r.cuda.cudnn
    assert r.cuda.compute_capabilities == ["compute_89"]  # the cubin and the PTX
    assert r.name == "tf221-cuda-rtx-4090-laptop"
    assert not state.errors_for(None)
    # a name the user typed stays
    state.update({"name": "mine"})
    state.update({"backend.kind": "cpu"})
    assert state.recipe.name == "mine"


def test_a_recipe_opened_from_a_file_keeps_its_own_choices(qtbot, make_window, laptop,
                                                           tmp_path):
    from tfwizard.core.recipe import load_recipe, save_recipe

    path = tmp_path / "r.toml"
    recipe = load_recipe(HOSTS.parents[2] / "recipes" / "tf218-cuda-laptop.toml")
    save_recipe(recipe.with_changes({"target.host_profile": str(laptop)}), path)
    window = make_window(host=host("no-gpu-server"))
    assert window.open_recipe(path)
    state = window.wizard.state
    assert state.recipe.cuda.version == recipe.cuda.version  # not re-chosen for the target
    assert state.recipe.name == recipe.name and not window.isWindowModified()
