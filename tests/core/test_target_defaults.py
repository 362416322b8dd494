"""One starting recipe for the machine the wheel runs on (core/defaults.default_recipe):
`recipe new --target/--backend` and the wizard take the same choices from a target
profile: the backend its GPUs call for, a CUDA its driver runs, its compute capabilities,
and a name after the release, the backend and the target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.defaults import backend_choices, default_recipe, target_label
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import load_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
KB = load_knowledge()


def laptop_profile(tmp_path: Path) -> Path:
    """The review's target: an RTX 4090 Laptop GPU (CC 8.9) on driver 550 (CUDA 12.4)."""
    data = json.loads((HOSTS / "rtx4090-driver550-py311.json").read_text())
    data["nvidia"]["gpus"][0]["name"] = "NVIDIA GeForce RTX 4090 Laptop GPU"
    path = tmp_path / "rtx4090-laptop.json"
    path.write_text(json.dumps(data))
    return path


def test_the_target_sets_backend_cuda_ccs_and_names(tmp_path):
    path = laptop_profile(tmp_path)
    target = HostProfile.load(path)
    recipe = default_recipe(HostProfile.load(HOSTS / "no-gpu-server.json"), KB, target=target,
                            target_path=str(path))
    assert recipe.backend.kind == "cuda"
    driver = tuple(int(x) for x in target.nvidia.cuda_driver_version.split("."))
    cuda = tuple(int(x) for x in recipe.cuda.version.split(".")[:2])
    assert cuda <= driver  # one the driver runs natively, not the newer default
    assert recipe.cuda.version != KB.latest_release().hermetic_cuda_default
    assert recipe.cuda.cudnn and recipe.cuda.compute_capabilities == ["compute_89"]
    assert recipe.name == "tf221-cuda-rtx-4090-laptop"
    assert recipe.install.venv == "~/.venvs/tf221-cuda-rtx-4090-laptop"
    assert recipe.target.host_profile == str(path)
    errors = [f for f in evaluate(recipe, HostProfile.load(HOSTS / "no-gpu-server.json"),
                                  target) if f.severity == "error"]
    assert not errors, errors
    # driver-run CUDA: the readiness row is a pass, not the review's warning
    from tfwizard.core.views.readiness import readiness

    rows = {c.key: c.status for c in readiness(recipe, HostProfile.load(
        HOSTS / "no-gpu-server.json"), target, KB, str(path))}
    assert rows["driver_cuda"] == "pass"


def test_a_backend_given_wins_and_rocm_for_this_target_is_an_error(tmp_path):
    target = HostProfile.load(laptop_profile(tmp_path))
    cpu = default_recipe(None, KB, target=target, backend="cpu")
    assert cpu.backend.kind == "cpu" and not cpu.cuda.version and cpu.name.startswith("tf221-cpu-")
    rocm = default_recipe(None, KB, target=target, backend="rocm")
    codes = {f.code: f.severity for f in evaluate(rocm, None, target)}
    assert codes.get("ROCM_FOR_NVIDIA_TARGET") == "error"


def test_switching_backend_fills_what_it_needs(tmp_path):
    target = HostProfile.load(laptop_profile(tmp_path))
    cpu = default_recipe(None, KB, target=target, backend="cpu")
    changes = backend_choices(cpu, "cuda", None, target, KB)
    assert changes["cuda.version"] and changes["cuda.cudnn"]
    assert changes["cuda.compute_capabilities"] == ["compute_89"]
    # this machine's GPUs: "auto" (resolved at plan time), as `recipe new --from-host` wrote
    host = HostProfile.load(HOSTS / "ada-8.9-driver550.json")
    assert backend_choices(cpu, "cuda", host, None, KB)["cuda.compute_capabilities"] == ["auto"]
    # no GPU known anywhere: the official wheel's list
    nogpu = HostProfile.load(HOSTS / "no-gpu-server.json")
    assert backend_choices(cpu, "cuda", nogpu, None, KB)["cuda.compute_capabilities"] == list(
        KB.latest_release().wheel_compute_capabilities)


def test_target_label():
    assert target_label(None) == ""
    assert target_label(HostProfile.load(HOSTS / "no-gpu-server.json"), "/x/Lab Box.json") == \
        "lab-box"


def test_recipe_new_target_backend_is_the_same_function(tmp_path):
    path = laptop_profile(tmp_path)
    out = tmp_path / "r.toml"
    status, text, err = capture(["recipe", "new", str(out), "--target", str(path)])
    assert status == ExitStatus.OK, err
    written = load_recipe(out)
    expected = default_recipe(None, KB, target=HostProfile.load(path),
                              target_path="rtx4090-laptop.json")
    assert written == expected
    assert written.target.host_profile == "rtx4090-laptop.json"  # beside it: relative
    # a build host with room (not this machine, whose free disk the CI's images change:
    # under 20 GiB, DISK_LOW is an error for a CUDA build)
    server = str(HOSTS / "no-gpu-server.json")
    status, _, err = capture(["check", str(out), "--host", server])
    assert status == ExitStatus.OK, err
    rocm = tmp_path / "rocm.toml"
    status, _, _ = capture(["recipe", "new", str(rocm), "--target", str(path),
                            "--backend", "rocm"])
    assert status == ExitStatus.OK
    status, text, _ = capture(["check", str(rocm), "--host", server])
    assert status == ExitStatus.ERROR and "ROCM_FOR_NVIDIA_TARGET" in text
    status, _, err = capture(["recipe", "new", str(tmp_path / "n.toml"), "--backend", "tpu"])
    assert status == ExitStatus.USAGE and "tpu" in err


@pytest.mark.parametrize("backend", ["cuda", "cpu"])
def test_advise_for_the_target_agrees_with_the_recipe(tmp_path, backend):
    """The advice the wizard shows reads the recipe's backend; `tfwizard advise --target`
    picks the same one from the target's GPUs when none is given."""
    path = laptop_profile(tmp_path)
    status, out, _ = capture(["advise", "--target", str(path), "--json"])
    advice = json.loads(out)
    assert advice["backend"] == default_recipe(None, KB, target=HostProfile.load(path)).backend.kind
