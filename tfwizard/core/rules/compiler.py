"""Rules on the C++ compiler (TF's hermetic LLVM, the image's clang, or gcc) and what it
can build."""

from __future__ import annotations

from ..compat import as_version
from ..findings import Fix
from ..i18n import _
from ..knowledge import ClangInfo, Release
from ..toolchain import (
    CxxToolchain,
    has_hermetic_cc,
    llvm_choices,
    llvm_default,
    llvm_unverified,
    nearest_llvm,
)
from .context import Ctx, clang_major, toolchain


def rule_compiler(ctx: Ctx) -> None:
    """The compiler must be one the release builds with, and able to build the CUDA targets."""
    r, rel = ctx.recipe, ctx.release
    if rel is None:
        return
    tc = toolchain(ctx)
    if tc.hermetic:
        _hermetic_compiler(ctx, rel, tc)
        return
    if r.toolchain.local_clang:
        _local_clang_note(ctx, rel)
    clang = clang_major(ctx)
    gcc = r.toolchain.gcc
    if clang and gcc:
        ctx.add("COMPILER_BOTH", "warning",
                (_("Both toolchain.clang ({clang}) and toolchain.gcc ({gcc}) are set; clang is "
                   "used as the CUDA compiler.") if r.backend.kind == "cuda" else
                 _("Both toolchain.clang ({clang}) and toolchain.gcc ({gcc}) are set; clang is "
                   "used.")).format(clang=clang, gcc=gcc),
                ["tf-configure-py"], "toolchain.gcc",
                Fix(_("Remove toolchain.gcc"), {"toolchain.gcc": ""}))
    wheel_clang = None
    if "llvm-" in rel.wheel_compiler:
        wheel_clang = int(rel.wheel_compiler.split("llvm-")[1].split("/")[0])
    elif rel.wheel_compiler.startswith("clang "):
        wheel_clang = int(rel.wheel_compiler.split()[1])
    if clang:
        info = ctx.kb.clang(clang)
        if clang == rel.tested_clang or clang == wheel_clang:
            text = _("clang {clang} is the tested compiler for TensorFlow {version}.") \
                if clang == rel.tested_clang else \
                _("clang {clang} is what the official wheel was built with for TensorFlow "
                  "{version}.")
            ctx.add("CLANG_MATCHES", "info", text.format(clang=clang, version=rel.version),
                    ["tf-source-md", "pypi-wheels"], "toolchain.clang")
        elif rel.tested_clang:
            ctx.add("CLANG_NOT_TESTED", "warning",
                    _("TensorFlow {version} is tested with {compiler}; clang {clang} may hit "
                      "new warnings-as-errors.").format(version=rel.version,
                                                        compiler=rel.tested_compiler,
                                                        clang=clang),
                    ["tf-source-md", "tf-build-issues"], "toolchain.clang",
                    Fix(_("Use clang {version}").format(version=rel.tested_clang),
                        {"toolchain.clang": str(rel.tested_clang)}))
        else:
            ctx.add("CLANG_NOT_TESTED", "warning",
                    _("TensorFlow {version} was tested with {compiler}, not clang.")
                    .format(version=rel.version, compiler=rel.tested_compiler),
                    ["tf-source-md"], "toolchain.clang")
        _clang_known_issues(ctx, clang, info)
    elif r.backend.kind == "cuda" and r.cuda.compiler == "clang":
        ctx.add("CLANG_MISSING", "warning",
                _("cuda.compiler is clang but toolchain.clang is empty; clang {version}, the "
                  "build image's, is assumed.").format(version=rel.default_clang or 18),
                ["tf-configure-py"], "toolchain.clang",
                Fix(_("Use clang {version}").format(version=rel.default_clang or 18),
                    {"toolchain.clang": str(rel.default_clang or 18)}))
    else:
        tested_gcc = rel.tested_gcc
        if tested_gcc is None:
            ctx.add("GCC_NOT_TESTED", "warning",
                    _("TensorFlow {version} is built and tested with {compiler}; gcc builds "
                      "are not tested by TensorFlow and often fail late.")
                    .format(version=rel.version, compiler=rel.tested_compiler),
                    ["tf-source-md"], "toolchain.clang",
                    Fix(_("Use clang {version}").format(version=rel.tested_clang),
                        {"toolchain.clang": str(rel.tested_clang), "toolchain.gcc": ""})
                    if rel.tested_clang else None)
    if r.backend.kind == "cuda" and r.cuda.compiler == "nvcc" and rel.hermetic_cuda:
        ctx.add("NVCC_HOST", "info",
                _("nvcc with gcc as host compiler: TensorFlow's releases build CUDA with clang; "
                  "nvcc builds are supported (--config=cuda_nvcc in newer releases) but less "
                  "tested."),
                ["tf-configure-py", "tf-ci-official"], "cuda.compiler")


