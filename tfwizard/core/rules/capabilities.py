"""Rules on the CUDA compute capabilities: buildable, and covering the target's GPUs."""

from __future__ import annotations

from packaging.version import Version

from .. import cc as ccmod
from ..compat import as_version
from ..findings import Fix
from ..i18n import _, translate
from ..knowledge import ArchInfo
from ..toolchain import CxxToolchain, llvm_for
from .context import Ctx, cc_targets, toolchain


def add_cc_fix(ctx: Ctx, cc: str) -> Fix | None:
    """A fix that adds `cc` to the recipe's compute capabilities, or None when it is there.

    The list it writes keeps only what the recipe's CUDA can build: adding sm_89 to
    ["3.5"] under CUDA 12 gives ["sm_89"], so the fix never leaves another error standing.
    """
    parsed = ccmod.parse_cc(cc)
    if parsed is None:
        return None
    token = ccmod.token(*parsed)
    current = list(ctx.recipe.cuda.compute_capabilities)
    if token in current:
        return None
    kept = [x for x in current if buildable(ctx, x)]
    return Fix(_("Add {token}").format(token=token),
               {"cuda.compute_capabilities": kept + [token]})


def remove_cc_fix(ctx: Ctx, token: str) -> Fix:
    """A fix that removes `token`, and whatever else the CUDA cannot build; when nothing
    is left it names what to build instead (the target's GPUs, else the official list),
    since an empty list is an error of its own (CC_EMPTY)."""
    key = "cuda.compute_capabilities"
    kept = [x for x in ctx.recipe.cuda.compute_capabilities
            if x != token and buildable(ctx, x)]
    if kept:
        return Fix(_("Remove {token}").format(token=token), {key: kept})
    gpus = ctx.target.nvidia_ccs() if ctx.target is not None else []
    instead = ["auto"] if gpus else list(ctx.release.wheel_compute_capabilities
                                         if ctx.release else [])
    return Fix(_("Replace {token} with {value}").format(token=token, value=", ".join(instead)),
               {key: instead})


def buildable(ctx: Ctx, token: str) -> bool:
    """Whether the recipe's CUDA can build this compute-capability token ("auto" can)."""
    if token == "auto":
        return True
    t = ccmod.parse_target(token)
    if t is None or t.major < 3 or t.sm < 30:
        return False
    arch = ctx.kb.arch(t.sm)
    cv = as_version(ctx.recipe.cuda.version) if ctx.recipe.cuda.version else None
    if arch is None or cv is None:
        return True  # unknown: CC_UNKNOWN warns; nothing to judge it by
    return not (_needs_newer_cuda(arch, cv) or _dropped_by_cuda(arch, cv))


def _needs_newer_cuda(arch: ArchInfo, cv: Version) -> bool:
    """The architecture came after this CUDA (CC_TOO_NEW_FOR_CUDA)."""
    return cv < Version(arch.min_cuda)


def _dropped_by_cuda(arch: ArchInfo, cv: Version) -> bool:
    """This CUDA no longer builds the architecture (CC_DROPPED_BY_CUDA)."""
    if not arch.max_cuda:
        return False
    return cv > Version(arch.max_cuda + ".99")


def _list_fix(ctx: Ctx, official: list[str]) -> Fix | None:
    """The list a recipe without a usable one should get: the target's GPUs when its
    profile names them (what the wheel is for), else the official wheel's."""
    gpus = ctx.target.nvidia_ccs() if ctx.target is not None else []
    if gpus:
        tokens = ccmod.cc_tokens(gpus)
        return Fix(_("Use the target machine's GPUs ({tokens})").format(
            tokens=", ".join(tokens)), {"cuda.compute_capabilities": tokens})
    return Fix(_("Use the official wheel's list"),
               {"cuda.compute_capabilities": official}) if official else None


