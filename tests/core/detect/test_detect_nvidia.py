"""NVIDIA detection: NVML scenarios (fake module, real exception classes) and nvidia-smi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.fake_nvml import (
    DATA,
    SCENARIOS,
    nvidia_smi_calls,
    scenario,
    write_fake_nvidia_smi,
)
from tfwizard.core.detect import subprocess_runner
from tfwizard.core.detect.nvidia import decode_cuda_version, probe_nvidia
from tfwizard.core.host import HostProfile, NvidiaInfo


def _no_programs(argv, timeout):
    return 127, "", f"{argv[0]}: not found"


def _round_trips(info: NvidiaInfo) -> None:
    profile = HostProfile(nvidia=info)
    assert HostProfile.from_json(profile.to_json()) == profile


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_nvml_scenario_is_safe_and_round_trips(name: str) -> None:
    nvml = scenario(name)
    info = probe_nvidia(nvml=nvml, run=_no_programs)
    assert info.status in {"ok", "none", "no_library", "no_driver", "mismatch", "error"}
    assert info.message
    _round_trips(info)
    if nvml.initialised or nvml.shutdowns:  # init succeeded: shutdown always follows
        assert nvml.shutdowns == 1 and not nvml.initialised


def test_no_library() -> None:
    info = probe_nvidia(nvml=scenario("no_library"), run=_no_programs)
    assert info.status == "no_library"
    assert info.message == (
        "no NVIDIA GPU detected (the NVIDIA driver library libnvidia-ml.so.1 is not installed)"
    )


def test_driver_not_loaded() -> None:
    info = probe_nvidia(nvml=scenario("driver_not_loaded"), run=_no_programs)
    assert (info.status, info.source) == ("no_driver", "nvml")
    assert "kernel driver is not loaded" in info.message


def test_version_mismatch_advises_reboot_or_one_driver() -> None:
    info = probe_nvidia(nvml=scenario("version_mismatch"), run=_no_programs)
    assert info.status == "mismatch"
    assert "Reboot" in info.message and "reinstall one driver version" in info.message
    assert "kernel module" in info.message and "different driver builds" in info.message


def test_one_gpu() -> None:
    info = probe_nvidia(nvml=scenario("one_gpu"), run=_no_programs)
    assert (info.status, info.source) == ("ok", "nvml")
    assert (info.driver_version, info.cuda_driver_version) == ("550.54.14", "12.4")
    [gpu] = info.gpus
    assert gpu.name == "NVIDIA GeForce RTX 3060 Laptop GPU"
    assert (gpu.compute_capability, gpu.cc_derived) == ("8.6", False)
    assert gpu.memory_total_mib == 6144
    assert gpu.pci_bus_id == "00000000:01:00.0"
    assert gpu.uuid == "GPU-5f1c2d7e-8a4b-4c6e-9d3f-1a2b3c4d5e6f"
    assert gpu.architecture == "Ampere"
    assert gpu.mig_enabled is None  # NotSupported on a GeForce
    assert gpu.error is None


def test_two_mixed_gpus_unsupported_field_is_none() -> None:
    info = probe_nvidia(nvml=scenario("two_mixed_gpus"), run=_no_programs)
    assert info.status == "ok"
    ada, pascal = info.gpus
    assert (ada.compute_capability, ada.architecture) == ("8.9", "Ada Lovelace")
    assert (pascal.compute_capability, pascal.architecture) == ("6.1", "Pascal")
    assert pascal.pci_bus_id is None and pascal.error is None
    assert HostProfile(nvidia=info).nvidia_ccs() == ["8.9", "6.1"]


def test_old_driver_falls_back_to_v1_cuda_call_and_name_table() -> None:
    nvml = scenario("old_driver")
    info = probe_nvidia(nvml=nvml, run=_no_programs)
    assert "nvmlSystemGetCudaDriverVersion" in nvml.calls
    assert (info.driver_version, info.cuda_driver_version) == ("418.226.00", "10.1")
    [gpu] = info.gpus
    assert (gpu.compute_capability, gpu.cc_derived) == ("3.7", True)
    assert gpu.architecture is None and gpu.mig_enabled is None
    assert "from the name table" in info.message


def test_unknown_name_without_cc_stays_unknown() -> None:
    nvml = scenario("old_driver")
    nvml.gpus[0].name = "NVIDIA Mystery GPU"
    [gpu] = probe_nvidia(nvml=nvml, run=_no_programs).gpus
    assert (gpu.compute_capability, gpu.cc_derived) == (None, False)


def test_gpu_is_lost_gives_explicit_invalid_entries() -> None:
    nvml = scenario("gpu_is_lost")
    info = probe_nvidia(nvml=nvml, run=_no_programs)
    assert info.status == "ok"  # GPU 0 still works
    good, no_handle, lost_midway = info.gpus
    assert good.error is None and good.compute_capability == "8.0"
    assert (no_handle.index, no_handle.error, no_handle.name) == (1, "GPU is lost", None)
    assert lost_midway.error == "GPU is lost"
    assert HostProfile(nvidia=info).nvidia_ccs() == ["8.0"]
    assert "GPU 1 is unusable" in info.message and "GPU 2 is unusable" in info.message
    assert nvml.shutdowns == 1


def test_only_lost_gpus_is_an_error() -> None:
    nvml = scenario("gpu_is_lost")
    nvml.gpus = nvml.gpus[1:]
    info = probe_nvidia(nvml=nvml, run=_no_programs)
    assert info.status == "error" and "no GPU is usable" in info.message


def test_mig_enabled() -> None:
    info = probe_nvidia(nvml=scenario("mig_enabled"), run=_no_programs)
    [gpu] = info.gpus
    assert (gpu.mig_enabled, gpu.architecture, gpu.compute_capability) == (True, "Hopper", "9.0")
    assert info.cuda_driver_version == "12.6"


def test_no_gpus_and_count_failure() -> None:
    assert probe_nvidia(nvml=scenario("no_gpus"), run=_no_programs).status == "none"
    nvml = scenario("count_fails")
    info = probe_nvidia(nvml=nvml, run=_no_programs)
    assert info.status == "error" and "count" in info.message
    assert nvml.shutdowns == 1


def test_nvml_module_that_raises_anything_never_escapes() -> None:
    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError(f"boom in {name}")

    info = probe_nvidia(nvml=Hostile(), run=_no_programs)
    assert info.status == "error"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(12040, "12.4"), (13000, "13.0"), (11080, "11.8"), (10010, "10.1"), (0, None), (None, None)],
)
def test_decode_cuda_version(value, expected) -> None:
    assert decode_cuda_version(value) == expected


# -- nvidia-smi fallback, through real fake executables on PATH ----------------------------


def _smi(tmp_path: Path, name: str) -> tuple[NvidiaInfo, list[str]]:
    folder = tmp_path / "bin"
    write_fake_nvidia_smi(folder, name)
    run = subprocess_runner({"PATH": str(folder)})
    info = probe_nvidia(nvml=scenario("no_library"), run=run)
    _round_trips(info)
    return info, nvidia_smi_calls(folder)


def test_smi_modern_driver(tmp_path: Path) -> None:
    info, calls = _smi(tmp_path, "r550-rtx3060-laptop")
    assert (info.status, info.source) == ("ok", "nvidia-smi")
    assert (info.driver_version, info.cuda_driver_version) == ("550.54.14", "12.4")
    [gpu] = info.gpus
    assert gpu.name == "NVIDIA GeForce RTX 3060 Laptop GPU"
    assert (gpu.compute_capability, gpu.cc_derived) == ("8.6", False)
    assert (gpu.memory_total_mib, gpu.pci_bus_id) == (6144, "00000000:01:00.0")
    assert gpu.architecture == "Ampere"
    assert len(calls) == 2  # the query, then the banner for "CUDA Version"


def test_a_real_h200_reads_the_same_through_nvml_and_nvidia_smi(tmp_path: Path) -> None:
    """Both paths on one real machine's captures (driver 580, CUDA 13.0) give the same GPU,
    driver and CUDA, and the same as the host profile detected there."""
    smi, calls = _smi(tmp_path, "r580-h200-real")
    nvml = probe_nvidia(nvml=scenario("h200_driver580_real"), run=subprocess_runner({}))
    assert (smi.source, nvml.source) == ("nvidia-smi", "nvml")
    for info in (smi, nvml):
        assert (info.status, info.driver_version, info.cuda_driver_version) == (
            "ok", "580.159.04", "13.0")
        [gpu] = info.gpus
        assert (gpu.name, gpu.compute_capability, gpu.memory_total_mib, gpu.pci_bus_id,
                gpu.architecture) == ("NVIDIA H200", "9.0", 143771, "00000000:00:06.0", "Hopper")
    profile = json.loads((DATA / "hosts" / "h200-driver580-real.json").read_text())
    [kept] = profile["nvidia"]["gpus"]
    assert (kept["name"], kept["compute_capability"], kept["memory_total_mib"]) == (
        "NVIDIA H200", "9.0", 143771)
    assert len(calls) == 2  # the query, then the banner for "CUDA Version"


def test_smi_r470_rejects_compute_cap_then_retries(tmp_path: Path) -> None:
    info, calls = _smi(tmp_path, "r470-gtx1080")
    assert [("compute_cap" in c) for c in calls] == [True, False, False]
    assert calls[1].startswith("--query-gpu=index,name,uuid,memory.total")
    assert (info.status, info.driver_version, info.cuda_driver_version) == (
        "ok",
        "470.182.03",
        "11.4",
    )
    [gpu] = info.gpus
    assert (gpu.name, gpu.compute_capability, gpu.cc_derived) == (
        "NVIDIA GeForce GTX 1080",
        "6.1",
        True,
    )
    assert gpu.architecture == "Pascal"  # from the knowledge base, by CC


def test_smi_lost_gpu_line_becomes_invalid_entry(tmp_path: Path) -> None:
    info, _ = _smi(tmp_path, "r535-two-gpus-one-lost")
    assert info.status == "ok" and info.cuda_driver_version == "12.2"
    good, lost = info.gpus
    assert good.compute_capability == "8.0" and good.error is None
    assert lost.error and "GPU is lost" in lost.error


def test_smi_mismatch(tmp_path: Path) -> None:
    info, _ = _smi(tmp_path, "mismatch")
    assert (info.status, info.source) == ("mismatch", "nvidia-smi")
    assert "Reboot" in info.message


def test_smi_without_its_library_is_no_library_not_a_raw_failure(tmp_path: Path) -> None:
    """A real R580 nvidia-smi whose libnvidia-ml.so is off the loader path (captured on the
    H200 with the driver's folders hidden) exits 12 with its own words: detection says
    what is missing and how a container gets it, as NVML's no_library does."""
    info, calls = _smi(tmp_path, "r580-no-libnvidia-ml-real")
    assert (info.status, info.source, info.gpus) == ("no_library", "nvidia-smi", [])
    assert "libnvidia-ml.so.1" in info.message and "--gpus all" in info.message
    assert "exit 12" not in info.message
    assert len(calls) == 1  # the query alone: no banner from a tool that cannot start


def test_smi_driver_not_loaded(tmp_path: Path) -> None:
    info, _ = _smi(tmp_path, "no-driver")
    assert info.status == "no_driver"


def test_no_nvml_and_no_smi_on_path(tmp_path: Path) -> None:
    run = subprocess_runner({"PATH": str(tmp_path)})  # an empty folder
    info = probe_nvidia(nvml=scenario("no_library"), run=run)
    assert info.status == "no_library" and info.gpus == []


def test_runner_that_raises_is_contained() -> None:
    def explode(argv, timeout):
        raise OSError("fork failed")

    info = probe_nvidia(nvml=scenario("no_library"), run=explode)
    assert info.status == "error" and "fork failed" in info.message
