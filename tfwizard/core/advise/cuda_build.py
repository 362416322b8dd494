"""A CUDA source build that serves the GPUs: the release, CUDA and cuDNN to build with."""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from .. import cc as ccmod
from .. import compat
from ..findings import Remedy
from ..i18n import _
from ..knowledge import KnowledgeBase, Release
from ..toolchain import has_hermetic_cc, llvm_choices, llvm_default, llvm_for
from .context import _Ctx

# -- a CUDA build that serves the GPUs ----------------------------------------------------------


def _cuda_build(ctx: _Ctx, rel: Release, ccs: list[str],
                purpose: str) -> tuple[Remedy | None, list[str]]:
    """A source build with a hermetic CUDA that compiles every GPU of the machine and that its
    driver runs: `rel` if its list has one, else the nearest newer release, else an older one;
    of those, the first whose clang (the hermetic LLVM, or the image's) targets every GPU,
    else the first that needs nvcc.

    Returns the remedy (None when no release can) and the evidence of the search.
    """
    kb = ctx.kb
    archs = {}
    for cc in ccs:
        sm = _sm(cc)
        arch = kb.arch(sm)
        if arch is None:
            return None, [_("tfwizard does not know which CUDA compiles sm_{sm}.").format(sm=sm)]
        archs[sm] = arch
    releases = list(kb.releases)
    index = releases.index(rel)
    order = [rel] + releases[index + 1:] + list(reversed(releases[:index]))
    py = compat.as_version(ctx.python)
    evidence: list[str] = []
    with_nvcc: tuple[Remedy, list[str]] | None = None
    for cand in order:
        redist = kb.redist.get(cand.cuda_list or "")
        if not cand.hermetic_cuda or redist is None:
            if cand is rel:
                evidence.append(_("TensorFlow {release} builds with its build image's CUDA "
                                  "{cuda}, not a hermetic CUDA of your choice.").format(
                    release=rel.version, cuda=rel.tested_cuda))
            continue
        if py is not None and py not in cand.python:
            continue
        chosen = _pick_cuda(ctx, redist.cuda, redist.cuda_without_nccl, archs)
        if chosen is None:
            if cand is rel:
                evidence += _why_no_cuda(ctx, rel, redist.cuda, archs)
            continue
        remedy, found = _build_remedy(ctx, cand, rel, chosen, redist.cudnn, ccs, archs, purpose)
        if remedy.changes["cuda.compiler"] == "clang":
            return remedy, evidence + found
        with_nvcc = with_nvcc or (remedy, evidence + found)
    if with_nvcc is not None:
        return with_nvcc
    evidence.append(_("No release's hermetic CUDA list has a CUDA that compiles {targets} and "
                      "that the driver runs.").format(targets=", ".join(ccmod.auto_targets(ccs))))
    return None, evidence


def _build_remedy(ctx: _Ctx, cand: Release, rel: Release, cuda: str, cudnns: tuple[str, ...],
                  ccs: list[str], archs: dict[int, Any], purpose: str) -> tuple[Remedy, list[str]]:
    """The build of `cand` with hermetic CUDA `cuda` for the GPUs, its compiler chosen by
    what each clang can target; and what that choice rests on."""
    need = max(a.min_clang for a in archs.values())
    sm = max(archs, key=lambda s: archs[s].min_clang)
    evidence: list[str] = []
    changes: dict[str, Any] = {"tensorflow.version": cand.version, "backend.kind": "cuda",
                               "cuda.version": cuda,
                               "cuda.compute_capabilities": ccmod.auto_targets(ccs)}
    if has_hermetic_cc(cand):
        llvm = llvm_for(cand, need)
        compiler = "clang" if llvm is not None else "nvcc"
        if llvm is not None and int(llvm) != llvm_default(cand):
            changes["toolchain.clang"] = llvm
            evidence.append(_("TensorFlow {release} compiles with its hermetic LLVM, {default} by "
                              "default; LLVM {llvm} (--repo_env=LLVM_VERSION={llvm}) targets "
                              "sm_{sm}, which needs clang {needed}.").format(
                release=cand.version, default=llvm_default(cand), llvm=llvm, sm=sm, needed=need))
        elif llvm is None:
            evidence.append(_("No LLVM TensorFlow {release}'s hermetic toolchain offers ({choices}) "
                              "targets sm_{sm} (that needs clang {needed}): the build compiles "
                              "CUDA with nvcc.").format(release=cand.version,
                                                        choices=", ".join(llvm_choices(cand)),
                                                        sm=sm, needed=need))
    else:
        clang = cand.default_clang
        compiler = "clang" if clang is not None and clang >= need else "nvcc"
        if compiler == "nvcc":
            evidence.append(_("clang {clang}, the build image's, cannot target sm_{sm} (that needs "
                              "clang {needed}): the build compiles CUDA with nvcc, which "
                              "TensorFlow supports but tests less.").format(
                clang=clang or "-", sm=sm, needed=need))
    changes["cuda.compiler"] = compiler
    if cand is not rel:
        evidence.append(_("TensorFlow {release}'s hermetic CUDA list has CUDA {cuda}.").format(
            release=cand.version, cuda=cuda))
    if purpose == "driver" and Version(cuda).major < 12:
        evidence.append(_("TensorFlow's own builds of {release} use CUDA 12: a build with "
                          "CUDA {cuda} is in its hermetic list but untested by TensorFlow.")
                        .format(release=cand.version, cuda=cuda))
    cudnn = _pick_cudnn(ctx.kb, cudnns, cuda, ccs)
    if cudnn:
        changes["cuda.cudnn"] = cudnn
    if ctx.python:
        changes["python.version"] = ctx.python
    label = _("Build TensorFlow {release} with hermetic CUDA {cuda} for {targets} "
              "({compiler})").format(release=cand.version, cuda=cuda,
                                    targets=", ".join(changes["cuda.compute_capabilities"]),
                                    compiler=compiler)
    return Remedy("build", label, changes), evidence


