"""detect_host() end to end: composed fake machines, the real machine, reports, profiles."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.fake_nvml import SCENARIOS, scenario, write_fake_nvidia_smi
from tfwizard.core.detect import detect_host, render_host_report, subprocess_runner
from tfwizard.core.detect.process import RC_NOT_FOUND, RC_TIMEOUT
from tfwizard.core.host import HostProfile

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"


class _NoDocker:
    """A docker client factory for a machine whose daemon is stopped."""

    def __call__(self):
        raise FileNotFoundError(2, "No such file or directory")


class _Docker:
    def __call__(self):
        return self

    def version(self):
        return {"Version": "27.3.1", "ApiVersion": "1.47"}

    def info(self):
        return {"Runtimes": {"runc": {}, "nvidia": {}}, "SecurityOptions": []}

    def close(self):
        pass


def _fake_root(tmp_path: Path, *, cpuinfo: str = "x86_64-xeon-avx512.txt",
               amd: str | None = None, wsl: bool = False) -> Path:
    """A file tree with what detection reads from / (cpuinfo, meminfo, os-release ...)."""
    root = tmp_path / "root"
    if amd:
        shutil.copytree(DATA / "sysfs" / amd, root)
    (root / "proc/sys/kernel").mkdir(parents=True, exist_ok=True)
    (root / "etc").mkdir(exist_ok=True)
    shutil.copy(DATA / "cpuinfo" / cpuinfo, root / "proc/cpuinfo")
    (root / "proc/meminfo").write_text("MemTotal: 32768000 kB\nMemAvailable: 30000000 kB\n")
    kernel = "5.15.153.1-microsoft-standard-WSL2" if wsl else "6.8.0-45-generic"
    (root / "proc/sys/kernel/osrelease").write_text(kernel + "\n")
    (root / "etc/os-release").write_text('ID=ubuntu\nVERSION_ID="24.04"\n')
    if wsl:
        (root / "usr/lib/wsl/lib").mkdir(parents=True)
        (root / "usr/lib/wsl/lib/libcuda.so.1").write_text("")
    return root


def _check(profile: HostProfile) -> str:
    assert HostProfile.from_json(profile.to_json()) == profile
    report = render_host_report(profile)
    for title in ("NVIDIA", "AMD", "CPU", "OS", "Docker", "Resources", "Python"):
        assert f"\n{title}\n" in f"\n{report}"
    return report


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_nvml_scenario_through_detect_host(tmp_path: Path, name: str) -> None:
    root = _fake_root(tmp_path, cpuinfo="x86_64-xeon-avx512.txt")
    profile = detect_host(
        env={"PATH": str(tmp_path / "empty")},
        nvml=scenario(name),
        root=root,
        docker_client_factory=_Docker(),
        disk_path=tmp_path,
        machine="x86_64",
        glibc="2.39",
    )
    report = _check(profile)
    if profile.nvidia.status != "ok":
        assert "No NVIDIA GPU" in report and "--target target.json" in report


def test_laptop_with_smi_only_and_docker_stopped(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    write_fake_nvidia_smi(bin_dir, "r550-rtx3060-laptop")
    root = _fake_root(tmp_path, cpuinfo="x86_64-xeon-avx512.txt")
    profile = detect_host(
        env={"PATH": str(bin_dir)},
        nvml=scenario("no_library"),
        root=root,
        docker_client_factory=_NoDocker(),
        disk_path=tmp_path,
        machine="x86_64",
        glibc="2.39",
    )
    assert profile.nvidia.source == "nvidia-smi" and profile.nvidia_ccs() == ["8.6"]
    assert profile.docker.status == "not_installed"  # no socket, no docker on that PATH
    assert (profile.os.distro, profile.os.distro_version) == ("ubuntu", "24.04")
    assert profile.resources.cpu_count == 2  # from the fake cpuinfo, not this machine
    report = _check(profile)
    assert "NVIDIA GeForce RTX 3060 Laptop GPU" in report
    assert "Docker is not usable (not_installed)" in report


def test_aarch64_with_amd_gpu(tmp_path: Path) -> None:
    root = _fake_root(tmp_path, cpuinfo="aarch64-neoverse-v1.txt", amd="mi210")
    rocminfo = (root / "rocminfo.out").read_text()

    def run(argv, timeout):
        if argv[0] == "rocminfo":
            return 0, rocminfo, ""
        return RC_NOT_FOUND, "", "not found"

    profile = detect_host(
        env={},
        nvml=scenario("no_library"),
        run=run,
        root=root,
        docker_client_factory=_Docker(),
        disk_path=tmp_path,
        machine="aarch64",
        glibc="2.39",
    )
    assert profile.cpu.arch == "aarch64" and "sve" in profile.cpu.features
    assert profile.amd_targets() == ["gfx90a"] and profile.amd.rocm_version == "6.2.0"
    assert "AMD Instinct MI210" in _check(profile)


def test_everything_broken_never_raises(tmp_path: Path) -> None:
    def run(argv, timeout):
        raise RuntimeError("runner exploded")

    class Nvml:
        def __getattr__(self, name):
            raise MemoryError("nvml exploded")  # not even an Exception subclass we expect

    def factory():
        raise KeyError("docker exploded")

    profile = detect_host(
        env={},
        nvml=Nvml(),
        run=run,
        root=tmp_path / "does-not-exist",
        docker_client_factory=factory,
        extra_pythons=["/nonexistent/python"],
        disk_path=tmp_path / "also" / "missing",
    )
    assert profile.nvidia.status == "error" and profile.docker.status == "error"
    _check(profile)


def test_real_machine() -> None:
    """Un-faked detection on the machine running the tests."""
    profile = detect_host()
    report = _check(profile)
    assert profile.pythons[0].is_current and profile.pythons[0].path == sys.executable
    assert profile.cpu.cores >= 1 and profile.resources.ram_total_bytes
    has_nvidia = shutil.which("nvidia-smi") is not None or Path("/dev/nvidiactl").exists()
    if has_nvidia:
        assert profile.nvidia.status == "ok", profile.nvidia.message
    else:
        assert profile.nvidia.status in {"no_library", "no_driver", "none"}
        assert "No NVIDIA GPU detected" in report
    if shutil.which("docker") and os.path.exists("/var/run/docker.sock"):
        assert profile.docker.status in {"ok", "permission_denied"}, profile.docker.message


# -- Pythons ----------------------------------------------------------------------------


def _script(folder: Path, name: str, body: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_extra_pythons(tmp_path: Path) -> None:
    good = _script(
        tmp_path,
        "python3.12",
        """echo '{"version": "3.12.4", "venv": false, "executable": "/opt/py/bin/python3.12"}'""",
    )
    broken = _script(tmp_path, "python-broken", "echo 'Traceback...' >&2; exit 1")
    garbage = _script(tmp_path, "python-garbage", "echo 'not json'")
    profile = detect_host(
        env={"PATH": str(tmp_path)},
        nvml=scenario("no_library"),
        docker_client_factory=_NoDocker(),
        extra_pythons=[good, broken, garbage, "/nonexistent/python3", sys.executable],
        disk_path=tmp_path,
    )
    paths = [p.path for p in profile.pythons]
    assert paths == [sys.executable, "/opt/py/bin/python3.12"]
    assert profile.pythons[1].version == "3.12.4" and not profile.pythons[1].is_current
    _check(profile)


def test_runner_timeout_and_missing_program(tmp_path: Path) -> None:
    sleeper = _script(tmp_path, "sleeper", "read line")  # waits on stdin, which is /dev/null...
    run = subprocess_runner({"PATH": str(tmp_path)})
    assert run(["no-such-program"], 1)[0] == RC_NOT_FOUND
    assert run([sleeper], 5)[0] == 1  # ...so it ends at once: stdin is never inherited
    slow = _script(tmp_path, "slow", "while :; do :; done")
    assert run([slow], 0.3)[0] == RC_TIMEOUT


# -- profiles for other tests ---------------------------------------------------------------

HOSTS = sorted((DATA / "hosts").glob("*.json"))


def test_host_profiles_are_all_there() -> None:
    names = {p.name for p in HOSTS}
    assert {
        "laptop-rtx3060-550.json",
        "ada-8.9-driver550.json",
        "ada-8.9-driver520.json",
        "h100-driver560.json",
        "no-gpu-server.json",
        "aarch64-server.json",
        "rocm-mi210.json",
        "small-laptop.json",
        "wsl2-rtx4090.json",
    } <= names


@pytest.mark.parametrize("path", HOSTS, ids=lambda p: p.stem)
def test_host_profile_loads_round_trips_and_renders(path: Path) -> None:
    profile = HostProfile.load(path)
    assert json.loads(profile.to_json()) == json.loads(path.read_text())  # no field lost
    _check(profile)


def test_import_is_light() -> None:
    """Importing detection pulls in no Qt and none of the slow SDKs (they load lazily)."""
    code = (
        "import sys, tfwizard.core.detect\n"
        "heavy = ('PySide6', 'docker', 'pynvml', 'rich', 'platformdirs', 'requests')\n"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


class _DockerWithRoot(_Docker):
    def info(self):
        return {**super().info(), "DockerRootDir": "/var/lib/docker", "NCPU": 64,
                "MemTotal": 256 * 2**30}


@pytest.mark.parametrize(("docker_host", "on_engine_disk"), [
    ("unix:///var/run/docker.sock", True), ("tcp://builder.lan:2376", False)])
def test_free_disk_is_measured_on_dockers_data_root(tmp_path: Path, docker_host: str,
                                                    on_engine_disk: bool) -> None:
    """Bazel's output base, the caches and the images fill Docker's data root, not the
    data folder: a local engine's DockerRootDir is where free space counts."""
    root = _fake_root(tmp_path)
    (root / "var/lib/docker").mkdir(parents=True)
    profile = detect_host(env={"PATH": str(tmp_path / "empty"), "DOCKER_HOST": docker_host},
                          nvml=scenario("no_library"), root=root,
                          docker_client_factory=_DockerWithRoot(), machine="x86_64",
                          glibc="2.39")
    assert profile.docker.root_dir == "/var/lib/docker"
    assert (profile.docker.engine_cpus, profile.docker.engine_ram_bytes) == (64, 256 * 2**30)
    res = profile.resources
    if on_engine_disk:  # a local engine: its data root, this machine's RAM and CPUs
        assert res.disk_path == str(root / "var/lib/docker") and res.disk_free_bytes
        assert res.ram_total_bytes == 32768000 * 1024 and res.cpu_count != 64
    else:
        # another machine's engine: builds use its CPUs and RAM; its free disk is unknown
        # here, so no free-space finding speaks of this machine's disk as the build's
        assert (res.disk_path, res.disk_free_bytes) == (None, None)
        assert (res.cpu_count, res.ram_total_bytes) == (64, 256 * 2**30)
        assert "builds run there" in render_host_report(profile)
