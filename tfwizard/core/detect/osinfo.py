"""Operating system: distribution, kernel, glibc, and whether this is WSL2."""

from __future__ import annotations

import os
import platform
import shlex
from collections.abc import Mapping
from pathlib import Path

from ..host import OsInfo

WSL_LIB = "usr/lib/wsl/lib"


def probe_os(
    *,
    env: Mapping[str, str],
    root: Path,
    system: str | None = None,
    glibc: str | None = None,
) -> OsInfo:
    """Describe the OS under ``root``; ``system`` and ``glibc`` default to this process's."""
    info = OsInfo(system=(system if system is not None else platform.system()).lower() or "linux")
    release = _os_release(root)
    info.distro = release.get("ID") or None
    info.distro_version = release.get("VERSION_ID") or None
    info.kernel = _read(root / "proc/sys/kernel/osrelease")
    if info.kernel is None and root == Path("/"):
        info.kernel = platform.release() or None
    info.glibc = glibc if glibc is not None else _process_glibc()
    kernel = (info.kernel or "").lower()
    info.wsl2 = "microsoft-standard-wsl2" in kernel or bool(env.get("WSL_DISTRO_NAME"))
    info.wsl_libcuda_path = _wsl_libcuda(root)
    return info


def _os_release(root: Path) -> dict[str, str]:
    for name in ("etc/os-release", "usr/lib/os-release"):
        text = _read(root / name)
        if text is None:
            continue
        values: dict[str, str] = {}
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if not sep or key.strip().startswith("#"):
                continue
            try:
                words = shlex.split(value)
            except ValueError:  # unbalanced quotes: keep the raw text
                words = [value.strip()]
            values[key.strip()] = " ".join(words)
        return values
    return {}


def _process_glibc() -> str | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    except (AttributeError, ValueError, OSError):  # not Linux, or not glibc (musl)
        return None
    if not text or not text.startswith("glibc "):
        return None
    return text.split()[1]


def _wsl_libcuda(root: Path) -> str | None:
    folder = root / WSL_LIB
    try:
        found = sorted(p.name for p in folder.glob("libcuda.so*"))
    except OSError:
        return None
    if not found:
        return None
    name = "libcuda.so.1" if "libcuda.so.1" in found else found[0]
    return f"/{WSL_LIB}/{name}"  # the path on the profiled machine, not under a test root


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None
