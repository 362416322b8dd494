"""AMD detection from fake sysfs roots in tests/data/sysfs/ (see its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.detect.amd import gfx_name, override_gfx_name, probe_amd
from tfwizard.core.host import AmdInfo, HostProfile

SYSFS = Path(__file__).resolve().parents[2] / "data" / "sysfs"


def _runner(root: Path, *, rocminfo: bool = True):
    """A runner whose `rocminfo` prints root/rocminfo.out; every other program is missing."""
    calls: list[list[str]] = []

    def run(argv, timeout):
        calls.append(list(argv))
        out = root / "rocminfo.out"
        if rocminfo and argv[0] == "rocminfo" and out.exists():
            return 0, out.read_text(), ""
        return 127, "", f"{argv[0]}: not found"

    run.calls = calls  # type: ignore[attr-defined]
    return run


def _probe(name: str, env=None, **kw) -> AmdInfo:
    root = SYSFS / name
    info = probe_amd(env=env or {}, run=_runner(root, **kw), root=root)
    profile = HostProfile(amd=info)
    assert HostProfile.from_json(profile.to_json()) == profile
    return info


@pytest.mark.parametrize(
    ("version", "name"),
    [
        (90010, "gfx90a"),
        (90012, "gfx90c"),
        (90400, "gfx940"),
        (90402, "gfx942"),
        (110000, "gfx1100"),
        (100302, "gfx1032"),
        (120001, "gfx1201"),
    ],
)
def test_gfx_name(version: int, name: str) -> None:
    assert gfx_name(version) == name


def test_override_gfx_name() -> None:
    assert override_gfx_name("10.3.0") == "gfx1030"
    assert override_gfx_name("11.0.0") == "gfx1100"
    assert override_gfx_name("9.0.10") == "gfx90a"
    assert override_gfx_name("gfx1030") is None


def test_mi210() -> None:
    info = _probe("mi210")
    assert (info.status, info.source, info.rocm_version) == ("ok", "sysfs", "6.2.0")
    [gpu] = info.gpus  # node 0, the CPU, is skipped
    assert (gpu.node, gpu.gfx_target, gpu.gfx_target_version) == (1, "gfx90a", 90010)
    assert (gpu.device_id, gpu.name) == (29711, "AMD Instinct MI210")


def test_rx7900_without_rocminfo_takes_newest_versioned_rocm() -> None:
    info = _probe("rx7900")
    [gpu] = info.gpus
    assert (gpu.gfx_target, gpu.name) == ("gfx1100", None)
    assert info.rocm_version == "6.3.1"
    assert HostProfile(amd=info).amd_targets() == ["gfx1100"]


def test_hsa_override_keeps_the_physical_target() -> None:
    info = _probe("rx6600-override", env={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    [gpu] = info.gpus
    assert gpu.gfx_target == "gfx1032"  # sysfs: physical; rocminfo says gfx1030
    assert gpu.name == "AMD Radeon RX 6600"
    assert info.hsa_override_gfx_version == "10.3.0"
    assert "gfx1030" in info.message and "spoofed" in info.message and "gfx1032" in info.message


def test_cpu_only_kfd_and_no_kfd(tmp_path: Path) -> None:
    assert _probe("cpu-only").status == "none"
    info = probe_amd(env={}, run=_runner(tmp_path), root=tmp_path)
    assert (info.status, info.gpus) == ("none", [])
    assert "no AMD GPU detected" in info.message


def test_rocminfo_is_not_run_without_a_gpu(tmp_path: Path) -> None:
    run = _runner(SYSFS / "cpu-only")
    probe_amd(env={}, run=run, root=SYSFS / "cpu-only")
    assert run.calls == []  # type: ignore[attr-defined]


def test_unreadable_properties_is_an_error_not_a_crash(tmp_path: Path) -> None:
    node = tmp_path / "sys/class/kfd/kfd/topology/nodes/1"
    node.mkdir(parents=True)
    (node / "properties").mkdir()  # a folder where a file should be: reading fails
    info = probe_amd(env={}, run=_runner(tmp_path), root=tmp_path)
    assert info.status in {"none", "error"}
