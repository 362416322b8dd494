"""The official wheel against the NVIDIA GPUs and driver: coverage (SASS, PTX JIT) and
the driver (compat.py decides whether it meets a need)."""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from .. import cc as ccmod
from .. import compat
from ..findings import Finding, Remedy
from ..host import NvidiaGpu
from ..i18n import _
from ..knowledge import KnowledgeBase, OfficialWheel, Release
from .context import _Ctx, _profile_remedy
from .cuda_build import _cuda_build, _sm

# -- NVIDIA: driver and GPUs ------------------------------------------------------------------


def _wheel_cuda(wheel: OfficialWheel) -> str:
    return wheel.build_cuda or wheel.and_cuda_cuda or ""


def _gpu_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel, requirement: str) -> list[Finding]:
    nv = ctx.machine.nvidia
    if nv.status == "mismatch":
        return [Finding(
            "DRIVER_MISMATCH", "error",
            _("The NVIDIA kernel module and driver library on {where} come from different driver "
              "versions (Driver/library version mismatch): no CUDA program runs until the "
              "machine is rebooted or one driver version is reinstalled.").format(
                where=ctx.where),
            facts={"status": nv.status}, sources=("nvml-api", "dso-mismatch-issues"),
            remedies=(Remedy("reboot", _("Reboot (or reinstall one driver version) so the kernel "
                                      "module and the driver library match")),))]
    gpus = [g for g in nv.gpus if g.error is None and g.compute_capability]
    if not gpus:
        cpu_req = f"tensorflow-cpu=={wheel.release}"
        cpu_wheel = Remedy("cpu-wheel", _("Install the CPU wheel instead: {requirement}").format(
            requirement=cpu_req), requirement=cpu_req)
        if not ctx.on_target:  # the GPU machine may be another one: that is not known
            return [Finding(
                "NO_GPU_ON_HOST", "warning",
                _("No NVIDIA GPU is usable on this machine ({detail}). If TensorFlow will run "
                  "on another machine, give its profile as the target; here the GPU wheel would "
                  "run on the CPU only.").format(detail=nv.message or nv.status),
                facts={"status": nv.status}, sources=("nvml-api",),
                remedies=(_profile_remedy(), cpu_wheel))]
        return [Finding(
            "NO_NVIDIA_GPU", "error",
            _("No NVIDIA GPU is usable on the target machine ({detail}): the GPU wheel would "
              "run on the CPU only.").format(detail=nv.message or nv.status),
            facts={"status": nv.status}, sources=("nvml-api",), remedies=(cpu_wheel,))]
    out: list[Finding] = []
    for gpu in nv.gpus:
        if gpu.error is not None:
            out.append(Finding("GPU_SKIPPED", "info",
                              _("GPU {index} reports an error ({error}) and is left out.").format(
                                  index=gpu.index, error=gpu.error),
                              facts={"gpu": gpu.index, "error": gpu.error},
                              sources=("nvml-api",)))
    out += _driver_findings(ctx, rel, wheel, [g.compute_capability or "" for g in gpus])
    for gpu in gpus:
        out.append(_gpu_coverage(ctx, rel, wheel, gpu, [g.compute_capability or "" for g in gpus]))
    if not wheel.and_cuda:
        out.append(Finding(
            "LOCAL_CUDA_NEEDED", "warning",
            _("The {release} wheel has no [and-cuda] extra (it came with 2.14): {where} needs CUDA "
              "{cuda} and cuDNN {cudnn} installed and on the library path.").format(
                release=rel.version, where=ctx.where, cuda=_wheel_cuda(wheel),
                cudnn=wheel.build_cudnn or "-"),
            facts={"cuda": _wheel_cuda(wheel), "cudnn": wheel.build_cudnn,
                   "release": rel.version},
            sources=("pypi-wheel-files", "tf-pip-md")))
    return out


