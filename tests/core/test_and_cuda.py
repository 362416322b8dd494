"""[and-cuda] follows the backend: on for a CUDA recipe, off for CPU and ROCm, in
`recipe new`, `recipe set backend.kind=...`, a recipe without the key and every
`with_changes` (the wizard's pages, a finding's fix); `check` warns when a CUDA recipe
drops it (UX review 4, finding 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit

from tfwizard.cli import capture
from tfwizard.cli.context import ExitStatus
from tfwizard.core.defaults import commented_recipe_toml, default_recipe
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import AND_CUDA, extras_for_backend, load_recipe, parse_recipe
from tfwizard.core.recipe_edit import apply_assignments, parse_assignment
from tfwizard.core.rules import apply_fix, evaluate

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
NO_GPU = HostProfile.load(HOSTS / "no-gpu-server.json")

MINIMAL = """schema = 1
name = "x"
[tensorflow]
version = "2.21.0"
[backend]
kind = "{kind}"
"""


def _missing(recipe):
    return [f for f in evaluate(recipe, NO_GPU) if f.code == "AND_CUDA_MISSING"]


@pytest.mark.parametrize("kind, expected", [("cuda", [AND_CUDA]), ("cpu", []), ("rocm", [])])
def test_a_recipe_without_the_key_gets_the_backends_extras(kind, expected):
    text = MINIMAL.format(kind=kind) + ('[cuda]\nversion = "12.5.1"\n' if kind == "cuda" else "")
    assert parse_recipe(text).install.extras == expected


def test_a_written_key_is_kept_whatever_the_backend():
    text = MINIMAL.format(kind="cpu") + '[install]\nextras = ["and-cuda"]\n'
    assert parse_recipe(text).install.extras == [AND_CUDA]
    text = MINIMAL.format(kind="cuda") + '[cuda]\nversion = "12.5.1"\n[install]\nextras = []\n'
    assert parse_recipe(text).install.extras == []


def test_extras_for_backend_keeps_the_others_in_order():
    assert extras_for_backend("cuda", ["x", AND_CUDA, "y"]) == [AND_CUDA, "x", "y"]
    assert extras_for_backend("cpu", ["x", AND_CUDA, "y"]) == ["x", "y"]
    assert extras_for_backend("rocm", []) == []


def test_a_backend_change_moves_and_cuda_unless_the_change_sets_it():
    cpu = LAPTOP.with_changes({"backend.kind": "cpu"})
    assert cpu.install.extras == []
    assert cpu.with_changes({"backend.kind": "cuda"}).install.extras == [AND_CUDA]
    assert cpu.with_changes({"backend.kind": "rocm"}).install.extras == []
    kept = cpu.with_changes({"backend.kind": "cuda", "install.extras": ["other"]})
    assert kept.install.extras == ["other"]
    # the same backend again changes nothing the user chose
    bare = LAPTOP.with_changes({"install.extras": []})
    assert bare.with_changes({"backend.kind": "cuda"}).install.extras == []


@pytest.mark.parametrize("host_file", sorted(HOSTS.glob("*.json")), ids=lambda p: p.stem)
def test_recipe_new_from_every_host_fake(host_file):
    """What `recipe new --from-host` writes: [and-cuda] exactly for a CUDA recipe, and
    `check` has nothing to say about it."""
    recipe = default_recipe(HostProfile.load(host_file))
    written = parse_recipe(commented_recipe_toml(recipe))
    assert (AND_CUDA in written.install.extras) == (written.backend.kind == "cuda"), \
        (written.backend.kind, written.install.extras)
    assert _missing(written) == []


def _cli(*argv: str) -> tuple[int, str, str]:
    status, out, err = capture(list(argv))
    return int(status), out, err


def _extras(path: Path) -> list[str]:
    return list(tomlkit.parse(path.read_text("utf-8")).unwrap()["install"]["extras"])


def test_recipe_set_backend_kind_moves_and_cuda_and_says_so(tmp_path):
    path = tmp_path / "r.toml"
    status, out, err = _cli("recipe", "new", str(path))  # this machine: no GPU, CPU
    assert status == ExitStatus.OK, err
    assert _extras(path) == []
    status, out, err = _cli("recipe", "set", str(path), "backend.kind=cuda",
                            "cuda.version=12.5.1", "cuda.cudnn=9.3.0",
                            "cuda.compute_capabilities=sm_86")
    assert status == ExitStatus.OK, err
    assert _extras(path) == [AND_CUDA]
    assert f"install.extras = {json.dumps([AND_CUDA])} (was [])" in out
    assert _missing(load_recipe(path)) == []
    status, out, err = _cli("recipe", "set", str(path), "backend.kind=cpu")
    assert status == ExitStatus.OK, err
    assert _extras(path) == []
    # an explicit choice in the same command wins
    status, out, err = _cli("recipe", "set", str(path), "backend.kind=cuda", "install.extras=")
    assert status == ExitStatus.OK, err
    assert _extras(path) == []


def test_check_warns_when_a_cuda_recipe_drops_it_and_the_fix_puts_it_back():
    dropped = LAPTOP.with_changes({"install.extras": ["other"]})
    found = _missing(dropped)
    assert [f.severity for f in found] == ["warning"]
    assert found[0].key == "install.extras" and "[and-cuda]" in found[0].message
    assert found[0].fix is not None
    fixed = apply_fix(dropped, found[0])
    assert fixed.install.extras == [AND_CUDA, "other"]
    assert _missing(fixed) == []
    # `recipe set ... install.extras+=and-cuda` does the same
    new, changed = apply_assignments(dropped, [parse_assignment("install.extras+=and-cuda")])
    assert changed and _missing(new) == []


def test_no_warning_where_dropping_it_is_right():
    # CPU and ROCm recipes have no use for it
    assert _missing(LAPTOP.with_changes({"backend.kind": "cpu"})) == []
    # a CUDA 11 build of a release whose [and-cuda] brings CUDA 12 drops it on purpose
    # (AND_CUDA_MAJOR's own fix)
    old = LAPTOP.with_changes({"cuda.version": "11.8", "install.extras": []})
    assert _missing(old) == []


def test_check_cli_names_the_finding(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text((ROOT / "recipes" / "tf218-cuda-laptop.toml").read_text())
    status, out, err = _cli("recipe", "set", str(path), "install.extras=")
    assert status == ExitStatus.OK, err
    status, out, err = _cli("check", str(path), "--host", str(HOSTS / "no-gpu-server.json"))
    assert "AND_CUDA_MISSING" in out + err
    assert 'fix: Install with [and-cuda] (install.extras = ["and-cuda"])' in out + err
