"""CPU, OS and resources detection from fake roots and samples in tests/data/cpuinfo/."""

from __future__ import annotations

import shutil
from pathlib import Path

from tfwizard.core.detect.cpu import probe_cpu
from tfwizard.core.detect.osinfo import probe_os
from tfwizard.core.detect.resources import probe_resources

CPUINFO = Path(__file__).resolve().parents[2] / "data" / "cpuinfo"


def _root_with_cpuinfo(tmp_path: Path, sample: str) -> Path:
    (tmp_path / "proc").mkdir(parents=True, exist_ok=True)
    shutil.copy(CPUINFO / sample, tmp_path / "proc" / "cpuinfo")
    return tmp_path


def test_x86_64_avx512(tmp_path: Path) -> None:
    cpu = probe_cpu(root=_root_with_cpuinfo(tmp_path, "x86_64-xeon-avx512.txt"), machine="x86_64")
    assert cpu.arch == "x86_64" and cpu.cores == 2
    assert cpu.model == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    for feature in ("avx", "avx2", "fma", "f16c", "sse4_2", "avx512f", "avx512_vnni"):
        assert feature in cpu.features
    assert "sve" not in cpu.features and "pni" not in cpu.features  # only the ones that matter


def test_aarch64_neoverse_v1(tmp_path: Path) -> None:
    root = _root_with_cpuinfo(tmp_path, "aarch64-neoverse-v1.txt")
    cpu = probe_cpu(root=root, machine="arm64")
    assert (cpu.arch, cpu.cores, cpu.model) == ("aarch64", 4, "ARM Neoverse-V1")
    assert {"asimd", "sve", "bf16", "i8mm"} <= set(cpu.features)
    assert "sve2" not in cpu.features and "avx" not in cpu.features


def test_missing_cpuinfo(tmp_path: Path) -> None:
    cpu = probe_cpu(root=tmp_path, machine="x86_64")
    assert (cpu.cores, cpu.model, cpu.features) == (1, None, [])


def _write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_os_release_kernel_and_glibc(tmp_path: Path) -> None:
    _write(tmp_path, "etc/os-release", 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="22.04"\n')
    _write(tmp_path, "proc/sys/kernel/osrelease", "6.5.0-35-generic\n")
    info = probe_os(env={}, root=tmp_path, system="Linux", glibc="2.35")
    assert (info.system, info.distro, info.distro_version) == ("linux", "ubuntu", "22.04")
    assert (info.kernel, info.glibc, info.wsl2, info.wsl_libcuda_path) == (
        "6.5.0-35-generic",
        "2.35",
        False,
        None,
    )


def test_wsl2_from_kernel_with_libcuda(tmp_path: Path) -> None:
    _write(tmp_path, "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n")
    _write(tmp_path, "usr/lib/wsl/lib/libcuda.so.1.1")
    _write(tmp_path, "usr/lib/wsl/lib/libcuda.so.1")
    _write(tmp_path, "usr/lib/wsl/lib/libcuda.so")
    info = probe_os(env={}, root=tmp_path, glibc="2.39")
    assert info.wsl2 is True
    assert info.wsl_libcuda_path == "/usr/lib/wsl/lib/libcuda.so.1"  # the machine's path


def test_wsl2_from_env_only(tmp_path: Path) -> None:
    info = probe_os(env={"WSL_DISTRO_NAME": "Ubuntu"}, root=tmp_path, glibc="2.39")
    assert info.wsl2 is True and info.wsl_libcuda_path is None


def test_resources_from_meminfo_and_disk(tmp_path: Path) -> None:
    _write(tmp_path, "proc/meminfo", "MemTotal:       16314816 kB\nMemAvailable:    9000000 kB\n")
    missing_child = tmp_path / "not" / "yet" / "created"
    res = probe_resources(root=tmp_path, disk_path=missing_child, cpu_count=8)
    assert res.ram_total_bytes == 16314816 * 1024
    assert res.ram_available_bytes == 9000000 * 1024
    assert res.cpu_count == 8
    assert res.disk_path == str(tmp_path)  # the nearest existing parent
    assert res.disk_free_bytes and res.disk_free_bytes > 0
