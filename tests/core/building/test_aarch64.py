"""aarch64 hosts and targets: detection from cpuinfo samples, the build image and wheel name
the plan picks, the --config decision, SVE, and wheel platform tags at install time."""

from __future__ import annotations

import dataclasses
import platform
import shutil
import sys
from pathlib import Path

import pytest
from packaging import tags as ptags

from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.detect import detect_host, render_host_report
from tfwizard.core.errors import WheelIncompatible
from tfwizard.core.host import HostProfile
from tfwizard.core.install.job import InterpreterTags, check_wheel
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import load_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
KB = load_knowledge()
ARM = KB.platforms["aarch64"]
PY = f"cp{sys.version_info.major}{sys.version_info.minor}"


def host(name: str) -> HostProfile:
    return HostProfile.load(DATA / "hosts" / f"{name}.json")


def cpu_recipe(**changes):
    """tf221-cpu-portable.toml (build.image empty), with changes."""
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
    return recipe.with_changes(changes) if changes else recipe


class _NoDocker:
    def __call__(self):
        raise FileNotFoundError(2, "No such file or directory")


def _detect(tmp_path: Path, sample: str) -> HostProfile:
    root = tmp_path / "root"
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "etc").mkdir()
    shutil.copy(DATA / "cpuinfo" / sample, root / "proc/cpuinfo")
    (root / "proc/meminfo").write_text("MemTotal: 16384000 kB\nMemAvailable: 15000000 kB\n")
    (root / "proc/sys/kernel/osrelease").write_text("6.8.0-1015-aws\n")
    (root / "etc/os-release").write_text('ID=ubuntu\nVERSION_ID="24.04"\n')
    return detect_host(env={"PATH": str(tmp_path / "empty")}, root=root,
                       run=lambda argv, timeout: (127, "", "not found"),
                       docker_client_factory=_NoDocker(), disk_path=tmp_path,
                       machine="aarch64", glibc="2.39")


# -- detection ---------------------------------------------------------------------------------


def test_detect_graviton2_neoverse_n1_without_sve(tmp_path):
    profile = _detect(tmp_path, "aarch64-neoverse-n1.txt")
    cpu = profile.cpu
    assert (cpu.arch, cpu.model, cpu.cores) == ("aarch64", "ARM Neoverse-N1", 2)
    assert cpu.features == ["asimd", "asimdhp", "asimddp", "fphp"]
    assert profile.resources.cpu_count == 2
    report = render_host_report(profile)
    assert "aarch64" in report and "ARM Neoverse-N1" in report
    assert HostProfile.from_json(profile.to_json()) == profile


def test_detect_graviton3_neoverse_v1_with_sve(tmp_path):
    cpu = _detect(tmp_path, "aarch64-neoverse-v1.txt").cpu
    assert (cpu.arch, cpu.model) == ("aarch64", "ARM Neoverse-V1")
    assert {"sve", "bf16", "i8mm"} <= set(cpu.features)


# -- plan --------------------------------------------------------------------------------------


def test_plan_on_an_aarch64_host_uses_tfs_arm64_image_and_names_the_wheel_tensorflow():
    plan = make_plan(cpu_recipe(), build_host=host("aarch64-server"), uid=1000, gid=1000)
    assert plan.image == ARM["image"] and "arm64" in plan.image
    assert "--repo_env=WHEEL_NAME=tensorflow" in plan.flag_list  # as TF's linux_arm64 CI env
    assert plan.wheel_name == "tensorflow"
    # the decision: --config=release_arm64_linux is documented in a note, not added
    assert not any("release_arm64_linux" in f for f in plan.flag_list)
    assert any("--config=release_arm64_linux" in n and "UNVERIFIED" in n for n in plan.notes)
    assert any("arm64 CI image" in n for n in plan.notes)
    assert "--config=opt" in plan.flag_list


def test_plan_for_an_aarch64_target_without_a_build_host_profile():
    plan = make_plan(cpu_recipe(), target_host=host("aarch64-server"), uid=1000, gid=1000)
    assert plan.image == ARM["image"]


def test_plan_on_x86_64_is_unchanged():
    x86 = make_plan(cpu_recipe(), build_host=host("no-gpu-server"), uid=1000, gid=1000)
    release = KB.release("2.21.0")
    assert release is not None
    assert x86.image == release.image_for(x86.python) and "arm64" not in x86.image
    assert "--repo_env=WHEEL_NAME=tensorflow_cpu" in x86.flag_list
    assert not any("aarch64" in n for n in x86.notes)


def test_a_recipes_own_image_wins_and_the_config_note_stays():
    plan = make_plan(cpu_recipe(**{"build.image": "registry.example/arm-builder:1"}),
                     build_host=host("aarch64-server"), uid=1000, gid=1000)
    assert plan.image == "registry.example/arm-builder:1"
    assert any("release_arm64_linux" in n for n in plan.notes)
    assert not any("arm64 CI image" in n for n in plan.notes)


