"""What the Install and Verify pages tell a user whose wheel is for another machine, and
the closing summary: the CLI's own commands, pasteable (a `~/` path stays expandable)."""

from __future__ import annotations

import shlex
from pathlib import Path

from tfwizard.cli import build_parser
from tfwizard.core.handoff import finish_summary, target_commands, venv_of
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[2]


def test_target_commands_are_the_clis_and_paste_into_a_shell(tmp_path):
    recipe = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml").with_changes(
        {"install.venv": "~/.venvs/tf 218", "install.extras": ["and-cuda"]})
    install, verify = target_commands(recipe, "/out/tensorflow-2.18.0-cp311-linux_x86_64.whl")
    assert install.startswith("tfwizard install tensorflow-2.18.0-cp311-linux_x86_64.whl ")
    assert "--extras and-cuda" in install and "--create" in install
    assert shlex.split(verify)[-2:] == ["--expect", "cuda"]
    assert "'~/.venvs/tf 218'" in install  # a space: quoted (the shell cannot expand it)
    plain = recipe.with_changes({"install.venv": "~/.venvs/tf218"})
    assert "--venv ~/.venvs/tf218 " in target_commands(plain, None)[0]  # expandable
    for line in (install, verify):  # each one parses as `tfwizard` takes it
        args = build_parser().parse_args(shlex.split(line)[1:])
        assert args.handler is not None


def test_the_summary_names_the_venv_and_how_to_use_it(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = str(venv / "bin" / "python")
    assert venv_of(python) == venv and venv_of(str(tmp_path / "python")) is None
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
    lines = {ln.key: ln.text for ln in finish_summary(recipe, wheel="/w/t.whl", python=python,
                                                        target_path="laptop.json")}
    assert lines["wheel"] == "/w/t.whl" and lines["venv"] == str(venv)
    assert f"source {venv / 'bin' / 'activate'}" in lines["activate"]
    assert "tfwizard install t.whl" in lines["target"]