def rule_compute_capabilities(ctx: Ctx) -> None:
    """Every compute capability must be buildable by the CUDA and compiler, and run on the target."""
    r, rel = ctx.recipe, ctx.release
    if r.backend.kind != "cuda":
        return
    tokens = list(r.cuda.compute_capabilities)
    official = list(rel.wheel_compute_capabilities) if rel else []
    key = "cuda.compute_capabilities"
    if not tokens:
        ctx.add("CC_EMPTY", "error",
                _("No compute capabilities: configure.py would fall back to its default "
                  "3.5,7.0, which CUDA 12 and clang 17+ cannot build."),
                ["tf-configure-goldens", "tf-configure-py"], key, _list_fix(ctx, official))
        return
    gpus = ctx.target.nvidia_ccs() if ctx.target is not None else []
    if "auto" in tokens and not gpus:
        ctx.add("CC_AUTO_NO_GPU", "error",
                _('"auto" takes the target machine\'s GPUs, but this machine has no NVIDIA '
                  "GPU. Name the capabilities, or set target.host_profile to the machine that "
                  "will run the wheel.") if ctx.target_is_build_host else
                _('"auto" takes the target machine\'s GPUs, but the target profile lists no '
                  "NVIDIA GPU. Name the capabilities, or set target.host_profile to the machine "
                  "that will run the wheel."),
                ["tf-configure-py"], key,
                Fix(_("Use the official wheel's list"), {key: official}) if official else None)
    if sorted(t for t in tokens if t != "auto") == ["3.5", "7.0"]:
        ctx.add("CC_TF_DEFAULT", "error",
                _("3.5,7.0 is configure.py's default list; sm_35 cannot be built by CUDA >= 12 "
                  "or clang >= 17 for CUDA 12."),
                ["tf-configure-py", "clang-cuda"], key, _list_fix(ctx, official))
    cv = as_version(r.cuda.version) if r.cuda.version else None
    tc = toolchain(ctx)
    clang = tc.clang if r.cuda.compiler == "clang" else None
    _bare_order(ctx, tokens)
    for token in tokens:
        if token == "auto":
            continue
        t = ccmod.parse_target(token)
        if t is None:
            continue
        if t.major < 3 or t.sm < 30:
            ctx.add("CC_CONFIGURE_REJECTS", "error",
                    _("{token}: configure.py rejects capabilities below 3.0 and then silently "
                      "builds for 3.5,7.0 instead.").format(token=token),
                    ["tf-configure-goldens"], key)
            continue
        if t.suffix and t.suffix not in ctx.kb.suffixes.tf_accepts:
            plain = token[:-1]
            kept = [plain if x == token else x for x in r.cuda.compute_capabilities]
            ctx.add("CC_SUFFIX_REJECTED", "error",
                    _("{token}: TensorFlow's CUDA rules accept only an 'a' suffix; the build "
                      "would stop with \"Invalid compute capability: {token}\". {plain} "
                      "covers the same GPUs of its major with a cubin.").format(
                          token=token, plain=plain),
                    ctx.kb.suffixes.sources, key,
                    Fix(_("Use {token}").format(token=plain), {key: kept}))
            continue
        arch = ctx.kb.arch(t.sm)
        if arch is None:
            ctx.add("CC_UNKNOWN", "warning",
                    _("{token}: not a GPU target tfwizard knows.").format(token=token),
                    ["cuda-gpus"], key)
            continue
        _cuda_findings(ctx, token, t, arch, cv)
        if clang is not None and clang < arch.min_clang:
            ctx.add("CC_TOO_NEW_FOR_CLANG", "error",
                    _("{token}: clang {clang} cannot target sm_{sm} (needs clang >= "
                      "{needed}).").format(token=token, clang=clang, sm=t.sm,
                                           needed=arch.min_clang),
                    [*arch.sources, "clang-cuda"], "toolchain.clang",
                    _clang_fix(ctx, tc, arch.min_clang))
        if t.suffix == "a":
            ctx.add("CC_SUFFIX_A", "info",
                    _("{token}: an architecture-specific target runs only on exactly CC "
                      "{cc}, with no forward compatibility; add a plain target too.")
                    .format(token=token, cc=t.cc),
                    ["cuda-features-archive"], key)
    _coverage_findings(ctx)


