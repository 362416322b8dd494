"""One rule for the recipe's paths on this machine (issue 15, item 6).

Every path key resolves against the recipe file's folder, wherever the command runs, in
every command that uses it (the wizard's side: tests/gui/test_paths.py). Command-line
options stay relative to the folder the command runs in.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.errors import UsageError
from tfwizard.core.recipe import HOST_PATH_KEYS, load_recipe

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"

RECIPE = """schema = 1
name = "paths"

[tensorflow]
version = "2.18.0"
source_dir = "checkout"

[backend]
kind = "cuda"

[cuda]
version = "12.5.1"
cudnn = "9.3.0"
compute_capabilities = ["8.6"]
local_cuda_path = "redist/cuda"
local_cudnn_path = "~/redist/cudnn"
local_nccl_path = "/opt/nccl"

[toolchain]
clang = "18"

[target]
host_profile = "profiles/target.json"

[install]
venv = "venvs/tf"
extras = []

[network]
distdir = "archives"

[output]
dir = "wheels"
"""


@pytest.fixture
def layout(tmp_path):
    """A recipe in recipes/ of a project folder, and another folder to run commands from."""
    project = tmp_path / "project" / "recipes"
    (project / "profiles").mkdir(parents=True)
    shutil.copy(HOSTS / "laptop-rtx3060-550.json", project / "profiles" / "target.json")
    path = project / "r.toml"
    path.write_text(RECIPE, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return path, elsewhere


def test_every_path_key_resolves_against_the_recipe_folder(layout, monkeypatch):
    path, elsewhere = layout
    monkeypatch.chdir(elsewhere)
    recipe = load_recipe(path)
    here = path.parent
    assert recipe.resolve_path("tensorflow.source_dir") == here / "checkout"
    assert recipe.resolve_path("cuda.local_cuda_path") == here / "redist/cuda"
    assert recipe.resolve_path("cuda.local_cudnn_path") == Path.home() / "redist/cudnn"
    assert recipe.resolve_path("cuda.local_nccl_path") == Path("/opt/nccl")
    assert recipe.resolve_path("target.host_profile") == here / "profiles/target.json"
    assert recipe.resolve_path("install.venv") == here / "venvs/tf"
    assert recipe.resolve_path("install.python") is None  # empty
    assert recipe.resolve_path("network.distdir") == here / "archives"
    assert recipe.resolve_path("output.dir") == here / "wheels"
    assert recipe.resolve_path("output.dir", base=Path("/b")) == Path("/b/wheels")
    named = recipe.with_changes({"install.python": "python3.11"})
    assert named.resolve_path("install.python") == Path("python3.11")  # found on PATH
    relative = recipe.with_changes({"install.python": "venvs/tf/bin/python"})
    assert relative.resolve_path("install.python") == here / "venvs/tf/bin/python"
    unsaved = recipe.with_changes({})
    unsaved.path = None
    assert unsaved.resolve_path("output.dir") == elsewhere / "wheels"
    assert set(HOST_PATH_KEYS) == {k for k in HOST_PATH_KEYS if recipe.get(k) is not None}
    with pytest.raises(UsageError):
        recipe.resolve_path("rocm.path")  # a path inside the build image, not here


def test_plan_check_and_preflight_use_the_recipe_folder_from_anywhere(layout):
    path, elsewhere = layout
    here = path.parent
    status, out, err = capture(["plan", str(path), "--host", str(HOSTS / "no-gpu-server.json"),
                                "--format", "json"], cwd=elsewhere)
    assert status == ExitStatus.OK, err
    plan = json.loads(out)
    sources = {m["target"]: m["source"] for m in plan["mounts"]}
    assert sources["/src"] == str(here / "checkout")
    assert sources["/cache/distdir"] == str(here / "archives")
    assert sources[str(here / "redist/cuda")] == str(here / "redist/cuda")
    assert plan["configure_env"]["LOCAL_CUDA_PATH"] == str(here / "redist/cuda")
    # the target profile next to the recipe: the 8.6 laptop, not the GPU-less build host
    status, out, err = capture(["check", str(path), "--host", str(HOSTS / "no-gpu-server.json"),
                                "--json", "--preflight"], cwd=elsewhere)
    found = json.loads(out)["findings"]
    assert not any(f["code"] == "CC_NOT_COVERED" for f in found), found
    missing = {f["key"]: f["message"] for f in found if f["code"] == "PATH_MISSING"}
    assert str(here / "checkout") in missing["tensorflow.source_dir"]  # the rules check it
    assert str(here / "archives") in missing["network.distdir"]


def test_install_and_verify_take_the_recipes_venv_from_its_folder(layout):
    path, elsewhere = layout
    venv = path.parent / "venvs" / "tf"
    status, out, err = capture(["install", str(elsewhere / "x-1-py3-none-any.whl"),
                                "--recipe", str(path)], cwd=elsewhere)
    assert status == ExitStatus.USAGE
    assert f"{venv}: no virtual environment there" in err, err
    status, out, err = capture(["verify", "--recipe", str(path), "--json"], cwd=elsewhere)
    assert json.loads(out)["python"] == str(venv / "bin" / "python"), out[:500]
    # an option is relative to where the command runs
    status, out, err = capture(["verify", "--recipe", str(path), "--venv", "v", "--json"],
                               cwd=elsewhere)
    assert json.loads(out)["python"] == str(elsewhere / "v" / "bin" / "python")