def _hermetic_compiler(ctx: Ctx, rel: Release, tc: CxxToolchain) -> None:
    """TF's hermetic C++ toolchain: the LLVM version must be one the release's pin offers;
    the image's compilers are not used."""
    r = ctx.recipe
    choices = llvm_choices(rel)
    clang = tc.clang or llvm_default(rel)
    key = "toolchain.clang"
    unverified = llvm_unverified(rel)
    if tc.llvm_version and tc.llvm_version not in choices:
        best = nearest_llvm(rel, clang)
        ctx.add("LLVM_VERSION_UNKNOWN", "warning" if unverified else "error",
                (_("TensorFlow {version} compiles with its hermetic LLVM (--repo_env="
                   "LLVM_VERSION), which offers LLVM {choices}; {clang} is not one of them, "
                   "and the toolchain repository would stop. Pick one of those, or set "
                   "toolchain.local_clang = true to compile with the build image's clang.")
                 .format(version=rel.version, choices=", ".join(choices), clang=clang)
                 + (" " + unverified if unverified else "")),
                rel.sources, key,
                Fix(_("Use the hermetic LLVM {version}").format(version=best), {key: best}))
        return
    ctx.add("CXX_HERMETIC", "info",
            _("TensorFlow {version} compiles with its hermetic C++ toolchain: Bazel downloads "
              "LLVM {clang} (rules_ml_toolchain) and the build image's clang is not used; "
              "toolchain.local_clang = true compiles with the image's instead.")
            .format(version=rel.version, clang=clang) + (" " + unverified if unverified else ""),
            rel.sources, key)
    default = llvm_default(rel)
    if clang != default:
        ctx.add("CLANG_NOT_TESTED", "info",
                _("TensorFlow {version}'s own builds use LLVM {default}; LLVM {clang} is another "
                  "version its hermetic toolchain offers (LLVM_VERSION), less tested.")
                .format(version=rel.version, default=default, clang=clang), rel.sources, key)
    if r.toolchain.gcc:
        ctx.add("GCC_NOT_USED", "warning",
                _("toolchain.gcc = {gcc} is not used: TensorFlow {version} compiles with its "
                  "hermetic LLVM {clang}. Set toolchain.local_clang = true to compile with the "
                  "build image's compilers.").format(gcc=r.toolchain.gcc, version=rel.version,
                                                     clang=clang),
                rel.sources, "toolchain.gcc", Fix(_("Remove toolchain.gcc"), {"toolchain.gcc": ""}))
    _clang_known_issues(ctx, clang, ctx.kb.clang(clang), hermetic=True)
    if r.backend.kind == "cuda" and r.cuda.compiler == "nvcc":
        ctx.add("NVCC_HOST", "info",
                _("nvcc compiles CUDA, with the hermetic LLVM {clang} as host compiler; "
                  "TensorFlow's releases build CUDA with clang, and how configure's nvcc "
                  "answers combine with the hermetic toolchain is UNVERIFIED here.")
                .format(clang=clang), ["tf-configure-py", "tf-ci-official"], "cuda.compiler")


def _local_clang_note(ctx: Ctx, rel: Release) -> None:
    """toolchain.local_clang where it changes nothing: the release, or TF's rocm config,
    compiles with the image's compiler anyway."""
    if has_hermetic_cc(rel) and ctx.recipe.backend.kind != "rocm":
        return
    ctx.add("LOCAL_CLANG_ALWAYS", "info",
            _("toolchain.local_clang changes nothing here: TensorFlow {version} compiles "
              "{backend} builds with the build image's compiler in any case.")
            .format(version=rel.version, backend=ctx.recipe.backend.kind),
            rel.sources, "toolchain.local_clang",
            Fix(_("Remove toolchain.local_clang"), {"toolchain.local_clang": False}))


def _clang_known_issues(ctx: Ctx, clang: int, info: ClangInfo | None, *,
                        hermetic: bool = False) -> None:
    """What the knowledge base says about this clang: its warnings, its CUDA, or nothing.
    A hermetic LLVM is one TF's toolchain pin offers: its new warnings are notes."""
    r = ctx.recipe
    if info is not None and info.offsetof_warning and clang >= 18:
        ctx.add("CLANG_OFFSETOF", "info",
                _("configure.py adds -Wno-gnu-offsetof-extensions only for clang 16/17, "
                  "but clang {clang} hits the same upb error; the plan adds "
                  "--copt=-Wno-gnu-offsetof-extensions.").format(clang=clang),
                info.sources, "toolchain.clang")
    if info is not None and info.c23_warning:
        ctx.add("CLANG_C23", "info" if hermetic else "warning",
                _("clang {clang} also errors on -Wc23-extensions in TF's dependencies; the "
                  "plan adds --copt=-Wno-c23-extensions, but expect more new warnings.")
                .format(clang=clang),
                info.sources, "toolchain.clang")
    if r.backend.kind == "cuda" and r.cuda.compiler == "clang" and info and r.cuda.version:
        cv, newest = as_version(r.cuda.version), as_version(info.newest_cuda)
        if cv is not None and newest is not None and (cv.major, cv.minor) > (
                newest.major, newest.minor):
            ctx.add("CLANG_CUDA_PARTIAL", "info",
                    _("clang {clang} fully supports CUDA up to {newest}; with CUDA {cuda} it "
                      "warns (-Wunknown-cuda-version) and carries on, as TensorFlow's own "
                      "builds do.").format(clang=clang, newest=info.newest_cuda,
                                           cuda=r.cuda.version),
                    info.sources, "toolchain.clang")
    if info is None:
        ctx.add("CLANG_UNKNOWN", "warning",
                _("clang {clang} is not in the knowledge base.").format(clang=clang),
                ["clang-cuda"], "toolchain.clang")
