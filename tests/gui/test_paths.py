"""The wizard resolves the recipe's paths as the CLI does (issue 15, item 6; the review's
Appendix A.4): relative to the recipe file's folder, not the GUI process's working folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.recipe import load_recipe, save_recipe
from tfwizard.gui import jobs
from tfwizard.gui.state import WizardState

from .conftest import host

# the offscreen platform plugin warns that it cannot resize/raise windows
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def _saved_recipe(tmp_path: Path) -> Path:
    from tfwizard.core.defaults import default_recipe

    recipe = default_recipe(None).with_changes({"output.dir": "dist", "install.venv": "venv"})
    folder = tmp_path / "recipes"
    folder.mkdir()
    return save_recipe(recipe, folder / "r.toml")


def test_relative_output_dir_and_venv_follow_the_recipe_file(qapp, tmp_path, monkeypatch):
    path = _saved_recipe(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the GUI's working folder is not the recipe's
    state = WizardState(load_recipe(path), host("no-gpu-server"))
    # where the session's runner puts the wheel, as for `tfwizard build` (core/session.py)
    assert jobs.prepare_build(state, preflight=False).out_dir == path.parent / "dist"
    assert jobs.target_python(state) == str(path.parent / "venv" / "bin" / "python")


def test_source_page_checks_the_checkout_relative_to_the_recipe(make_window, tmp_path,
                                                                 monkeypatch):
    path = _saved_recipe(tmp_path)
    checkout = path.parent / "tf"
    checkout.mkdir()
    (checkout / "configure.py").write_text("# TensorFlow's configure\n")
    monkeypatch.chdir(tmp_path)
    window = make_window()
    assert window.open_recipe(path)
    wizard = window.wizard
    wizard.state.update({"tensorflow.source_dir": "tf", "tensorflow.ref": ""})
    from tfwizard.gui.pages import PageId

    wizard.go_to(PageId.SOURCE)
    assert wizard.source.checkout_radio.isChecked()
    assert wizard.source.validatePage(), wizard.source.block_reason.text()
