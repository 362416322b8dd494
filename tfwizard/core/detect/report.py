"""A plain-text host report for people: what was found, what is missing, what to do."""

from __future__ import annotations

import io
import textwrap

from ..host import HostProfile

WIDTH = 100

TARGET_HINT = (
    "You can still build GPU wheels for another machine: save that machine's profile with "
    "`tfwizard detect --json > target.json` and pass `--target target.json`."
)


def render_host_report(profile: HostProfile) -> str:
    """Render ``profile`` as a multi-section plain-text report (no colours, 100 columns)."""
    from rich import box
    from rich.console import Console
    from rich.padding import Padding
    from rich.table import Table

    buffer = io.StringIO()
    console = Console(
        file=buffer, width=WIDTH, color_system=None, highlight=False, emoji=False, soft_wrap=False
    )

    def section(title: str, lines: list[str]) -> None:
        # plain text, wrapped here: rich would wrap without the indent
        buffer.write(f"{title}\n")
        for line in lines:
            buffer.write(_wrap(line) + "\n")
        buffer.write("\n")

    nvidia = profile.nvidia
    section("NVIDIA", _nvidia_lines(profile))
    if nvidia.gpus:
        show_mig = any(g.mig_enabled is not None for g in nvidia.gpus)
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for column in ("#", "GPU", "CC", "Memory", "Arch", "PCI bus") + ("MIG",) * show_mig:
            table.add_column(column, no_wrap=True)
        for gpu in nvidia.gpus:
            cc = gpu.compute_capability or "?"
            row = [
                str(gpu.index),
                f"{gpu.name or '?'}{' (unusable)' if gpu.error else ''}",
                f"{cc}*" if gpu.cc_derived else cc,
                f"{gpu.memory_total_mib} MiB" if gpu.memory_total_mib is not None else "?",
                gpu.architecture or "",
                gpu.pci_bus_id or "",
            ]
            table.add_row(*row, *[_yes_no(gpu.mig_enabled)] * show_mig)
        console.print(Padding(table, (0, 0, 0, 2)))
        if any(g.cc_derived for g in nvidia.gpus):
            buffer.write(
                _wrap("* compute capability looked up from the GPU name, not read from the driver")
                + "\n"
            )
        buffer.write("\n")

    amd = profile.amd
    amd_message = amd.message or ("no AMD GPU detected" if not amd.gpus else "")
    amd_lines = [amd_message[:1].upper() + amd_message[1:]]
    for amd_gpu in amd.gpus:
        amd_lines.append(
            f"node {amd_gpu.node}: {amd_gpu.gfx_target}  {amd_gpu.name or ''}".rstrip()
        )
    if amd.hsa_override_gfx_version and not amd.gpus:
        amd_lines.append(f"HSA_OVERRIDE_GFX_VERSION={amd.hsa_override_gfx_version}")
    section("AMD", [line for line in amd_lines if line])

    cpu = profile.cpu
    section(
        "CPU",
        [
            f"{cpu.model or 'unknown model'} ({cpu.arch}, {cpu.cores} logical CPUs)",
            f"features: {' '.join(cpu.features) if cpu.features else 'none of interest found'}",
        ],
    )

    osinfo = profile.os
    distro = " ".join(p for p in (osinfo.distro, osinfo.distro_version) if p) or "unknown"
    os_lines = [
        f"{osinfo.system}, {distro}, kernel {osinfo.kernel or '?'}, glibc {osinfo.glibc or '?'}"
    ]
    if osinfo.wsl2:
        libcuda = osinfo.wsl_libcuda_path or "not found in /usr/lib/wsl/lib"
        os_lines.append(f"WSL2: yes; the Windows driver's libcuda: {libcuda}")
    section("OS", os_lines)

    section("Docker", _docker_lines(profile))

    res = profile.resources
    section(
        "Resources",
        [
            f"RAM: {_gib(res.ram_total_bytes)} total, {_gib(res.ram_available_bytes)} available",
            f"CPUs usable: {res.cpu_count if res.cpu_count is not None else '?'}",
            f"free disk: {_gib(res.disk_free_bytes)} at {res.disk_path or '?'}",
        ],
    )

    python_lines = [
        f"{p.path}  Python {p.version or '?'}"
        f"{'  (venv)' if p.is_venv else ''}{'  (this one)' if p.is_current else ''}"
        for p in profile.pythons
    ]
    section("Python", python_lines or ["none found"])
    lines = [line.rstrip() for line in buffer.getvalue().rstrip().splitlines()]
    return "\n".join(lines) + "\n"


def _nvidia_lines(profile: HostProfile) -> list[str]:
    nvidia = profile.nvidia
    lines = []
    if nvidia.status == "ok":
        lines.append(
            f"driver {nvidia.driver_version or '?'}, supports CUDA up to "
            f"{nvidia.cuda_driver_version or '?'} (read with {nvidia.source})"
        )
        for gpu in nvidia.gpus:
            if gpu.error:
                lines.append(
                    f"GPU {gpu.index} is unusable ({gpu.error}): reset it "
                    f"(`sudo nvidia-smi -r -i {gpu.index}`) or reboot."
                )
        return lines
    reason = (nvidia.message or f"status {nvidia.status}").rstrip(".")
    if reason.lower().startswith("no nvidia gpu"):
        lines.append(f"N{reason[1:]}.")
    else:
        lines.append(f"No NVIDIA GPU usable: {reason}.")
    lines.append(TARGET_HINT)
    return lines


def _docker_lines(profile: HostProfile) -> list[str]:
    docker = profile.docker
    if docker.status != "ok":
        return [
            f"Docker is not usable ({docker.status}): {docker.message}",
            "tfwizard builds inside Docker; fix this before building.",
        ]
    lines = [docker.message or f"Docker {docker.server_version or '?'} answers"]
    lines.append(f"runtimes: {', '.join(docker.runtimes) or 'none listed'}")
    if docker.cdi_spec_dirs:
        lines.append(f"CDI spec dirs: {', '.join(docker.cdi_spec_dirs)}")
    gpu_passthrough = docker.nvidia_runtime or bool(docker.cdi_spec_dirs)
    if profile.nvidia.status == "ok" and not gpu_passthrough:
        lines.append(
            "no NVIDIA runtime: building works, but testing the wheel on the GPU inside Docker "
            "needs the NVIDIA Container Toolkit: sudo nvidia-ctk runtime configure "
            "--runtime=docker, then restart Docker."
        )
    return lines


def _wrap(line: str) -> str:
    return textwrap.fill(
        line,
        width=WIDTH,
        initial_indent="  ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _gib(value: int | None) -> str:
    return f"{value / 1024**3:.1f} GiB" if value is not None else "?"


def _yes_no(value: bool | None) -> str:
    return "" if value is None else ("on" if value else "off")
