"""Rules on the NVIDIA driver of the target: new enough for the toolkit, and for the GPUs."""

from __future__ import annotations

from packaging.version import Version

from .. import cc as ccmod
from ..findings import Fix
from ..i18n import _
from .capabilities import add_cc_fix
from .context import Ctx, as_version, cc_targets


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
    cv = as_version(r.cuda.version)
    if cv is None:
        return
    floor = ctx.kb.driver_floor(cv.major)
    system = t.os.system
    driver = as_version(nv.driver_version)
    if floor is None or driver is None:
        return
    needed = floor.windows if system == "windows" and floor.windows else floor.linux
    here = ctx.target_is_build_host
    if driver < Version(needed):
        supported = nv.cuda_driver_version or ""
        fix = None
        rel = ctx.release
        if supported and rel is not None and rel.hermetic_cuda:
            redist = ctx.kb.redist.get(rel.cuda_list or "")
            ok = [c for c in (redist.cuda if redist else ()) if _floor_ok(ctx, c, driver, system)]
            if ok:
                fix = Fix(_("Use CUDA {version} (runs on driver {driver})")
                          .format(version=ok[-1], driver=nv.driver_version),
                          {"cuda.version": ok[-1]})
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
        ctx.add("DRIVER_TOO_OLD", "error",
                text.format(major=cv.major, needed=needed,
                            os="Windows" if system == "windows" else "Linux",
                            driver=nv.driver_version, supported=supported),
                floor.sources, "cuda.version", fix)
        return
    _ptx_findings(ctx, driver)


def _ptx_findings(ctx: Ctx, driver: Version) -> None:
    """GPUs that must JIT the PTX, which needs a driver as new as the toolkit."""
    r, t, here = ctx.recipe, ctx.target, ctx.target_is_build_host
    assert t is not None
    nv = t.nvidia
    # PTX: minor-version compatibility does not cover JIT of PTX from a newer toolkit
    targets = cc_targets(ctx)
    tk_driver = ctx.kb.driver_for_toolkit(r.cuda.version)
    if not targets or tk_driver is None or driver >= Version(tk_driver):
        return
    for gpu in t.nvidia.gpus:
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
                                cuda=r.cuda.version, needed=tk_driver,
                                driver=nv.driver_version),
                    ["cuda-compat", "cuda-release-notes"], "cuda.compute_capabilities",
                    add_cc_fix(ctx, gpu.compute_capability))


def _floor_ok(ctx: Ctx, cuda: str, driver: Version, system: str) -> bool:
    v = as_version(cuda)
    floor = ctx.kb.driver_floor(v.major) if v else None
    if floor is None:
        return False
    needed = floor.windows if system == "windows" and floor.windows else floor.linux
    return driver >= Version(needed)