def _driver_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel,
                     ccs: list[str]) -> list[Finding]:
    nv = ctx.machine.nvidia
    cuda = _wheel_cuda(wheel)
    cuda_mm = compat.major_minor(cuda)
    if cuda_mm is None:
        return []
    floor_cuda = f"{cuda_mm[0]}.0"
    meets = compat.driver_meets(ctx.machine, wheel.driver_min, floor_cuda)
    facts: dict[str, Any] = {"driver": nv.driver_version, "supported": nv.cuda_driver_version,
                             "cuda": cuda, "needed": wheel.driver_min,
                             "full": wheel.driver_full, "release": rel.version}
    sources = ("cuda-compat", "cuda-release-notes", "pypi-wheel-files")
    if meets is None:
        return []
    needed = compat.needed_text(ctx.machine, wheel.driver_min, floor_cuda)
    if not meets:
        full = compat.needed_text(ctx.machine, wheel.driver_full, f"{cuda_mm[0]}.{cuda_mm[1]}")
        fixes: list[Remedy] = [Remedy("driver", _("Update the NVIDIA driver to {needed} or newer "
                                                 "({full} or newer also lets XLA compile in "
                                                 "parallel)").format(needed=needed, full=full))]
        build, evidence = _cuda_build(ctx, rel, ccs, purpose="driver")
        if build is not None:
            fixes.append(build)
        return [Finding(
            "DRIVER_TOO_OLD", "error",
            _("The NVIDIA driver on {where} is {driver} (CUDA up to {supported}); the {release} "
              "wheel's CUDA {cuda} needs {needed} or newer. TensorFlow would find no usable GPU; "
              "a newer libcuda loaded over the old kernel module (from a CUDA toolkit or a "
              "cuda-compat package) shows as \"kernel version ... does not match DSO "
              "version\".").format(where=ctx.where, driver=nv.driver_version or "-",
                                   supported=nv.cuda_driver_version or "-",
                                   release=rel.version, cuda=cuda, needed=needed),
            evidence=(_("Driver {driver} < {needed} (CUDA {major}.x minor-version compatibility).").format(
                driver=nv.driver_version or "-", needed=needed, major=cuda_mm[0]),
             *evidence),
            facts=facts, sources=sources + ("dso-mismatch-issues",), remedies=tuple(fixes))]
    out = [Finding("DRIVER_OK", "info",
                  _("The NVIDIA driver on {where}, {driver}, runs the {release} wheel's CUDA "
                    "{cuda} (it needs {needed} or newer).").format(
                      where=ctx.where, driver=nv.driver_version or "-", release=rel.version,
                      cuda=cuda, needed=needed),
                  facts=facts, sources=sources)]
    full_cuda = f"{cuda_mm[0]}.{cuda_mm[1]}"
    if wheel.driver_full and compat.driver_meets(ctx.machine, wheel.driver_full, full_cuda) is False:
        full = compat.needed_text(ctx.machine, wheel.driver_full, full_cuda)
        out.append(Finding(
            "DRIVER_OLDER_THAN_PTXAS", "info",
            _("The NVIDIA driver on {where} ({driver}) is older than CUDA {cuda}'s ({full}): the "
              "wheel runs, but XLA disables parallel compilation (\"driver is older than the "
              "ptxas version\"); {full} or newer avoids that.").format(
                where=ctx.where, driver=nv.driver_version or "-", cuda=cuda, full=full),
            facts=facts, sources=("xla-ptxas-issues", "cuda-release-notes")))
    return out


def _jit_cache(kb: KnowledgeBase) -> dict[str, Any]:
    return dict(kb.raw.get("advise", {}).get("jit_cache", {}))


def _jit_failure(kb: KnowledgeBase, cc: str, rel: Release) -> dict[str, Any] | None:
    from packaging.specifiers import SpecifierSet

    for entry in kb.raw.get("advise", {}).get("jit_failure", []):
        if cc in entry.get("ccs", []) and Version(rel.version) in SpecifierSet(
                entry.get("releases", "")):
            return dict(entry)
    return None


