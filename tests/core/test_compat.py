"""compat.py, the one driver/CUDA policy: each decision pinned once, and the rules, advise
and the runtime diagnosis taking the same decision for the same machine, WSL2 included.

The WSL2 machine is tests/data/hosts/wsl2-rtx4090.json (NVML reports the Windows driver,
560.94, supporting CUDA 12.6). The variants below keep its Windows driver number and lower
the CUDA it supports: not a pairing NVIDIA ships, but exactly the case where the number
says "new enough" against the Linux table while the driver cannot run the toolkit. Before
compat.py the rules compared the number and advise the CUDA version, and they disagreed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tfwizard.core import compat
from tfwizard.core.advise import Intent, advise
from tfwizard.core.diagnosis.runtime import cuda_and_driver
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import load_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")  # TF 2.18, CUDA 12.5.1


def host(name: str) -> HostProfile:
    return HostProfile.load(HOSTS / f"{name}.json")


def with_driver(machine: HostProfile, driver: str | None, cuda: str | None) -> HostProfile:
    nv = dataclasses.replace(machine.nvidia, driver_version=driver, cuda_driver_version=cuda)
    return dataclasses.replace(machine, nvidia=nv)


def wsl2(cuda: str) -> HostProfile:
    machine = host("wsl2-rtx4090")
    assert machine.os.wsl2 and machine.nvidia.driver_version == "560.94"
    return with_driver(machine, "560.94", cuda)


def codes(findings, severity=None):
    return [f.code for f in findings if severity is None or f.severity == severity]


# -- version helpers ------------------------------------------------------------------------


def test_version_helpers():
    assert compat.as_version("12.5.1") is not None and compat.as_version("x.y") is None
    assert compat.as_version("") is None and compat.as_version(None) is None
    assert compat.major_minor("12") == (12, 0) and compat.major_minor("12.5.1") == (12, 5)
    assert compat.major_minor("n/a") is None
    assert compat.xy("3.11.4") == "3.11" and compat.xy("3") is None
    assert compat.version_number("12.4.1") == 120401.0 and compat.version_number("?") == 0.0
    # packaging's order, not the text's: 12.10 is newer than 12.9
    assert compat.cuda_support("12.10", "12.9") == "native"


# -- toolkit -> driver ----------------------------------------------------------------------


def test_driver_for_toolkit(kb):
    # exact row (NVIDIA's Table 3), the first row of a minor for x.y, a lower bound above
    # the newest row of a major, and nothing for an unknown major or a non-version
    assert compat.driver_for_toolkit(kb, "12.5.1") == "555.42.06"
    assert compat.driver_for_toolkit(kb, "12.5") == "555.42.02"
    assert compat.driver_for_toolkit(kb, "13.5.0") == compat.driver_for_toolkit(kb, "13.3.1")
    assert compat.driver_for_toolkit(kb, "99.0") is None
    assert compat.driver_for_toolkit(kb, "latest") is None


def test_driver_floor_per_os(kb):
    assert compat.driver_floor(kb, "12.8") == "525.60.13"
    assert compat.driver_floor(kb, "12.8", "windows") == "528.33"
    # CUDA 13 has no Windows floor in the table: the Linux one stands
    assert compat.driver_floor(kb, "13.0", "windows") == "580.65.06"
    assert compat.driver_floor(kb, "10.2") is None


# -- does a driver meet a need --------------------------------------------------------------


def test_driver_meets_compares_numbers_on_linux():
    linux = host("rtx4090-driver550-py311")
    have = linux.nvidia.driver_version
    assert compat.driver_meets(linux, have, "12.4") is True
    assert compat.driver_meets(linux, "999.0", "12.0") is False
    assert compat.driver_meets(linux, None, "12.0") is None  # no need known
    assert compat.driver_meets(with_driver(linux, None, None), "525.60.13", "12.0") is None


def test_driver_meets_compares_cuda_versions_on_wsl2():
    # the Windows number 560.94 is above any 12.x Linux need; the CUDA it supports decides
    assert compat.driver_meets(wsl2("12.6"), "555.42.06", "12.5") is True
    assert compat.driver_meets(wsl2("12.4"), "555.42.06", "12.5") is False
    assert compat.driver_meets(wsl2("12.4"), "999.0", "12.4") is True
    assert compat.driver_meets(wsl2(None), "525.60.13", "12.0") is None
    assert compat.needed_text(wsl2("12.4"), "555.42.06", "12.5") == \
        "a driver that supports CUDA 12.5"
    assert compat.needed_text(host("rtx4090-driver550-py311"), "555.42.06", "12.5") == "555.42.06"


def test_runs_major_and_runs_jit(kb):
    old = host("rtx3060-driver470")  # 470.256.02, CUDA 11.4
    assert compat.runs_major(kb, old, "11.8") is True  # CUDA 11 floor 450.80.02
    assert compat.runs_major(kb, old, "12.5.1") is False  # CUDA 12 floor 525.60.13
    assert compat.runs_jit(kb, old, "11.8") is False  # 11.8 shipped 520.61.05
    assert compat.runs_major(kb, old, "10.2") is None  # no floor known
    assert compat.runs_major(kb, wsl2("11.8"), "12.0") is False
    assert compat.runs_jit(kb, wsl2("12.6"), "12.6.3") is True


@pytest.mark.parametrize(("driver", "cuda", "support"), [
    ("12.6", "12.4.1", "native"), ("12.6", "12.6", "native"), ("12.4", "12.8", "minor"),
    ("12.8", "13.0", "major"), (None, "12.4", None), ("12.4", "", None)])
def test_cuda_support(driver, cuda, support):
    assert compat.cuda_support(driver, cuda) == support


# -- the callers agree on WSL2 --------------------------------------------------------------


def test_rules_and_advise_agree_on_a_wsl2_driver_too_old_for_the_cuda_major(kb):
    """The Windows number (560.94) passes CUDA 12's Linux floor (525.60.13); the driver
    supports CUDA 11.8 only, so neither CUDA 12.5.1 build nor the 2.18 wheel runs."""
    target = wsl2("11.8")
    found = evaluate(LAPTOP, host("no-gpu-server"), target)
    (too_old,) = [f for f in found if f.code == "DRIVER_TOO_OLD"]
    assert "WSL2 uses the Windows driver, 560.94" in too_old.message
    assert "supports CUDA up to 11.8" in too_old.message
    assert too_old.fix is not None and too_old.fix.changes["cuda.version"].startswith("11.")
    advice = advise(kb, host=target, release="2.18.0", intent=Intent.GPU)
    assert "DRIVER_TOO_OLD" in advice.codes("error")
    # the real profile (CUDA 12.6) runs both
    real = host("wsl2-rtx4090")
    assert "DRIVER_TOO_OLD" not in codes(evaluate(LAPTOP, host("no-gpu-server"), real))
    assert "DRIVER_TOO_OLD" not in advise(kb, host=real, release="2.18.0",
                                          intent=Intent.GPU).codes()


def test_rules_judge_ptx_jit_on_wsl2_by_the_cuda_version(kb):
    """PTX for 7.5 only (compute_75: SASS sm_75 and PTX), so the RTX 4090 (CC 8.9)
    JIT-compiles CUDA 12.5.1's PTX: the driver must support CUDA 12.5. 560.94 is above
    12.5.1's Linux driver (555.42.06), but a driver of CUDA 12.4 cannot."""
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["compute_75"]})
    found = evaluate(recipe, host("no-gpu-server"), wsl2("12.4"))
    (ptx,) = [f for f in found if f.code == "PTX_DRIVER"]
    assert "CUDA 12.5" in ptx.message and "560.94 (CUDA 12.4)" in ptx.message
    assert "PTX_DRIVER" not in codes(evaluate(recipe, host("no-gpu-server"), wsl2("12.6")))


def test_runtime_diagnosis_and_verify_use_the_same_support(kb):
    probe = {"build_info": {"cuda_version": "12.5.1"}}
    assert cuda_and_driver(probe, wsl2("12.6")) == ("12.5", "12.6", "native")
    assert cuda_and_driver(probe, wsl2("12.4")) == ("12.5", "12.4", "minor")
    assert cuda_and_driver(probe, wsl2("11.8")) == ("12.5", "11.8", "major")
    assert cuda_and_driver({"build_info": {}}, wsl2("12.6")) is None
