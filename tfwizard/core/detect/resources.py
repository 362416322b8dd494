"""Resources: RAM from /proc/meminfo, usable CPUs, free disk where builds will go."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..host import ResourcesInfo


def probe_resources(
    *, root: Path, disk_path: Path | None = None, cpu_count: int | None = None
) -> ResourcesInfo:
    """Describe RAM, CPUs and disk; ``cpu_count`` defaults to the CPUs this process may use."""
    info = ResourcesInfo()
    meminfo = _meminfo(root)
    info.ram_total_bytes = meminfo.get("MemTotal")
    info.ram_available_bytes = meminfo.get("MemAvailable")
    info.cpu_count = cpu_count if cpu_count is not None else _usable_cpus()
    path = _existing(disk_path if disk_path is not None else default_disk_path())
    if path is not None:
        try:
            info.disk_free_bytes = shutil.disk_usage(path).free
            info.disk_path = str(path)
        except OSError:
            pass
    return info


def default_disk_path() -> Path:
    """Where tfwizard keeps its data: paths.data_dir() ($TFWIZARD_DATA_DIR, else the
    platform's user data dir), the one rule for it."""
    from ..paths import data_dir  # lazy: only needed when no disk path is given

    try:
        return data_dir()
    except Exception:  # platformdirs confused by the environment
        return Path.home()


def _existing(path: Path) -> Path | None:
    """The path itself or its nearest existing parent (the data dir may not exist yet)."""
    path = path.expanduser().absolute()
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return None


def _meminfo(root: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    try:
        text = (root / "proc/meminfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return values
    for line in text.splitlines():
        key, _sep, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            unit = 1024 if len(parts) > 1 and parts[1].lower() == "kb" else 1
            values[key.strip()] = int(parts[0]) * unit
    return values


def _usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))  # respects taskset and container cpusets
    except (AttributeError, OSError):
        return os.cpu_count()
