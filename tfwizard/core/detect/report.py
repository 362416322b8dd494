"""A plain-text host report for people: what was found, what is missing, what to do."""

from __future__ import annotations

import io
import re
import textwrap
import unicodedata
from typing import Any

from ..host import HostProfile
from ..i18n import _
from .nvidia import unusable_gpu

WIDTH = 100

#: the NVIDIA statuses whose message says that there is no GPU to use ("no NVIDIA GPU ...")
_NO_GPU_STATUSES = ("none", "no_library", "no_driver")


def target_hint() -> str:
    """The hint that GPU wheels can still be built for another machine's profile."""
    return _("You can still build GPU wheels for another machine: save that machine's profile "
             "with `tfwizard detect --json > target.json` and pass `--target target.json`.")


def render_host_report(profile: HostProfile) -> str:
    """Render ``profile`` as a multi-section plain-text report (no colours, 100 columns)."""
    from rich.console import Console

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
    section(_("NVIDIA"), _nvidia_lines(profile))
    if nvidia.gpus:
        _gpu_table(profile, console, buffer)
    section(_("AMD"), _amd_lines(profile))
    cpu = profile.cpu
    features = " ".join(cpu.features) if cpu.features else _("none of interest found")
    section(
        _("CPU"),
        [
            _("{model} ({arch}, {cores} logical CPUs)").format(
                model=cpu.model or _("unknown model"), arch=cpu.arch, cores=cpu.cores),
            _("features: {features}").format(features=features),
        ],
    )

    section(_("OS"), _os_lines(profile))
    section(_("Docker"), _docker_lines(profile))

    res = profile.resources
    section(
        _("Resources"),
        [
            _("RAM: {total} total, {available} available").format(
                total=_gib(res.ram_total_bytes), available=_gib(res.ram_available_bytes)),
            _("CPUs usable: {count}").format(
                count=res.cpu_count if res.cpu_count is not None else "?"),
            _("free disk: {free} at {path}").format(
                free=_gib(res.disk_free_bytes), path=res.disk_path or "?"),
        ] + ([_("(the Docker engine's machine at {host}: builds run there; its free disk is "
                "asked by the preflight, in a container of the build image)").format(
                    host=profile.docker.host)]
             if profile.docker.remote else []),
    )

    python_lines = ["  ".join([f"{p.path}  Python {p.version or '?'}"]
                              + [_("(venv)")] * p.is_venv + [_("(this one)")] * p.is_current)
                    for p in profile.pythons]
    section(_("Python"), python_lines or [_("none found")])
    lines = [line.rstrip() for line in buffer.getvalue().rstrip().splitlines()]
    return "\n".join(lines) + "\n"


def _gpu_table(profile: HostProfile, console: Any, buffer: io.StringIO) -> None:
    """The NVIDIA GPUs as a table (a MIG column when any GPU says)."""
    from rich import box
    from rich.padding import Padding
    from rich.table import Table

    nvidia = profile.nvidia
    show_mig = any(g.mig_enabled is not None for g in nvidia.gpus)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    columns = ("#", "GPU", "CC", _("Memory"), _("Arch"), _("PCI bus")) + ("MIG",) * show_mig
    for column in columns:
        table.add_column(column, no_wrap=True)
    for gpu in nvidia.gpus:
        cc = gpu.compute_capability or "?"
        name = gpu.name or "?"
        row = [
            str(gpu.index),
            _("{name} (unusable)").format(name=name) if gpu.error else name,
            f"{cc}*" if gpu.cc_derived else cc,
            f"{gpu.memory_total_mib} MiB" if gpu.memory_total_mib is not None else "?",
            gpu.architecture or "",
            gpu.pci_bus_id or "",
        ]
        table.add_row(*row, *[_yes_no(gpu.mig_enabled)] * show_mig)
    console.print(Padding(table, (0, 0, 0, 2)))
    if any(g.cc_derived for g in nvidia.gpus):
        buffer.write(
            _wrap(_("* compute capability looked up from the GPU name, not read from the "
                    "driver"))
            + "\n"
        )
    buffer.write("\n")


def _amd_lines(profile: HostProfile) -> list[str]:
    amd = profile.amd
    amd_message = amd.message or (_("no AMD GPU detected") if not amd.gpus else "")
    amd_lines = [amd_message[:1].upper() + amd_message[1:]]
    for amd_gpu in amd.gpus:
        amd_lines.append(_("node {node}: {target}  {name}").format(
            node=amd_gpu.node, target=amd_gpu.gfx_target, name=amd_gpu.name or "").rstrip())
    if amd.hsa_override_gfx_version and not amd.gpus:
        amd_lines.append(f"HSA_OVERRIDE_GFX_VERSION={amd.hsa_override_gfx_version}")
    return [line for line in amd_lines if line]