def _cuda_fix(ctx: Ctx) -> Fix | None:
    """The release's hermetic CUDA that builds every target of the recipe: the oldest such
    minor (the nearest to what TF tests), its newest patch; None when its list has none."""
    rel = ctx.release
    redist = ctx.kb.redist.get(rel.cuda_list or "") if rel is not None and rel.hermetic_cuda \
        else None
    if redist is None:
        return None
    archs = [ctx.kb.arch(t.sm) for t in (ccmod.parse_target(x) for x in
                                         ctx.recipe.cuda.compute_capabilities) if t]
    fits = [v for v in redist.cuda if v not in redist.cuda_without_nccl
            and (cv := as_version(v)) is not None
            and not any(a is not None and (_needs_newer_cuda(a, cv) or _dropped_by_cuda(a, cv))
                        for a in archs)]
    if not fits:
        return None
    first = min(fits, key=Version)
    best = max((v for v in fits if v.split(".")[:2] == first.split(".")[:2]), key=Version)
    return Fix(_("Use CUDA {version}").format(version=best), {"cuda.version": best})


def _clang_fix(ctx: Ctx, tc: CxxToolchain, needed: int) -> Fix:
    """The compiler change that targets an architecture needing clang `needed`: the lowest
    hermetic LLVM that can (the nearest to TF's own), else nvcc; the image's clang `needed`
    on a release without the hermetic toolchain."""
    if not tc.hermetic:
        return Fix(_("Use clang {version}").format(version=needed),
                   {"toolchain.clang": str(needed)})
    llvm = llvm_for(ctx.release, needed)
    if llvm is None:
        return Fix(_("Compile CUDA with nvcc"), {"cuda.compiler": "nvcc"})
    return Fix(_("Use the hermetic LLVM {version}").format(version=llvm),
               {"toolchain.clang": llvm})


def _bare_order(ctx: Ctx, tokens: list[str]) -> None:
    """A list of only "x.y" entries gets PTX for its highest entry by text order; where that
    is not the numerically highest, the PTX is for an older GPU than meant."""
    meant = ccmod.numeric_tokens(tokens)
    got = ccmod.tf_tokens(tokens)
    if not meant or any(not ccmod.parse_cc(t) for t in tokens) or set(meant) == set(got):
        return
    key = "cuda.compute_capabilities"
    ptx = next(t for t in got if t.startswith("compute_"))
    ctx.add("CC_BARE_PTX_ORDER", "warning",
            _("{tokens}: TensorFlow's CUDA rules sort a list of only x.y entries as text and "
              "give PTX to the last, so this list builds {got}: the PTX is {ptx}, not {meant}. "
              "Write the targets as sm_/compute_ tokens.").format(
                tokens=", ".join(tokens), got=", ".join(got), ptx=ptx, meant=meant[-1]),
            ["rules-ml-toolchain-d8cb9c2c"], key,
            Fix(_("Use {value}").format(value=", ".join(meant)), {key: meant}))


