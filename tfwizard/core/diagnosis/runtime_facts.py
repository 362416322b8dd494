"""The runtime diagnosis from facts joined with the host: the expected backend, a GPU
that is not visible, the wheel's CUDA against the driver's (compat.py), compute
capabilities, WSL2, failed ops."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import cc as ccmod
from .. import compat
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase
from .runtime_rules import _Ctx

# -- facts joined with the host ----------------------------------------------------------------


def _is_gpu_build(probe: Mapping[str, Any]) -> bool:
    info = probe.get("build_info") or {}
    return bool(probe.get("built_with_cuda") or probe.get("built_with_rocm")
                or info.get("is_cuda_build") or info.get("is_rocm_build"))


def gpu_devices(probe: Mapping[str, Any]) -> list[str]:
    """The names of the GPU devices a probe result lists."""
    return [d.get("name", "") for d in probe.get("devices") or [] if d.get("type") == "GPU"]


def _driver_for(kb: KnowledgeBase, cuda: str) -> str:
    """The Linux driver a CUDA x.y toolkit shipped with (compat.driver_for_toolkit), else
    words saying which CUDA it must support."""
    return compat.driver_for_toolkit(kb, cuda) or _("one supporting CUDA {version}").format(
        version=cuda)


def _check_expectation(ctx: _Ctx) -> None:
    if ctx.expect not in ("cuda", "rocm"):
        return
    probe = ctx.probe
    if probe.get("tensorflow") is None:
        return  # import-failed says it all
    if not _is_gpu_build(probe):
        ctx.add("cpu-build-gpu-expected", evidence=[
            f"is_built_with_cuda() = {probe.get('built_with_cuda')}",
            f"build_info = {probe.get('build_info')}"])
    host_gpus = bool(ctx.host and (ctx.host.nvidia.gpus or ctx.host.amd.gpus))
    if not gpu_devices(probe) and not host_gpus:
        message = ctx.host.nvidia.message if ctx.host else _("host not detected")
        ctx.add("no-gpu-on-host", {"host_gpu_message": message or _("no GPU reported")},
                evidence=["tf.config.list_physical_devices('GPU') = []"])


def _check_gpu_visible(ctx: _Ctx) -> None:
    probe = ctx.probe
    if probe.get("tensorflow") is None or gpu_devices(probe) or not _is_gpu_build(probe):
        return
    if not (ctx.host and ctx.host.nvidia.gpus):
        return
    libs = {lib.get("name", "") for lib in probe.get("libraries") or []}
    if not any(n.startswith("libcudart") for n in libs):
        why = _("libcudart was never loaded: the [and-cuda] libraries are missing or not on "
                "the loader path.")
    elif not any(n.startswith("libcuda.so") for n in libs):
        why = _("The CUDA runtime loaded but the driver library libcuda did not.")
    else:
        why = _("The CUDA libraries loaded; the log lines above say why no device was "
                "registered.")
    if ctx.has("dlopen-failed") or ctx.has("dso-mismatch"):
        why += " " + _("See the diagnosis above.")
    ctx.add("no-gpu-visible", {"why": why},
            evidence=["tf.config.list_physical_devices('GPU') = []"])


def cuda_and_driver(probe: Mapping[str, Any], host: HostProfile | None
                    ) -> tuple[str, str, compat.Support] | None:
    """(the CUDA the wheel says it was built with, the CUDA the host's driver supports, both
    x.y, and how the one runs on the other: compat.cuda_support); None when either is
    unknown."""
    built = compat.major_minor((probe.get("build_info") or {}).get("cuda_version"))
    driver = compat.major_minor(host.nvidia.cuda_driver_version) if host is not None else None
    if built is None or driver is None:
        return None
    b, d = f"{built[0]}.{built[1]}", f"{driver[0]}.{driver[1]}"
    support = compat.cuda_support(d, b)
    return None if support is None else (b, d, support)


def _check_cuda_vs_driver(ctx: _Ctx) -> None:
    info = ctx.probe.get("build_info") or {}
    host = ctx.host
    found = cuda_and_driver(ctx.probe, host)
    if found is None or found[2] == "native" or host is None:
        return
    built, _driver_cuda, support = found
    values = {
        "cuda": info.get("cuda_version"), "driver": host.nvidia.driver_version or "?",
        "driver_cuda": host.nvidia.cuda_driver_version,
        "driver_needed": _driver_for(ctx.kb, built),
    }
    evidence = [f"build_info cuda_version = {info.get('cuda_version')}",
                _("driver {driver} supports CUDA {cuda}").format(
                    driver=host.nvidia.driver_version, cuda=host.nvidia.cuda_driver_version)]
    rule = "cuda-newer-than-driver" if support == "major" else "cuda-minor-newer-than-driver"
    ctx.add(rule, values, evidence=evidence)


def build_targets(probe: Mapping[str, Any]) -> list[str]:
    """The compute-capability tokens the wheel says it was built for ([] when unknown)."""
    info = probe.get("build_info") or {}
    raw = info.get("cuda_compute_capabilities")
    if isinstance(raw, str):
        raw = re.split(r"[,\s]+", raw)
    return [str(t) for t in raw or [] if str(t)]


def target_gpus(probe: Mapping[str, Any], host: HostProfile | None) -> list[tuple[str, str]]:
    """(label, compute capability) of this machine's NVIDIA GPUs: the host profile's, else
    what TensorFlow listed."""
    gpus: list[tuple[str, str]] = []
    if host:
        for g in host.nvidia.gpus:
            if g.compute_capability and not g.error:
                gpus.append((_("GPU {index} ({name})").format(index=g.index, name=g.name or "?"),
                             g.compute_capability))
    if not gpus:
        for d in probe.get("gpu_details") or []:
            if d.get("compute_capability"):
                gpus.append((f"{d.get('name')} ({d.get('device_name') or '?'})",
                             d["compute_capability"]))
    return gpus


def _check_cc(ctx: _Ctx) -> None:
    tokens = build_targets(ctx.probe)
    targets = ccmod.targets(tokens)
    if not targets:
        return
    built = ", ".join(tokens)
    for label, cc in target_gpus(ctx.probe, ctx.host):
        if ctx.has("ptx-jit") or ctx.has("cc-below-minimum"):
            # TF itself said so; the message diagnosis is the more precise one
            if any(cc in e for d in ctx.found for e in d.evidence):
                continue
        cov = ccmod.coverage(targets, cc, tegra_mismatch=ctx.kb.is_tegra(cc))
        values = {"gpu": label, "cc": cc, "sm": ccmod.cc_token(cc), "built": built,
                  "ptx": cov.ptx.token if cov.ptx else ""}
        evidence = [f"build_info cuda_compute_capabilities = {tokens}", f"{label}: CC {cc}"]
        if not cov.runs:
            ctx.add("cc-not-in-build", values, evidence=evidence, recipe_fix=ctx.cc_fix(cc))
        elif cov.needs_jit:
            ctx.add("cc-ptx-only", values, evidence=evidence, recipe_fix=ctx.cc_fix(cc))


def _check_wsl(ctx: _Ctx) -> None:
    if not ctx.wsl or not _is_gpu_build(ctx.probe) or gpu_devices(ctx.probe):
        return
    libcuda = [lib for lib in ctx.probe.get("libraries") or []
               if str(lib.get("name", "")).startswith("libcuda.so")]
    if any(lib.get("origin") == "wsl" for lib in libcuda):
        return
    if libcuda:
        state = _("This process loaded {path} instead: a Linux driver installed inside "
                  "WSL2.").format(path=libcuda[0].get("path"))
    else:
        state = _("No libcuda was loaded at all: {folder} is not on the loader path.").format(
            folder="/usr/lib/wsl/lib")
    ctx.add("wsl-libcuda-path", {"libcuda_state": state},
            evidence=[str(lib.get("path")) for lib in libcuda])


def _check_ops(ctx: _Ctx) -> None:
    for op in ctx.probe.get("ops") or []:
        if op.get("ok"):
            continue
        device = str(op.get("device", "?"))
        rule = "gpu-op-failed" if ":GPU:" in device.upper() else "cpu-op-failed"
        error = op_error(op)
        ctx.add(rule, {"device": device, "error": error}, evidence=[error])


def op_error(op: Mapping[str, Any]) -> str:
    """Why a probe operation failed, in words (a wrong value, the exception, or no result)."""
    value, expected = op.get("value"), op.get("expected")
    if isinstance(value, (int, float)) and isinstance(expected, (int, float)):
        # it ran but computed the wrong number (probe_tf.py's own "error" text is English)
        return _("wrong result: {value!r}, expected {expected!r}").format(
            value=value, expected=expected)
    return str(op.get("error") or _("no result"))