def _gpu_coverage(ctx: _Ctx, rel: Release, wheel: OfficialWheel, gpu: NvidiaGpu,
                  ccs: list[str]) -> Finding:
    cc = gpu.compute_capability or ""
    name = gpu.name or f"CC {cc}"
    targets = [t for t in (ccmod.parse_target(x) for x in wheel.sass + wheel.ptx) if t]
    cov = ccmod.coverage(targets, cc, tegra_mismatch=ctx.kb.is_tegra(cc))
    sass = ", ".join(wheel.sass) or "-"
    ptx = ", ".join(wheel.ptx) or "-"
    seen = _("GPU {index} ({name}) is CC {cc}; the {release} wheel carries SASS {sass} and PTX "
             "{ptx}.").format(index=gpu.index, name=name, cc=cc, release=rel.version, sass=sass,
                              ptx=ptx)
    facts: dict[str, Any] = {"gpu": gpu.index, "name": gpu.name, "cc": cc,
                             "sass": list(wheel.sass), "ptx": list(wheel.ptx),
                             "release": rel.version}
    sources = ("pypi-wheel-files", "cuda-pg-compat")
    if cov.cubin is not None:
        evidence = [seen]
        if cov.cubin.cc != cc:
            evidence.append(_("A cubin for sm_{major}{minor} runs on GPUs of major {major} with "
                              "minor {minor} or higher.").format(major=cov.cubin.major,
                                                                 minor=cov.cubin.minor))
        if cov.cubin.token in wheel.sass_partial and cov.ptx is not None:
            return _partly_covered(ctx, rel, wheel, gpu, cov, evidence,
                                   {**facts, "cubin": cov.cubin.token}, ccs)
        return Finding("GPU_COVERED", "info",
                      _("GPU {index} ({name}) runs the wheel's {cubin} cubin.").format(
                          index=gpu.index, name=name, cubin=cov.cubin.token),
                      evidence=tuple(evidence), facts={**facts, "cubin": cov.cubin.token}, sources=sources)
    build, build_evidence = _cuda_build(ctx, rel, ccs, purpose="gpu")
    build_fixes = (build,) if build is not None else ()
    if cov.ptx is None:
        return _not_covered(rel, gpu, name, (seen, *build_evidence), facts,
                            sources + ("tf-gpu-device",), build_fixes)
    cuda = _wheel_cuda(wheel)
    cuda_mm = compat.major_minor(cuda) or (0, 0)
    jit_cuda = f"{cuda_mm[0]}.{cuda_mm[1]}"
    facts.update({"jit_from": cov.ptx.token, "driver": ctx.machine.nvidia.driver_version,
                  "driver_ptx": wheel.driver_ptx, "ptx_cuda": cuda})
    needed = compat.needed_text(ctx.machine, wheel.driver_ptx, jit_cuda)
    if compat.driver_meets(ctx.machine, wheel.driver_ptx, jit_cuda) is False:
        return Finding(
            "GPU_PTX_DRIVER", "error",
            _("GPU {index} ({name}) has no cubin in the {release} wheel and must JIT-compile its "
              "PTX {ptx}, which needs a driver of CUDA {cuda} or newer ({needed}); the driver on "
              "{where} is {driver}.").format(index=gpu.index, name=name, release=rel.version,
                                             ptx=cov.ptx.token, cuda=cuda, needed=needed,
                                             where=ctx.where,
                                             driver=ctx.machine.nvidia.driver_version or "-"),
            evidence=(seen, *build_evidence), facts=facts, sources=sources + ("cuda-compat", "cuda-release-notes"),
            remedies=(Remedy("driver", _("Update the NVIDIA driver to {needed} or newer").format(
                needed=needed)),) + build_fixes)
    evidence, cost, env = _jit_cost(ctx, cov.ptx.token, cc, cuda, needed, seen, facts)
    jit_sources = sources + ("cuda-env-vars", "tf-gpu-device", "xla-ptxas-issues")
    failure = _jit_failure(ctx.kb, cc, rel)
    if failure is not None:
        facts["reported_failing"] = True
        facts["reported_error"] = failure.get("error")
        return Finding(
            "GPU_PTX_JIT_FAILS", "error",
            _("GPU {index} ({name}) has no cubin in the {release} wheel. JIT-compiling its PTX "
              "{ptx} is possible by NVIDIA's rules, but reported to fail on CC {cc} with these "
              "wheels ({error} from TensorFlow's generated kernels). {cost}").format(
                index=gpu.index, name=name, release=rel.version, ptx=cov.ptx.token, cc=cc,
                error=failure.get("error", "-"), cost=cost),
            evidence=(*evidence, *build_evidence), facts=facts,
            sources=jit_sources + tuple(failure.get("sources", ())), remedies=build_fixes)
    return Finding(
        "GPU_PTX_JIT", "warning",
        _("GPU {index} ({name}) has no cubin in the {release} wheel and runs only by "
          "JIT-compiling its PTX {ptx}. {cost}").format(index=gpu.index, name=name,
                                                       release=rel.version, ptx=cov.ptx.token,
                                                       cost=cost),
        evidence=(*evidence, *build_evidence), facts=facts, sources=jit_sources, remedies=build_fixes + (env,))


