"""AMD GPUs: the amdkfd topology in sysfs (physical targets), rocminfo/amd-smi for names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from ..host import AmdGpu, AmdInfo
from ..i18n import _
from .process import Runner, safe_run

KFD_NODES = "sys/class/kfd/kfd/topology/nodes"
TOOL_TIMEOUT = 10.0


def gfx_name(target_version: int) -> str:
    """amdkfd's ``gfx_target_version`` (major*10000 + minor*100 + stepping) as "gfx90a"."""
    major = target_version // 10000
    minor = (target_version // 100) % 100
    stepping = target_version % 100
    return f"gfx{major}{minor}{stepping:x}"


def override_gfx_name(value: str) -> str | None:
    """``HSA_OVERRIDE_GFX_VERSION`` ("10.3.0", decimal parts) as "gfx1030", or None."""
    parts = value.strip().split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    major, minor, stepping = (int(p) for p in parts)
    return gfx_name(major * 10000 + minor * 100 + stepping)


def probe_amd(*, env: Mapping[str, str], run: Runner, root: Path) -> AmdInfo:
    """Describe AMD GPUs and ROCm; never raises."""
    info = AmdInfo()
    try:
        info.rocm_version = rocm_version(root)
        info.hsa_override_gfx_version = env.get("HSA_OVERRIDE_GFX_VERSION") or None
        nodes = root / KFD_NODES
        if not nodes.is_dir():
            info.message = _(
                "no AMD GPU detected (no /sys/class/kfd: the amdgpu driver with compute "
                "support is not loaded)."
            )
            return info
        info.gpus = _read_kfd_nodes(nodes)
    except OSError as exc:
        info.status = "error"
        info.message = _("could not read the AMD GPU topology in sysfs: {error}").format(error=exc)
        return info
    if not info.gpus:
        info.message = _("no AMD GPU detected (the kfd topology lists only CPUs).")
        return info
    info.status, info.source = "ok", "sysfs"
    runtime_targets = _add_tool_names(info.gpus, run)
    info.message = _message(info, runtime_targets)
    return info


def _read_kfd_nodes(nodes: Path) -> list[AmdGpu]:
    gpus: list[AmdGpu] = []
    for node_dir in sorted(nodes.iterdir(), key=lambda p: _node_number(p.name)):
        number = _node_number(node_dir.name)
        props_file = node_dir / "properties"
        if number < 0 or not props_file.is_file():
            continue
        props = _parse_properties(props_file.read_text(encoding="utf-8", errors="replace"))
        version = props.get("gfx_target_version", 0)
        if version <= 0:  # CPU node
            continue
        gpus.append(
            AmdGpu(
                node=number,
                gfx_target=gfx_name(version),
                gfx_target_version=version,
                device_id=props.get("device_id"),
            )
        )
    return gpus


def _node_number(name: str) -> int:
    return int(name) if name.isdigit() else -1


def _parse_properties(text: str) -> dict[str, int]:
    props: dict[str, int] = {}
    for line in text.splitlines():
        key, _sep, value = line.strip().partition(" ")
        try:
            props[key] = int(value.strip())
        except ValueError:
            continue
    return props


def rocm_version(root: Path) -> str | None:
    """The ROCm release in /opt/rocm (or the newest /opt/rocm-*), e.g. "6.2.0"."""
    candidates = [root / "opt/rocm/.info/version"]
    versioned = sorted(
        (root / "opt").glob("rocm-*/.info/version"),
        key=lambda p: _version_key(p.parent.parent.name.removeprefix("rocm-")),
        reverse=True,
    )
    for path in candidates + versioned:
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        match = re.match(r"\d+(\.\d+)*", text)  # "6.2.0-66" -> "6.2.0"
        if match:
            return match.group(0)
    return None


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


def _add_tool_names(gpus: list[AmdGpu], run: Runner) -> list[str]:
    """Fill marketing names from rocminfo (or amd-smi); return the targets the runtime reports.

    Only extra information: sysfs stays the source of the targets. Names are matched by
    order, and only when the tool lists as many GPUs as sysfs does.
    """
    rc, out, _err = safe_run(run, ["rocminfo"], TOOL_TIMEOUT)
    agents = _parse_rocminfo(out) if rc == 0 else []
    if not agents:
        rc, out, _err = safe_run(run, ["amd-smi", "static", "--asic"], TOOL_TIMEOUT)
        agents = _parse_amd_smi(out) if rc == 0 else []
    if len(agents) == len(gpus):
        for gpu, (_target, name) in zip(gpus, agents, strict=True):
            gpu.name = name
    return [target for target, _name in agents]


def _parse_rocminfo(text: str) -> list[tuple[str, str | None]]:
    """(gfx target, marketing name) for each GPU agent rocminfo lists."""
    agents = []
    for block in re.split(r"^\s*Agent \d+\s*$", text, flags=re.MULTILINE)[1:]:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            key = key.strip()
            if sep and key not in fields:  # the first "Name:" is the agent's, later ones ISAs
                fields[key] = value.strip()
        if fields.get("Device Type") == "GPU" and fields.get("Name", "").startswith("gfx"):
            agents.append((fields["Name"], fields.get("Marketing Name") or None))
    return agents


def _parse_amd_smi(text: str) -> list[tuple[str, str | None]]:
    agents: list[tuple[str, str | None]] = []
    name: str | None = None
    for line in text.splitlines():
        key, _sep, value = line.strip().partition(":")
        if key == "GPU":
            name = None
        elif key == "MARKET_NAME":
            name = value.strip() or None
        elif key == "TARGET_GRAPHICS_VERSION" and value.strip().startswith("gfx"):
            agents.append((value.strip(), name))
    return agents


def _message(info: AmdInfo, runtime_targets: list[str]) -> str:
    targets = ", ".join(dict.fromkeys(g.gfx_target for g in info.gpus))
    rocm = f"ROCm {info.rocm_version}" if info.rocm_version else _("ROCm not found in /opt/rocm")
    if len(info.gpus) > 1:
        message = _("{count} AMD GPUs ({targets}); {rocm}.").format(
            count=len(info.gpus), targets=targets, rocm=rocm)
    else:
        message = _("1 AMD GPU ({targets}); {rocm}.").format(targets=targets, rocm=rocm)
    override = info.hsa_override_gfx_version
    if override:
        spoofed = override_gfx_name(override) or _("an invalid target")
        message += " " + _(
            "HSA_OVERRIDE_GFX_VERSION={override} is set: the ROCm runtime treats every GPU "
            "as {spoofed}, and rocminfo reports that spoofed target; the physical targets "
            "read from sysfs are {targets}. Build for {spoofed} only if you keep the override."
        ).format(override=override, spoofed=spoofed, targets=targets)
    elif runtime_targets and set(runtime_targets) - {g.gfx_target for g in info.gpus}:
        message += " " + _("rocminfo reports other targets ({targets}).").format(
            targets=", ".join(runtime_targets))
    return message