def test_releases_before_googles_aarch64_wheels_are_marked_unverified():
    old = cpu_recipe(**{"tensorflow.version": "2.15.1", "python.version": "3.11"})
    plan = make_plan(old, build_host=host("aarch64-server"), uid=1000, gid=1000)
    assert any("built by AWS" in n and "UNVERIFIED" in n for n in plan.notes)
    new = make_plan(cpu_recipe(), build_host=host("aarch64-server"), uid=1000, gid=1000)
    assert not any("built by AWS" in n for n in new.notes)


# -- rules -------------------------------------------------------------------------------------


def _codes(findings, severity=None):
    return {f.code: f.severity for f in findings if severity in (None, f.severity)}


def test_rules_on_aarch64_hosts_empty_image_sve_and_cuda():
    server = host("aarch64-server")
    found = _codes(evaluate(cpu_recipe(), server, None))
    assert found.get("AARCH64_IMAGE") == "info"  # the plan picks the image itself
    assert found.get("AARCH64_SVE") == "info"  # Neoverse V1 has SVE
    assert "error" not in found.values()
    n1 = dataclasses.replace(server, cpu=dataclasses.replace(
        server.cpu, model="ARM Neoverse-N1", features=["asimd", "asimdhp", "asimddp", "fphp"]))
    assert "AARCH64_SVE" not in _codes(evaluate(cpu_recipe(), n1, None))
    x86_image = cpu_recipe(**{"build.image": "tensorflow/build:2.21-python3.11"})
    assert _codes(evaluate(x86_image, server, None)).get("AARCH64_IMAGE") == "warning"
    cuda = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
    assert "AARCH64_CUDA" in _codes(evaluate(cuda, server, None), "warning")


def test_check_cli_on_the_aarch64_example_recipe():
    status, out, err = capture(["check", str(ROOT / "recipes" / "tf221-aarch64-cpu.toml"),
                                "--host", str(DATA / "hosts" / "aarch64-server.json"), "-v"])
    assert status == 0, out + err
    assert "AARCH64_SVE" in out


# -- wheel tags --------------------------------------------------------------------------------

ARM_WHEEL = f"tensorflow-2.21.0-{PY}-{PY}-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
ARM_LINUX_WHEEL = f"tensorflow-2.21.0-{PY}-{PY}-linux_aarch64.whl"


def _tags_for(machine: str, platforms: list[str]) -> InterpreterTags:
    tags = [str(t) for t in ptags.cpython_tags(platforms=platforms)]
    tags += [str(t) for t in ptags.compatible_tags(platforms=platforms)]
    return InterpreterTags("/fake/python", platform.python_version(), "CPython", "linux",
                           machine, tuple(tags))


@pytest.mark.parametrize("name", [ARM_WHEEL, ARM_LINUX_WHEEL])
def test_an_aarch64_wheel_is_refused_on_x86_64(name):
    x86 = _tags_for("x86_64", ["manylinux_2_36_x86_64", "manylinux_2_17_x86_64",
                               "manylinux2014_x86_64", "linux_x86_64"])
    with pytest.raises(WheelIncompatible) as info:
        check_wheel(Path(name), x86)
    message = str(info.value)
    assert "platform tag" in message and "aarch64" in message and "x86_64" in message


@pytest.mark.parametrize("name", [ARM_WHEEL, ARM_LINUX_WHEEL])
def test_an_aarch64_wheel_is_accepted_on_aarch64(name):
    arm = _tags_for("aarch64", ["manylinux_2_35_aarch64", "manylinux_2_17_aarch64",
                                "manylinux2014_aarch64", "linux_aarch64"])
    check_wheel(Path(name), arm)  # no exception
    x86_wheel = Path(f"tensorflow_cpu-2.21.0-{PY}-{PY}-manylinux_2_17_x86_64.whl")
    with pytest.raises(WheelIncompatible):
        check_wheel(x86_wheel, arm)


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() != "x86_64", reason="needs an x86_64 interpreter")
def test_install_refuses_an_aarch64_wheel_in_a_real_x86_64_venv(tmp_path):
    import venv

    from tests.core.install.test_install import make_wheel

    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(target)
    wheel = make_wheel(tmp_path / "wheels", "tinypkg",
                       tag=f"{PY}-{PY}-manylinux_2_17_aarch64.manylinux2014_aarch64")
    status, out, err = capture(["install", str(wheel), "--venv", str(target)])
    assert status == 2, out + err
    assert "platform tag manylinux2014_aarch64, manylinux_2_17_aarch64" in err
    assert "x86_64" in err