def _not_covered(rel: Release, gpu: NvidiaGpu, name: str, evidence: tuple[str, ...],
                 facts: dict[str, Any], sources: tuple[str, ...],
                 build_fixes: tuple[Remedy, ...]) -> Finding:
    """A GPU that neither a cubin nor the PTX of the wheel serves."""
    cc = gpu.compute_capability or ""
    parsed = ccmod.parse_cc(cc) or (0, 0)
    return Finding(
        "GPU_NOT_COVERED", "error",
        _("GPU {index} ({name}) cannot run the {release} wheel: it has no cubin of major "
          "{major} with a minor of {minor} or lower, and no PTX of CC {cc} or lower; "
          "TensorFlow would ignore this GPU.").format(index=gpu.index, name=name,
                                                      release=rel.version,
                                                      major=parsed[0], minor=parsed[1],
                                                      cc=cc),
        evidence=evidence, facts=facts, sources=sources, remedies=build_fixes)


def _jit_cost(ctx: _Ctx, ptx: str, cc: str, cuda: str, needed: str, seen: str,
              facts: dict[str, Any]) -> tuple[list[str], str, Remedy]:
    """What JIT-compiling PTX `ptx` for CC `cc` costs: the evidence, the cost in words, the
    cache setting that keeps every kernel; the JIT cache's facts go into `facts`."""
    cache = _jit_cache(ctx.kb)
    cache_mib = int(cache.get("default_bytes", 268435456)) // 2**20
    max_bytes = int(cache.get("max_bytes", 4294967296))
    minutes = int(cache.get("tf_warning_minutes", 30))
    path = str(cache.get("path_linux", "~/.nv/ComputeCache"))
    facts.update({"cache_path": path, "cache_default_bytes": cache_mib * 2**20,
                  "cache_max_bytes": max_bytes, "jit_minutes": minutes})
    evidence = [seen, _("PTX {ptx} can be JIT-compiled for CC {cc} (PTX runs on any GPU of its "
                        "CC or higher) by a driver of CUDA {cuda} or newer: the driver is "
                        "{driver}, it needs {needed}.").format(
        ptx=ptx, cc=cc, cuda=cuda, driver=ctx.machine.nvidia.driver_version or "-",
        needed=needed)]
    arch = ctx.kb.arch(_sm(cc))
    cuda_v = compat.as_version(cuda)
    if arch is not None and cuda_v is not None and cuda_v < Version(arch.min_cuda):
        evidence.append(_("XLA compiles its own kernels with the ptxas of CUDA {cuda} (from "
                          "[and-cuda]), which cannot target sm_{sm} (that needs CUDA {needed}): "
                          "it falls back to the driver's compiler.").format(
            cuda=cuda, sm=_sm(cc), needed=arch.min_cuda))
    cost = _("The first run compiles every kernel (TensorFlow warns: {minutes} minutes or "
             "longer), cached in {path} up to CUDA_CACHE_MAXSIZE (default {mib} MiB, at most "
             "{max_mib} MiB); kernels that do not fit, and all of them after a driver update, "
             "are compiled again.").format(minutes=minutes, path=path, mib=cache_mib,
                                          max_mib=max_bytes // 2**20)
    env = Remedy("env", _("Set CUDA_CACHE_MAXSIZE={bytes} (the most the driver allows) so the JIT "
                          "cache keeps every compiled kernel").format(bytes=max_bytes))
    return evidence, cost, env


def _partly_covered(ctx: _Ctx, rel: Release, wheel: OfficialWheel, gpu: NvidiaGpu,
                    cov: ccmod.Coverage, evidence: list[str], facts: dict[str, Any],
                    ccs: list[str]) -> Finding:
    """A GPU whose cubin only TF's hand-written kernels carry: the MLIR-generated kernels
    JIT-compile the PTX on first use, which needs a driver as new as the wheel's CUDA."""
    assert cov.cubin is not None and cov.ptx is not None
    name = gpu.name or f"CC {gpu.compute_capability}"
    cuda = _wheel_cuda(wheel)
    cuda_mm = compat.major_minor(cuda) or (0, 0)
    jit_cuda = f"{cuda_mm[0]}.{cuda_mm[1]}"
    needed = compat.needed_text(ctx.machine, wheel.driver_ptx, jit_cuda)
    path = str(_jit_cache(ctx.kb).get("path_linux", "~/.nv/ComputeCache"))
    facts = {**facts, "generated_kernels_jit_from": cov.ptx.token, "driver_ptx": wheel.driver_ptx,
             "driver": ctx.machine.nvidia.driver_version, "ptx_cuda": cuda}
    evidence.append(_("TensorFlow's hand-written kernels carry {cubin} cubins; its MLIR-generated "
                      "kernels carry only PTX {ptx} (tf-wheel-fatbins).").format(
        cubin=cov.cubin.token, ptx=cov.ptx.token))
    sources = ("pypi-wheel-files", "tf-wheel-fatbins", "cuda-pg-compat", "cuda-compat")
    if compat.driver_meets(ctx.machine, wheel.driver_ptx, jit_cuda) is False:
        build, build_evidence = _cuda_build(ctx, rel, ccs, purpose="gpu")
        return Finding(
            "GPU_PTX_DRIVER", "error",
            _("GPU {index} ({name}) runs the {release} wheel's {cubin} cubins, but TensorFlow's "
              "generated kernels must JIT-compile PTX {ptx}, which needs a driver of CUDA {cuda} "
              "or newer ({needed}); the driver on {where} is {driver}.").format(
                index=gpu.index, name=name, release=rel.version, cubin=cov.cubin.token,
                ptx=cov.ptx.token, cuda=cuda, needed=needed, where=ctx.where,
                driver=ctx.machine.nvidia.driver_version or "-"),
            evidence=(*evidence, *build_evidence), facts=facts, sources=sources + ("cuda-release-notes",),
            remedies=(Remedy("driver", _("Update the NVIDIA driver to {needed} or newer").format(
                needed=needed)),) + ((build,) if build is not None else ()))
    return Finding(
        "GPU_COVERED", "info",
        _("GPU {index} ({name}) runs the wheel's {cubin} cubins; TensorFlow's generated kernels "
          "are JIT-compiled from PTX {ptx} on first use (a one-time cost per kernel, kept in "
          "{path}; it needs a driver of CUDA {cuda} or newer, {needed}).").format(
            index=gpu.index, name=name, cubin=cov.cubin.token, ptx=cov.ptx.token, path=path,
            cuda=cuda, needed=needed),
        evidence=tuple(evidence), facts=facts, sources=sources)


