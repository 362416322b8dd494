"""Host detection: what this machine is, as a ``HostProfile``.

``detect_host()`` runs one probe per concern (NVIDIA, AMD, CPU, OS, Docker, resources,
Pythons). Everything a probe touches is injectable, so tests describe a machine with an
environment, a fake NVML module, a fake program runner and a fake filesystem root. It never
raises: a probe that fails records why in its part of the profile.

Facts about *this process* (``platform.machine()``, glibc, ``sys.executable``) come from the
running interpreter unless passed in; facts read from files come from under ``root``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from ... import __version__
from ..host import (
    AmdInfo,
    CpuInfo,
    DockerInfo,
    HostProfile,
    NvidiaInfo,
    OsInfo,
    PythonInterpreter,
    ResourcesInfo,
)
from ..i18n import _
from .amd import probe_amd
from .cpu import probe_cpu
from .docker_probe import DockerClientFactory, probe_docker
from .nvidia import probe_nvidia
from .osinfo import probe_os
from .process import Runner, subprocess_runner
from .pythons import current_python, probe_pythons
from .resources import probe_resources

__all__ = ["Runner", "detect_host", "render_host_report", "subprocess_runner"]

T = TypeVar("T")


def detect_host(
    *,
    env: Mapping[str, str] | None = None,
    nvml: Any = None,
    run: Runner | None = None,
    root: Path = Path("/"),
    docker_client_factory: DockerClientFactory | None = None,
    extra_pythons: Iterable[str | os.PathLike[str]] = (),
    disk_path: Path | None = None,
    machine: str | None = None,
    glibc: str | None = None,
) -> HostProfile:
    """Detect this machine's GPUs, CPU, OS, Docker, resources and Pythons; never raises.

    ``env`` defaults to ``os.environ``; ``run`` to a runner that finds programs on
    ``env["PATH"]``; ``nvml`` to ``pynvml``; ``docker_client_factory`` to
    ``docker.from_env`` with a short timeout. ``machine`` and ``glibc`` override what this
    process reports (for describing another machine in tests).
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    runner = run if run is not None else subprocess_runner(environ)
    root = Path(root)
    profile = HostProfile(
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        tfwizard_version=__version__,
    )
    profile.nvidia = _guarded(
        _("internal error while detecting NVIDIA GPUs: {error}"),
        lambda: probe_nvidia(nvml=nvml, run=runner),
        lambda why: NvidiaInfo(status="error", message=why),
    )
    profile.amd = _guarded(
        _("internal error while detecting AMD GPUs: {error}"),
        lambda: probe_amd(env=environ, run=runner, root=root),
        lambda why: AmdInfo(status="error", message=why),
    )
    profile.cpu = _guarded(
        _("internal error while detecting the CPU: {error}"),
        lambda: probe_cpu(root=root, machine=machine),
        lambda why: CpuInfo(),
    )
    profile.os = _guarded(
        _("internal error while detecting the OS: {error}"),
        lambda: probe_os(env=environ, root=root, glibc=glibc),
        lambda why: OsInfo(),
    )
    profile.docker = _guarded(
        _("internal error while detecting Docker: {error}"),
        lambda: probe_docker(env=environ, client_factory=docker_client_factory),
        lambda why: DockerInfo(status="error", message=why),
    )
    usable_cpus = None if root == Path("/") else profile.cpu.cores
    if disk_path is None:
        disk_path = engine_disk(profile.docker, root)
    if profile.docker.remote:  # builds run on the engine's machine: its CPUs and RAM;
        # its free disk cannot be asked without a container, so it is unknown, not ours
        profile.resources = ResourcesInfo(ram_total_bytes=profile.docker.engine_ram_bytes,
                                          cpu_count=profile.docker.engine_cpus)
    else:
        profile.resources = _guarded(
            _("internal error while detecting resources: {error}"),
            lambda: probe_resources(root=root, disk_path=disk_path, cpu_count=usable_cpus),
            lambda why: ResourcesInfo(),
        )
    profile.pythons = _guarded(
        _("internal error while detecting Python interpreters: {error}"),
        lambda: probe_pythons(extra=extra_pythons, run=runner),
        lambda why: _current_only(),
    )
    return profile


def engine_disk(docker: DockerInfo, root: Path) -> Path | None:
    """Docker's data root when the engine is on this machine (a unix socket) and the folder
    is there: the disk a build's output base, caches and images fill, which is what the
    free-space check is about; None (the data folder) otherwise."""
    if docker.status != "ok" or not docker.root_dir or docker.remote or not docker.host:
        return None
    path = root / docker.root_dir.lstrip("/")
    return path if path.is_dir() else None


def render_host_report(profile: HostProfile) -> str:
    """A readable plain-text report of a profile (see ``report.render_host_report``)."""
    from .report import render_host_report as render  # lazy: rich costs ~50 ms to import

    return render(profile)


def _guarded(failed: str, probe: Callable[[], T], fallback: Callable[[str], T]) -> T:
    """Run one probe; a bug in it becomes a message in the profile, never a crash.

    ``failed`` is the message for that case, with an ``{error}`` placeholder."""
    try:
        return probe()
    except Exception as exc:
        return fallback(failed.format(error=f"{type(exc).__name__}: {exc}"))


def _current_only() -> list[PythonInterpreter]:
    try:
        return [current_python()]
    except Exception:  # sys.executable can be empty in embedded interpreters
        return []
