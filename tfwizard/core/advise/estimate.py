"""How long a source build takes on a machine (advise.toml [build_time])."""

from __future__ import annotations

import math

from ..host import HostProfile
from ..knowledge import KnowledgeBase
from .types import BuildEstimate


def estimate_build(kb: KnowledgeBase, host: HostProfile, backend: str) -> BuildEstimate:
    """A source build's duration on `host`: overhead + work / jobs (advise.toml [build_time]).

    jobs = min(logical CPUs, RAM / platforms.toml memory.gib_per_job), as the plan limits
    Bazel's jobs. UNVERIFIED: a model fitted by eye to reported builds, not a measurement.
    """
    model = kb.raw.get("advise", {}).get("build_time", {})
    cpus = host.resources.cpu_count or host.cpu.cores or 1
    ram = host.resources.ram_total_bytes
    ram_gib = round(ram / 2**30, 1) if ram else None
    per_job = float(kb.platforms.get("memory", {}).get("gib_per_job", 2.5))
    jobs = min(cpus, max(1, math.floor(ram_gib / per_job))) if ram_gib else cpus
    work = float(model.get("gpu_thread_hours" if backend in ("cuda", "rocm")
                           else "cpu_thread_hours", 20.0))
    hours = float(model.get("overhead_hours", 0.3)) + work / jobs
    return BuildEstimate(
        hours=_round_hours(hours),
        low=round(hours * float(model.get("low", 0.6)), 1),
        high=round(hours * float(model.get("high", 1.6)), 1),
        jobs=jobs, cpus=cpus, ram_gib=ram_gib, backend=backend,
        sources=tuple(model.get("sources", ())), unverified=str(model.get("unverified", "")),
    )


def _round_hours(hours: float) -> float:
    if hours < 4:
        return max(1.0, round(hours * 2) / 2)
    return float(round(hours))


