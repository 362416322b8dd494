"""A local checkout that is missing, empty or not TensorFlow is an error in `check` and
on the Source page (issue 19, item 10)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tfwizard.cli import main
from tfwizard.cli.context import Environment
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import load_recipe, save_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "data" / "hosts" / "no-gpu-server.json"


def recipe_with(tmp_path: Path, source: str) -> Path:
    from tfwizard.core.defaults import default_recipe
    from tfwizard.core.knowledge import load_knowledge

    recipe = default_recipe(HostProfile.load(HOST), load_knowledge())
    path = tmp_path / "r.toml"
    save_recipe(recipe.with_changes({"tensorflow.source_dir": source, "tensorflow.ref": ""}),
                path)
    return path


@pytest.mark.parametrize(("make", "code"), [
    (lambda d: None, "PATH_MISSING"),
    (lambda d: d.write_text("x"), "SOURCE_NOT_FOLDER"),
    (lambda d: d.mkdir(), "SOURCE_EMPTY"),
    (lambda d: (d.mkdir(), (d / "README").write_text("x")), "SOURCE_NOT_TF"),
    (lambda d: (d.mkdir(), (d / "configure.py").write_text("")), None),
])
def test_check_reports_the_source_folder(tmp_path, make, code):
    make(tmp_path / "tf")
    path = recipe_with(tmp_path, "tf")  # relative: to the recipe's folder
    codes = [f.code for f in evaluate(load_recipe(path), HostProfile.load(HOST), None)]
    found = [c for c in codes if c.startswith("SOURCE_") or c == "PATH_MISSING"]
    assert found == ([code] if code else [])
    out = io.StringIO()
    status = main(["check", str(path), "--host", str(HOST)],
                  Environment(stdout=out, stderr=io.StringIO(), env={"NO_COLOR": "1"}))
    if code:
        assert status == 1 and code in out.getvalue()

