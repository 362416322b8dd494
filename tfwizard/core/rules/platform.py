"""Rules on the platform: OS, CPU architecture, and what the wheel will run on."""

from __future__ import annotations

from packaging.version import Version

from ..compat import as_version
from ..findings import Fix
from ..i18n import _, translate
from .context import Ctx


def rule_platform(ctx: Ctx) -> None:
    """The OS and CPU architecture must be ones the release builds on and the wheel runs on."""
    r, rel, t, b = ctx.recipe, ctx.release, ctx.target, ctx.build
    windows = ctx.kb.platforms["windows"]
    for host, is_build in ((b, True), (t, False)):
        if host is None or (host is t and ctx.target_is_build_host and not is_build):
            continue
        if r.backend.kind == "cuda" and host.os.system == "windows" and rel is not None \
                and not rel.windows_cuda:
            text = _("The build host is native Windows: {message}") if is_build else \
                _("The target is native Windows: {message}")
            ctx.add("WINDOWS_CUDA", "error",
                    text.format(message=translate(windows["message"])),
                    windows["sources"], "backend.kind")
        if r.is_gpu and host.os.system == "darwin":
            ctx.add("MACOS_GPU", "error",
                    _("The build host is macOS: TensorFlow has no GPU support on macOS.")
                    if is_build else
                    _("The target is macOS: TensorFlow has no GPU support on macOS."),
                    ["tf-source-md"], "backend.kind",
                    Fix(_("Build for CPU"), {"backend.kind": "cpu"}))
    if t is not None and t.os.wsl2 and r.backend.kind == "cuda":
        advice = translate(ctx.kb.platforms["wsl2"]["advice"])
        ctx.add("WSL2", "info",
                _("{advice} (found {path})").format(advice=advice, path=t.os.wsl_libcuda_path)
                if t.os.wsl_libcuda_path else advice,
                ctx.kb.platforms["wsl2"]["sources"], "target.host_profile")
    if r.backend.kind == "rocm" and (r.cuda.version or r.cuda.compute_capabilities):
        ctx.add("ROCM_CUDA_EXCLUSIVE", "warning",
                _("[cuda] settings are ignored: CUDA and ROCm are mutually exclusive in one "
                  "build."),
                ["tf-configure-py"], "backend.kind")
    _gpu_vendor(ctx)
    if r.backend.kind == "cpu" and t is not None and t.nvidia.gpus and not ctx.target_is_build_host:
        ctx.add("CPU_WITH_GPU_TARGET", "warning",
                _("The target machine has NVIDIA GPUs but the recipe builds a CPU-only wheel."),
                ["tf-pip-md"], "backend.kind", Fix(_("Build for CUDA"), {"backend.kind": "cuda"}))
    if rel is not None and t is not None and t.os.glibc and t.os.system == "linux":
        if (as_version(t.os.glibc) or Version("0")) < Version(rel.glibc_floor):
            ctx.add("GLIBC_TOO_OLD", "error",
                    _("TensorFlow {version} wheels are {manylinux} (glibc >= {floor}); the "
                      "target has glibc {glibc}.").format(version=rel.version,
                                                          manylinux=rel.manylinux,
                                                          floor=rel.glibc_floor,
                                                          glibc=t.os.glibc),
                    ["pypi-wheels"], "tensorflow.version")
    _arch_findings(ctx)


def _gpu_vendor(ctx: Ctx) -> None:
    """A GPU wheel for the other vendor's GPUs cannot use any GPU of the target (each code
    spelled out in its own call, where the rule lint finds it)."""
    r, t = ctx.recipe, ctx.target
    if t is None:
        return
    nvidia, amd = bool(t.nvidia.gpus), bool(t.amd.gpus)
    where = _("this machine") if ctx.target_is_build_host else _("the target machine")
    sources = ["tf-pip-md", "rocm-matrix"]
    if r.backend.kind == "rocm" and nvidia and not amd:
        ctx.add("ROCM_FOR_NVIDIA_TARGET", "error", _(
            "A ROCm wheel runs only on AMD GPUs, and {where} has only NVIDIA GPUs: "
            "TensorFlow would see none of them.").format(where=where), sources,
            "backend.kind", Fix(_("Build for CUDA"), {"backend.kind": "cuda"}))
    elif r.backend.kind == "cuda" and amd and not nvidia:
        ctx.add("CUDA_FOR_AMD_TARGET", "error", _(
            "A CUDA wheel runs only on NVIDIA GPUs, and {where} has only AMD GPUs: "
            "TensorFlow would see none of them.").format(where=where), sources,
            "backend.kind", Fix(_("Build for ROCm"), {"backend.kind": "rocm"}))


def _arch_findings(ctx: Ctx) -> None:
    r, t, b = ctx.recipe, ctx.target, ctx.build
    image = r.build.image
    arm_image = "arm64" in image or "aarch64" in image
    if t is not None and b is not None and t.cpu.arch != b.cpu.arch and not ctx.target_is_build_host:
        ctx.add("ARCH_MISMATCH", "error",
                _("The build host is {build} and the target is {target}: tfwizard builds "
                  "natively; run the build on a {target} machine (TF's cross-compile configs "
                  "are not supported here).").format(build=b.cpu.arch, target=t.cpu.arch),
                ["tf-ci-official"], "target.host_profile")
    arch = (t or b).cpu.arch if (t or b) is not None else None  # type: ignore[union-attr]
    if arch == "aarch64" or arm_image:
        aarch = ctx.kb.platforms["aarch64"]
        if r.backend.kind == "cuda":
            ctx.add("AARCH64_CUDA", "warning", translate(aarch["note"]), aarch["sources"],
                    "backend.kind")
        if arch == "aarch64" and not arm_image and not r.build.image == "":
            ctx.add("AARCH64_IMAGE", "warning",
                    _("The build image {image} may be x86_64 only; TF's arm64 image is "
                      "{arm_image}.").format(image=image, arm_image=aarch["image"]),
                    aarch["sources"], "build.image",
                    Fix(_("Use TF's arm64 build image"), {"build.image": aarch["image"]}))
        built_on = (b or t).cpu.arch if (b or t) is not None else None  # type: ignore[union-attr]
        if built_on == "aarch64" and r.build.image == "":
            # plan.make_plan picks this image itself when the build host is aarch64
            ctx.add("AARCH64_IMAGE", "info",
                    _("build.image is empty: on aarch64 the plan uses TF's arm64 CI image "
                      "{arm_image} (the releases' default images are x86_64 only).")
                    .format(arm_image=aarch["image"]),
                    aarch["sources"], "build.image",
                    Fix(_("Pin TF's arm64 build image in the recipe"),
                        {"build.image": aarch["image"]}))
        cpu = (t or b).cpu if (t or b) is not None else None  # type: ignore[union-attr]
        if cpu is not None and "sve" in cpu.features and not any(
                "march" in f or "mcpu" in f for f in r.build.opt_flags):
            ctx.add("AARCH64_SVE", "info",
                    _("The target CPU has SVE; -mcpu=native (or -march=armv8.2-a+sve) in "
                      "build.opt_flags would use it, at the cost of portability."),
                    aarch["sources"], "build.opt_flags")