def _os_lines(profile: HostProfile) -> list[str]:
    osinfo = profile.os
    distro = " ".join(p for p in (osinfo.distro, osinfo.distro_version) if p) or _("unknown")
    os_lines = [
        _("{system}, {distro}, kernel {kernel}, glibc {glibc}").format(
            system=osinfo.system, distro=distro, kernel=osinfo.kernel or "?",
            glibc=osinfo.glibc or "?")
    ]
    if osinfo.wsl2:
        libcuda = osinfo.wsl_libcuda_path or _("not found in /usr/lib/wsl/lib")
        os_lines.append(_("WSL2: yes; the Windows driver's libcuda: {libcuda}").format(
            libcuda=libcuda))
    return os_lines


def _nvidia_lines(profile: HostProfile) -> list[str]:
    nvidia = profile.nvidia
    lines = []
    if nvidia.status == "ok":
        lines.append(
            _("driver {driver}, supports CUDA up to {cuda} (read with {source})").format(
                driver=nvidia.driver_version or "?", cuda=nvidia.cuda_driver_version or "?",
                source=nvidia.source)
        )
        lines += [unusable_gpu(gpu.index, gpu.error) for gpu in nvidia.gpus if gpu.error]
        return lines
    # the message is in the language of detection time (or English, from a saved profile)
    reason = nvidia.message.rstrip(".")
    if reason and (nvidia.status in _NO_GPU_STATUSES or reason.lower().startswith("no nvidia gpu")):
        lines.append(_sentence(reason[:1].upper() + reason[1:]))  # "No NVIDIA GPU detected ..."
    else:
        reason = reason or _("status {status}").format(status=nvidia.status)
        lines.append(_sentence(_("No NVIDIA GPU usable: {reason}").format(reason=reason)))
    lines.append(target_hint())
    return lines


def _sentence(text: str) -> str:
    """The text ending in a full stop (a Chinese one counts)."""
    return text if text.endswith((".", "。")) else text + "."


def _docker_lines(profile: HostProfile) -> list[str]:
    docker = profile.docker
    if docker.status != "ok":
        return [
            _("Docker is not usable ({status}): {message}").format(
                status=docker.status, message=docker.message),
            _("tfwizard builds inside Docker; fix this before building."),
        ]
    lines = [docker.message or _("Docker {version} answers").format(
        version=docker.server_version or "?")]
    lines.append(_("runtimes: {runtimes}").format(
        runtimes=", ".join(docker.runtimes) or _("none listed")))
    if docker.cdi_spec_dirs:
        lines.append(_("CDI spec dirs: {dirs}").format(dirs=", ".join(docker.cdi_spec_dirs)))
    gpu_passthrough = docker.nvidia_runtime or bool(docker.cdi_spec_dirs)
    if profile.nvidia.status == "ok" and not gpu_passthrough:
        lines.append(_(
            "no NVIDIA runtime: building works, but testing the wheel on the GPU inside Docker "
            "needs the NVIDIA Container Toolkit: sudo nvidia-ctk runtime configure "
            "--runtime=docker, then restart Docker."
        ))
    return lines


#: a run of white space, a run of printable ASCII (a word, never split), or one other character
_TOKENS = re.compile(r"\s+|[!-~]+|.")
#: punctuation that must not begin a line (it stays with the character before it)
_NO_LINE_START = frozenset("，。；：、？！）》」』】…%")


def _cells(text: str) -> int:
    """Terminal columns of text: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_line(line: str) -> str:
    """One line of a report section: indented, wrapped at the report's width."""
    return _wrap(line)


def _wrap(line: str) -> str:
    if _cells(line) != len(line):  # Chinese: wrap by columns, between any two characters
        return _wrap_wide(line)
    return textwrap.fill(
        line,
        width=WIDTH,
        initial_indent="  ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _wrap_wide(line: str) -> str:
    """``_wrap`` for text with wide characters (textwrap counts characters, not columns).

    Breaks between any two wide characters or at white space, never inside an ASCII word;
    punctuation that may not begin a line takes the character before it along."""
    lines: list[str] = []
    words: list[str] = []  # the tokens of the line being filled
    indent = "  "
    for token in _TOKENS.findall(line):
        if token.isspace():
            if words:
                words.append(token)
            continue
        if words and _cells(indent + "".join(words) + token) > WIDTH:
            carried = []
            if token[0] in _NO_LINE_START and len(words) > 1 and not words[-1].isspace():
                carried = [words.pop()]
            lines.append((indent + "".join(words)).rstrip())
            words, indent = carried, "    "
        words.append(token)
    lines.append((indent + "".join(words)).rstrip())
    return "\n".join(lines)


def _gib(value: int | None) -> str:
    return f"{value / 1024**3:.1f} GiB" if value is not None else "?"


def _yes_no(value: bool | None) -> str:
    return "" if value is None else (_("on") if value else _("off"))