def _pick_cuda(ctx: _Ctx, versions: tuple[str, ...], without_nccl: tuple[str, ...],
               archs: dict[int, Any]) -> str | None:
    """The newest listed CUDA that compiles every arch and runs on the driver, preferring one
    whose own driver the machine has (full compatibility: no XLA slow path)."""
    fits = []
    for text in sorted(versions, key=Version, reverse=True):
        v = Version(text)
        if text in without_nccl:
            continue
        if not all(_compiles(v, a) for a in archs.values()):
            continue
        if compat.runs_major(ctx.kb, ctx.machine, text) is False:
            continue
        fits.append(text)
    if not fits:
        return None
    for text in fits:
        driver = compat.driver_for_toolkit(ctx.kb, text)
        if compat.driver_meets(ctx.machine, driver, text) is not False:
            return text
    return fits[0]


def _compiles(v: Version, arch: Any) -> bool:
    """Whether CUDA `v` compiles for `arch` (cuda.toml: min_cuda, and max_cuda's x.y)."""
    if v < Version(arch.min_cuda):
        return False
    last = compat.major_minor(arch.max_cuda) if arch.max_cuda else None
    return last is None or (v.major, v.minor) <= last


def _why_no_cuda(ctx: _Ctx, rel: Release, versions: tuple[str, ...],
                 archs: dict[int, Any]) -> list[str]:
    listed = sorted(versions, key=Version)
    out = []
    for sm, arch in sorted(archs.items()):
        if Version(listed[-1]) < Version(arch.min_cuda):
            out.append(_("sm_{sm} needs CUDA {needed} or newer to compile; TensorFlow {release}'s "
                         "hermetic CUDA list ends at {last}.").format(
                sm=sm, needed=arch.min_cuda, release=rel.version, last=listed[-1]))
    if not out:
        driver = ctx.machine.nvidia.driver_version or "-"
        out.append(_("TensorFlow {release}'s hermetic CUDA list ({first} to {last}) has no CUDA "
                     "that compiles these GPUs and that driver {driver} runs.").format(
            release=rel.version, first=listed[0], last=listed[-1], driver=driver))
    return out


def _pick_cudnn(kb: KnowledgeBase, versions: tuple[str, ...], cuda: str,
                ccs: list[str]) -> str | None:
    """The newest listed cuDNN with a build for the CUDA major that supports every GPU."""
    major = Version(cuda).major
    lowest = min((Version(c) for c in ccs if compat.as_version(c)), default=None)
    for text in sorted(versions, key=Version, reverse=True):
        row = kb.cudnn_compat(text)
        if row is None or major not in row.cuda_majors:
            continue
        if lowest is not None and lowest < Version(row.min_cc):
            continue
        return text
    return None


def _sm(cc: str) -> int:
    parsed = ccmod.parse_cc(cc)
    return parsed[0] * 10 + parsed[1] if parsed else 0
