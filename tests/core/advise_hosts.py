"""Host fakes for tests/core/test_advise.py, made by the real probes from fake inputs.

Each entry of MACHINES names a machine the advice tests need and CI does not have: a fake
NVML (tests/core/fake_nvml.py), the /proc/cpuinfo, /proc/meminfo and os-release it would
have, its glibc and the Python running `tfwizard detect`. `detect(name, folder)` runs
`detect_host()` on them, so the profile is what `tfwizard detect --json` would print there.

`python -m tests.core.advise_hosts` writes them to tests/data/hosts/<name>.json, with the
fields that change from run to run (time, version, free disk) set to fixed values. The CPU
flag lists are written from the CPUs' published feature lists, not captured.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pynvml

from tests.core.detect.test_detect_host import _Docker  # a Docker engine with the nvidia runtime
from tests.core.fake_nvml import FakeGpu, FakeNvml
from tfwizard.core.detect import detect_host
from tfwizard.core.host import HostProfile, PythonInterpreter

HOSTS = Path(__file__).resolve().parent.parent / "data" / "hosts"

#: /proc/cpuinfo flags (the kernel's names)
_BASE = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx "
         "fxsr sse sse2 ht syscall nx rdtscp lm constant_tsc rep_good nopl cpuid pni pclmulqdq "
         "ssse3 cx16 sse4_1 sse4_2 movbe popcnt aes")
_AVX2 = _BASE + " xsave avx f16c rdrand lahf_lm abm fma bmi1 avx2 smep bmi2 erms"
_AVX512 = _AVX2 + (" avx512f avx512dq avx512ifma avx512cd avx512bw avx512vl avx512vbmi "
                   "avx512_vbmi2 avx512_vnni avx512_bitalg avx512_bf16 avx512_vpopcntdq")
#: Silvermont (Atom/Celeron J1900): SSE4.2, no AVX
_SILVERMONT = ("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush "
               "dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx rdtscp lm constant_tsc "
               "arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni "
               "pclmulqdq dtes64 monitor ds_cpl vmx est tm2 ssse3 cx16 xtpr pdcm sse4_1 sse4_2 "
               "movbe popcnt tsc_deadline_timer rdrand lahf_lm 3dnowprefetch epb pti "
               "tpr_shadow vnmi flexpriority ept vpid tsc_adjust smep erms dtherm ida arat")


@dataclass(frozen=True)
class Machine:
    """What detection would read on one machine."""

    what: str
    cpu_model: str
    flags: str
    cpus: int
    ram_gib: int
    os_id: str
    os_version: str
    kernel: str
    glibc: str
    python: PythonInterpreter
    gpus: tuple[FakeGpu, ...] = ()
    driver: str = ""
    cuda: int = 0
    extra: dict[str, str] = field(default_factory=dict)

    def nvml(self) -> FakeNvml:
        if not self.gpus:
            return FakeNvml(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
        return FakeNvml(gpus=list(self.gpus), driver=self.driver, cuda=self.cuda)


def _py(path: str, version: str) -> PythonInterpreter:
    return PythonInterpreter(path=path, version=version, is_venv=False, is_current=True)


MACHINES: dict[str, Machine] = {
    "rtx4090-driver550-py311": Machine(
        what="Ubuntu 22.04 desktop, GeForce RTX 4090 (CC 8.9), driver 550.54.14 / CUDA 12.4, "
             "Python 3.11",
        cpu_model="AMD Ryzen 9 7950X 16-Core Processor", flags=_AVX512, cpus=32, ram_gib=64,
        os_id="ubuntu", os_version="22.04", kernel="6.5.0-41-generic", glibc="2.35",
        python=_py("/usr/bin/python3.11", "3.11.9"),
        gpus=(FakeGpu(name="NVIDIA GeForce RTX 4090", cc=(8, 9),
                      uuid="GPU-4090fake-0000-0000-0000-000000004090", memory_total_mib=24564,
                      architecture=pynvml.NVML_DEVICE_ARCH_ADA),),
        driver="550.54.14", cuda=12040),
    "rtx5090-driver570-py312": Machine(
        what="Ubuntu 24.04 desktop, GeForce RTX 5090 (CC 12.0), driver 570.133.07 / CUDA 12.8, "
             "Python 3.12",
        cpu_model="AMD Ryzen 9 9950X 16-Core Processor", flags=_AVX512, cpus=32, ram_gib=96,
        os_id="ubuntu", os_version="24.04", kernel="6.11.0-19-generic", glibc="2.39",
        python=_py("/usr/bin/python3", "3.12.3"),
        gpus=(FakeGpu(name="NVIDIA GeForce RTX 5090", cc=(12, 0),
                      uuid="GPU-5090fake-0000-0000-0000-000000005090", memory_total_mib=32607,
                      architecture=pynvml.NVML_DEVICE_ARCH_BLACKWELL),),
        driver="570.133.07", cuda=12080),
    "celeron-j1900-no-avx": Machine(
        what="Ubuntu 22.04 mini PC, Celeron J1900 (Silvermont: SSE4.2, no AVX), no GPU",
        cpu_model="Intel(R) Celeron(R) CPU  J1900  @ 1.99GHz", flags=_SILVERMONT, cpus=4,
        ram_gib=8, os_id="ubuntu", os_version="22.04", kernel="5.15.0-119-generic",
        glibc="2.35", python=_py("/usr/bin/python3", "3.10.12")),
    "centos7-glibc217": Machine(
        what="CentOS 7 server (glibc 2.17), Xeon E5-2680 v4, no GPU, Python 3.10 built locally",
        cpu_model="Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz", flags=_AVX2, cpus=28,
        ram_gib=128, os_id="centos", os_version="7", kernel="3.10.0-1160.el7.x86_64",
        glibc="2.17", python=_py("/opt/python3.10/bin/python3.10", "3.10.14")),
    "debian13-py313": Machine(
        what="Debian 13 workstation, Python 3.13 (the distribution's), no GPU",
        cpu_model="Intel(R) Core(TM) i7-12700 CPU", flags=_AVX2, cpus=20, ram_gib=32,
        os_id="debian", os_version="13", kernel="6.12.43+deb13-amd64", glibc="2.41",
        python=_py("/usr/bin/python3", "3.13.5")),
    "rtx3060-driver470": Machine(
        what="Ubuntu 20.04 desktop, GeForce RTX 3060 (CC 8.6), driver 470.256.02 / CUDA 11.4 "
             "(older than CUDA 12's floor), Python 3.10",
        cpu_model="Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz", flags=_AVX2, cpus=16, ram_gib=32,
        os_id="ubuntu", os_version="20.04", kernel="5.15.0-113-generic", glibc="2.31",
        python=_py("/usr/bin/python3.10", "3.10.14"),
        gpus=(FakeGpu(name="NVIDIA GeForce RTX 3060", cc=(8, 6),
                      uuid="GPU-3060fake-0000-0000-0000-000000003060", memory_total_mib=12288,
                      architecture=pynvml.NVML_DEVICE_ARCH_AMPERE),),
        driver="470.256.02", cuda=11040),
}


def _root(machine: Machine, folder: Path) -> Path:
    root = folder / "root"
    (root / "proc/sys/kernel").mkdir(parents=True, exist_ok=True)
    (root / "etc").mkdir(exist_ok=True)
    block = ("processor\t: {n}\nvendor_id\t: {vendor}\nmodel name\t: {model}\n"
             "flags\t\t: {flags}\n")
    vendor = "AuthenticAMD" if "AMD" in machine.cpu_model else "GenuineIntel"
    (root / "proc/cpuinfo").write_text("\n".join(
        block.format(n=n, vendor=vendor, model=machine.cpu_model, flags=machine.flags)
        for n in range(machine.cpus)))
    kib = machine.ram_gib * 1024 * 1024
    (root / "proc/meminfo").write_text(f"MemTotal: {kib} kB\nMemAvailable: {kib * 9 // 10} kB\n")
    (root / "proc/sys/kernel/osrelease").write_text(machine.kernel + "\n")
    (root / "etc/os-release").write_text(
        f'ID={machine.os_id}\nVERSION_ID="{machine.os_version}"\n')
    return root


def detect(name: str, folder: Path) -> HostProfile:
    """What `tfwizard detect --json` reports on the named machine (fresh, volatile fields too)."""
    machine = MACHINES[name]
    # the interpreter running detection is the machine's Python, not this test's
    with mock.patch("tfwizard.core.detect.pythons.current_python",
                    return_value=machine.python):
        return detect_host(env={"PATH": str(folder / "empty")}, nvml=machine.nvml(),
                           root=_root(machine, folder), docker_client_factory=_Docker(),
                           disk_path=folder, machine="x86_64", glibc=machine.glibc)


def stable(profile: HostProfile) -> HostProfile:
    """The profile with the fields that differ between runs set to fixed values."""
    profile.created = "2026-01-15T12:00:00+00:00"
    profile.tfwizard_version = "0.1.0"
    profile.resources.disk_path = "/home/user/.local/share"
    profile.resources.disk_free_bytes = 400 * 2**30
    return profile


def write_all() -> list[Path]:
    written = []
    for name in MACHINES:
        with tempfile.TemporaryDirectory() as tmp:
            profile = stable(detect(name, Path(tmp)))
        path = HOSTS / f"{name}.json"
        path.write_text(profile.to_json() + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written in write_all():
        print(written.relative_to(HOSTS.parent.parent.parent), file=sys.stderr)
