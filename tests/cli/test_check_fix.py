"""`tfwizard check --fix`: the errors' one-click fixes applied in turn (core
fixes.fix_errors, the wizard's "Apply all fixes"), the recipe saved with its comments, the
old one kept as .bak."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"


def test_check_fix_applies_every_error_fix_and_saves(tmp_path):
    recipe = tmp_path / "r.toml"
    shutil.copy(ROOT / "recipes" / "tf218-cuda-laptop.toml", recipe)
    status, _, err = capture(["recipe", "set", str(recipe), "cuda.version=",
                              "cuda.compute_capabilities=3.5,7.0"])
    assert status == ExitStatus.OK, err
    target = str(HOSTS / "rtx4090-driver550-py311.json")
    host = str(HOSTS / "no-gpu-server.json")
    status, out, _ = capture(["check", str(recipe), "--host", host, "--target", target])
    assert status == ExitStatus.ERROR and "CUDA_MISSING" in out and "CC_TF_DEFAULT" in out
    status, out, err = capture(["check", str(recipe), "--host", host, "--target", target,
                                "--fix", "--json"])
    assert status == ExitStatus.OK, out + err
    data = json.loads(out)
    assert {f["code"] for f in data["fixed"]} == {"CUDA_MISSING", "CC_TF_DEFAULT"}
    assert data["errors"] == 0
    fixed = load_recipe(recipe)
    assert fixed.cuda.version == "12.4.1"  # the newest CUDA the target's driver 550 runs
    assert fixed.cuda.compute_capabilities == ["compute_89"]  # the target's GPU
    assert "# " in recipe.read_text()  # the file's comments kept
    assert (tmp_path / "r.toml.bak").is_file()
    status, out, err = capture(["check", str(recipe), "--host", host, "--target", target,
                                "--fix"])
    assert status == ExitStatus.OK and "no error has a fix to apply" in err
