"""How many Bazel jobs a build host allows: the one sizing rule that the plan's --jobs and
check's RAM findings share."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .host import HostProfile


@dataclass(frozen=True)
class JobSizing:
    """How many Bazel jobs a build host's RAM and CPUs allow (the one sizing rule: the
    plan's --jobs and check's RAM_PER_JOB / RAM_LIMITS_JOBS)."""
    ram_gib: float
    cpus: int
    by_ram: int  # jobs the RAM allows at gib_per_job each
    jobs: int  # min(cpus, by_ram)


def job_sizing(build_host: HostProfile, gib_per_job: float) -> JobSizing | None:
    """The jobs `build_host` allows; None when its RAM is unknown."""
    if not build_host.resources.ram_total_bytes:
        return None
    ram_gib = build_host.resources.ram_total_bytes / 2**30
    cpus = build_host.resources.cpu_count or build_host.cpu.cores or 1
    by_ram = max(1, math.floor(ram_gib / gib_per_job))
    return JobSizing(ram_gib, cpus, by_ram, max(1, min(cpus, by_ram)))
