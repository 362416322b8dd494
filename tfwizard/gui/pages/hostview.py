"""A host profile as the short HTML the Welcome page shows."""

from __future__ import annotations

import html

from tfwizard.core.host import HostProfile

from ..i18n import tr
from ..state import WizardState
from ..widgets.one_family import fallback_family


def _gib(value: int | None) -> str:
    return f"{value / 2**30:.0f} GiB" if value else tr("unknown")


def nvidia_text(host: HostProfile) -> str:
    """The NVIDIA row when no GPU is listed: made from the profile's status, in the current
    language (a saved profile's advice is in the language it was detected in)."""
    nv = host.nvidia
    known = {
        "none": tr("no NVIDIA GPU detected"),
        "no_library": tr("no NVIDIA GPU detected (the NVIDIA driver library is not "
                         "installed)"),
        "no_driver": tr("no NVIDIA GPU detected (the NVIDIA kernel driver is not loaded)"),
        "mismatch": tr("the NVIDIA driver and its library differ in version: reboot, or "
                       "reinstall the driver"),
    }
    if nv.status in known:
        return known[nv.status]
    return tr("NVIDIA detection failed: {message}").format(message=nv.message or nv.status)


def docker_text(host: HostProfile) -> str:
    """The Docker row: made here from the profile's fields when Docker works (so it is in
    the current language); otherwise the detection's advice, which says what to do."""
    d = host.docker
    if d.status == "ok":
        text = tr("Docker {version} (API {api}) at {host}").format(
            version=d.server_version or "?", api=d.api_version or "?", host=d.host or "?")
        if d.nvidia_runtime:
            text += tr(", NVIDIA runtime")
        return text
    status = {"not_installed": tr("not installed"), "not_running": tr("not running"),
              "permission_denied": tr("permission denied")}.get(d.status, tr("not usable"))
    return f"{status}: {d.message}" if d.message else status


def host_html(host: HostProfile | None, state: WizardState, title: str) -> str:
    """The parts of a host profile that matter for a build, as a small HTML table."""
    e = html.escape
    if host is None:
        detecting = tr("Detecting…")  # outside the f-string, where Babel's extractor sees it
        return f"<b>{e(title)}</b><br>{e(detecting)}"
    rows: list[tuple[str, str]] = []
    nv = host.nvidia
    if nv.gpus:
        for gpu in nv.gpus:
            if gpu.error:
                rows.append((f"GPU {gpu.index}", tr("error: {error}").format(error=gpu.error)))
                continue
            cc = gpu.compute_capability or "?"
            arch = state.kb.gpu_arch_name(cc) if gpu.compute_capability else None
            derived = tr(" (from the name)") if gpu.cc_derived else ""
            mem = f", {gpu.memory_total_mib / 1024:.0f} GiB" if gpu.memory_total_mib else ""
            rows.append((f"GPU {gpu.index}", f"{gpu.name or 'NVIDIA GPU'}: CC {cc}{derived}"
                         f"{' ' + arch if arch else ''}{mem}"))
        rows.append((tr("NVIDIA driver"), nv.driver_version or tr("unknown")))
        rows.append((tr("CUDA supported by the driver"),
                     tr("up to {version}").format(version=nv.cuda_driver_version)
                     if nv.cuda_driver_version else tr("unknown")))
    else:
        rows.append(("NVIDIA", nvidia_text(host)))
    for amd in host.amd.gpus:
        rows.append((f"AMD GPU {amd.node}", f"{amd.name or ''} {amd.gfx_target}".strip()))
    rows.append(("Docker", docker_text(host)))
    res = host.resources
    rows.append(("CPU", tr("{model} ({count} CPUs, {arch})").format(
        model=host.cpu.model or host.cpu.arch, count=res.cpu_count or host.cpu.cores,
        arch=host.cpu.arch)))
    rows.append((tr("RAM"), tr("{total} total, {available} available").format(
        total=_gib(res.ram_total_bytes), available=_gib(res.ram_available_bytes))))
    rows.append((tr("Disk"), tr("{free} free at {path}").format(
        free=_gib(res.disk_free_bytes), path=res.disk_path or "?")))
    os_text = " ".join(x for x in (host.os.distro, host.os.distro_version) if x) or host.os.system
    rows.append((tr("OS"), os_text + (f", glibc {host.os.glibc}" if host.os.glibc else "")
                 + (" (WSL2)" if host.os.wsl2 else "")))
    # labels in grey, not italic: CJK has no italic (Qt slants it), and the slanted fallback
    # font sat on another baseline than the values (UX review, zh_CN Welcome)
    cells = "".join(f"<tr><td valign='top' style='padding-right:12px; color:#555'>{e(k)}</td>"
                    f"<td valign='top'>{e(v)}</td></tr>" for k, v in rows)
    family = fallback_family(t for row in rows for t in row)  # one baseline a row (zh_CN)
    style = f" style=\"font-family:'{e(family)}'\"" if family else ""
    return f"<b>{e(title)}</b><table{style}>{cells}</table>"
