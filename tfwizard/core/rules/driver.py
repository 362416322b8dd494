"""Rules on the NVIDIA driver of the target: new enough for the toolkit, and for the GPUs.
Whether a driver meets a need is compat.py's decision (WSL2 included)."""

from __future__ import annotations

from .. import cc as ccmod
from .. import compat
from ..findings import Fix
from ..host import HostProfile
from ..i18n import _
from .capabilities import add_cc_fix
from .context import Ctx, cc_targets


def rule_driver(ctx: Ctx) -> None:
    """The target's NVIDIA driver must be new enough for the toolkit and know its GPUs."""
    r, t = ctx.recipe, ctx.target
    if r.backend.kind != "cuda" or t is None or not r.cuda.version:
        return
    nv = t.nvidia
    if nv.status == "mismatch":
        ctx.add("DRIVER_MISMATCH", "error",
                _("The target's NVIDIA kernel module and user library come from different "
                  "driver builds (Driver/library version mismatch): nothing CUDA will run until "
                  "it is rebooted or one driver version is reinstalled."),
                ["tf-gpu-device", "nvml-api"], "target.host_profile")
        return
    if not nv.driver_version:
        if ctx.target_is_build_host and not nv.gpus:
            ctx.add("NO_GPU_HERE", "info",
                    _("This machine has no NVIDIA GPU: that is fine for building (hermetic "
                      "CUDA needs no GPU), but nothing can check the machine that will run the "
                      "wheel. Save its profile there with `tfwizard detect --json > target.json`"
                      " and set target.host_profile (or pass --target)."),
                    ["xla-hermetic-cuda"], "target.host_profile")
        return
    cv = compat.as_version(r.cuda.version)
    floor = ctx.kb.driver_floor(cv.major) if cv is not None else None
    if cv is None or floor is None:
        return
    if compat.runs_major(ctx.kb, t, r.cuda.version) is False:
        ctx.add("DRIVER_TOO_OLD", "error", _too_old_text(ctx, t, cv.major), floor.sources,
                "cuda.version", _older_cuda_fix(ctx, t))
        return
    _ptx_findings(ctx, t)


def _too_old_text(ctx: Ctx, t: HostProfile, major: int) -> str:
    nv, here = t.nvidia, ctx.target_is_build_host
    supported = nv.cuda_driver_version or ""
    if t.os.wsl2:
        text = _("CUDA {major}.x needs a driver that supports CUDA {major}.0; WSL2 uses the "
                 "Windows driver, {driver} on {where}, which supports CUDA up to {supported}. "
                 "Update the NVIDIA driver on Windows, or build with an older CUDA.")
        return text.format(major=major, driver=nv.driver_version, supported=supported,
                           where=_("this machine") if here else _("the target machine"))
    system = t.os.system
    needed = compat.driver_floor(ctx.kb, f"{major}.0", system)
    if supported and here:
        text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; this machine has "
                 "{driver} (supports CUDA up to {supported}). Upgrade the driver there, or "
                 "build with an older CUDA.")
    elif supported:
        text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; the target "
                 "machine has {driver} (supports CUDA up to {supported}). Upgrade the "
                 "driver there, or build with an older CUDA.")
    elif here:
        text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; this machine has "
                 "{driver}. Upgrade the driver there, or build with an older CUDA.")
    else:
        text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; the target "
                 "machine has {driver}. Upgrade the driver there, or build with an older "
                 "CUDA.")
    return text.format(major=major, needed=needed,
                       os="Windows" if system == "windows" else "Linux",
                       driver=nv.driver_version, supported=supported)


def _older_cuda_fix(ctx: Ctx, t: HostProfile) -> Fix | None:
    """The newest CUDA of the release's hermetic list that the driver runs, when the
    driver says which CUDA it supports."""
    rel = ctx.release
    if not t.nvidia.cuda_driver_version or rel is None or not rel.hermetic_cuda:
        return None
    redist = ctx.kb.redist.get(rel.cuda_list or "")
    ok = [c for c in (redist.cuda if redist else ()) if compat.runs_major(ctx.kb, t, c)]
    if not ok:
        return None
    return Fix(_("Use CUDA {version} (runs on driver {driver})")
               .format(version=ok[-1], driver=t.nvidia.driver_version), {"cuda.version": ok[-1]})


def _ptx_findings(ctx: Ctx, t: HostProfile) -> None:
    """GPUs that must JIT the PTX, which needs a driver as new as the toolkit."""
    r, here = ctx.recipe, ctx.target_is_build_host
    nv = t.nvidia
    # PTX: minor-version compatibility does not cover JIT of PTX from a newer toolkit
    targets = cc_targets(ctx)
    if not targets or compat.runs_jit(ctx.kb, t, r.cuda.version) is not False:
        return
    needed, driver = compat.driver_for_toolkit(ctx.kb, r.cuda.version), nv.driver_version
    if t.os.wsl2:  # the Windows driver's number means nothing here: say the CUDA versions
        needed = f"CUDA {compat.xy(r.cuda.version) or r.cuda.version}"
        driver = f"{nv.driver_version} (CUDA {nv.cuda_driver_version or '?'})"
    for gpu in nv.gpus:
        if gpu.error or not gpu.compute_capability:
            continue
        cov = ccmod.coverage(targets, gpu.compute_capability,
                             tegra_mismatch=ctx.kb.is_tegra(gpu.compute_capability))
        if cov.needs_jit:
            text = _("GPU {index} ({name}) has no cubin in this build and must JIT the PTX, "
                     "which needs a driver at least as new as the toolkit (CUDA {cuda} -> >= "
                     "{needed}); this machine has {driver}.") if here else \
                _("GPU {index} ({name}) has no cubin in this build and must JIT the PTX, "
                  "which needs a driver at least as new as the toolkit (CUDA {cuda} -> >= "
                  "{needed}); the target machine has {driver}.")
            ctx.add("PTX_DRIVER", "error",
                    text.format(index=gpu.index, name=gpu.name or gpu.compute_capability,
                                cuda=r.cuda.version, needed=needed,
                                driver=driver),
                    ["cuda-compat", "cuda-release-notes"], "cuda.compute_capabilities",
                    add_cc_fix(ctx, gpu.compute_capability))
