"""CPU: architecture, model and the instruction-set features that matter for -march."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from ..host import CpuInfo
from ..i18n import _

#: features worth knowing when choosing compiler flags, in the order a report lists them
KEPT_FEATURES = (
    # x86_64 (/proc/cpuinfo "flags")
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512cd",
    "avx512bw",
    "avx512dq",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    # aarch64 (/proc/cpuinfo "Features")
    "asimd",
    "asimdhp",
    "asimddp",
    "fphp",
    "sve",
    "sve2",
    "bf16",
    "i8mm",
    "sme",
)

#: (implementer, part) from an aarch64 /proc/cpuinfo -> core name (Arm's published part numbers)
_ARM_PARTS = {
    (0x41, 0xD03): "ARM Cortex-A53",
    (0x41, 0xD05): "ARM Cortex-A55",
    (0x41, 0xD08): "ARM Cortex-A72",
    (0x41, 0xD0B): "ARM Cortex-A76",
    (0x41, 0xD0C): "ARM Neoverse-N1",
    (0x41, 0xD40): "ARM Neoverse-V1",
    (0x41, 0xD49): "ARM Neoverse-N2",
    (0x41, 0xD4F): "ARM Neoverse-V2",
}

_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


def normalise_arch(machine: str) -> str:
    """A machine name as the package names architectures (amd64 -> x86_64, arm64 -> aarch64)."""
    machine = machine.strip().lower()
    return _ARCH_ALIASES.get(machine, machine) or "unknown"


def probe_cpu(*, root: Path, machine: str | None = None) -> CpuInfo:
    """Describe the CPU from /proc/cpuinfo under ``root``; never raises."""
    info = CpuInfo(arch=normalise_arch(machine if machine is not None else platform.machine()))
    try:
        text = (root / "proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    processors = [_fields(b) for b in blocks]
    processors = [p for p in processors if "processor" in p]
    if processors:
        info.cores = len(processors)
    elif root == Path("/"):
        info.cores = os.cpu_count() or 1
    first = processors[0] if processors else (_fields(blocks[0]) if blocks else {})
    info.model = first.get("model name") or _arm_model(first)
    flags = set((first.get("flags") or first.get("Features") or "").lower().split())
    info.features = [f for f in KEPT_FEATURES if f in flags]
    return info


def _fields(block: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def _arm_model(fields: dict[str, str]) -> str | None:
    try:
        implementer = int(fields["CPU implementer"], 0)
        part = int(fields["CPU part"], 0)
    except (KeyError, ValueError):
        return None
    known = _ARM_PARTS.get((implementer, part))
    return known or _("implementer {implementer:#x} part {part:#x}").format(
        implementer=implementer, part=part)