def _cuda_findings(ctx: Ctx, token: str, t: ccmod.Target, arch: ArchInfo,
                   cv: Version | None) -> None:
    """What the recipe's CUDA version cannot build of this target."""
    r = ctx.recipe
    key = "cuda.compute_capabilities"
    if cv is not None:
        if _needs_newer_cuda(arch, cv):
            ctx.add("CC_TOO_NEW_FOR_CUDA", "error",
                    _("{token} needs CUDA >= {needed}; the recipe uses {cuda}.")
                    .format(token=token, needed=arch.min_cuda, cuda=r.cuda.version),
                    arch.sources, key, _cuda_fix(ctx))
        if _dropped_by_cuda(arch, cv):
            text = _("{token}: CUDA {cuda} can no longer build sm_{sm} (last in CUDA "
                     "{last}).").format(token=token, cuda=f"{cv.major}.{cv.minor}",
                                        sm=t.sm, last=arch.max_cuda)
            ctx.add("CC_DROPPED_BY_CUDA", "error",
                    f"{text} {translate(arch.note)}" if arch.note else text,
                    arch.sources, key, remove_cc_fix(ctx, token))
        if t.suffix == "a" and cv < Version(ctx.kb.suffixes.a_min_cuda):
            ctx.add("CC_SUFFIX_CUDA", "error",
                    _("{token}: 'a' targets need CUDA >= {needed}.")
                    .format(token=token, needed=ctx.kb.suffixes.a_min_cuda),
                    ["cuda-features-archive"], key)
        if t.suffix == "f" and cv < Version(ctx.kb.suffixes.f_min_cuda):
            ctx.add("CC_SUFFIX_CUDA", "error",
                    _("{token}: 'f' (family) targets need CUDA >= {needed}.")
                    .format(token=token, needed=ctx.kb.suffixes.f_min_cuda),
                    ["cuda-features-archive"], key)


def _coverage_findings(ctx: Ctx) -> None:
    t = ctx.target
    if t is None or not t.nvidia.gpus:
        return
    targets = cc_targets(ctx)
    if not targets:
        return
    key = "cuda.compute_capabilities"
    for gpu in t.nvidia.gpus:
        if gpu.error:
            ctx.add("GPU_ERROR", "warning",
                    _("GPU {index} reports an error ({error}); it is left out of the checks.")
                    .format(index=gpu.index, error=gpu.error),
                    ["nvml-api"], "target.host_profile")
            continue
        cc = gpu.compute_capability
        if not cc:
            continue
        tegra = ctx.kb.is_tegra(cc)
        cov = ccmod.coverage(targets, cc, tegra_mismatch=tegra)
        label = f"GPU {gpu.index} ({gpu.name}, CC {cc})" if gpu.name else f"GPU {gpu.index} (CC {cc})"
        if cov.cubin is not None:
            if cov.cubin.cc == cc:
                ctx.add("CC_COVERS_GPU", "info",
                        _("{gpu} runs the {token} cubin.").format(gpu=label,
                                                                  token=cov.cubin.cubin_token),
                        ["cuda-pg-compat"], key)
            else:
                ctx.add("CC_COVERS_GPU", "info",
                        _("{gpu} runs the {token} cubin: a cubin for {cubin_cc} runs on {cc} "
                          "(same major, lower minor), so no extra target is needed; {exact} "
                          "would add only Ada/newer-specific tuning.")
                        .format(gpu=label, token=cov.cubin.cubin_token, cubin_cc=cov.cubin.cc,
                                cc=cc,
                                exact=ccmod.cc_token(cc)),
                        ["cuda-pg-compat"], key)
        elif cov.ptx is not None:
            ctx.add("CC_PTX_JIT", "warning",
                    _("{gpu}: no cubin in this build, only PTX ({token}); your {cc} GPU would "
                      "JIT from PTX for ~30 minutes or fail (first use only; JIT results are "
                      "cached).").format(gpu=label, token=cov.ptx.token, cc=cc),
                    ["cuda-pg-compat", "tf-gpu-device"], key, add_cc_fix(ctx, cc))
        else:
            ctx.add("CC_NOT_COVERED", "error",
                    _("{gpu}: no cubin of major {major} with a minor <= its own and no PTX <= "
                      "{cc}; TensorFlow would ignore this GPU.")
                    .format(gpu=label, major=cc.split(".")[0], cc=cc),
                    ["cuda-pg-compat", "tf-gpu-device"], key, add_cc_fix(ctx, cc))
