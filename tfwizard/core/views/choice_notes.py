"""Short notes beside the choices of a list, so a person can choose without looking
elsewhere: which release is newest and what it builds with, which CUDA is the release's
default and which ones the target's driver runs natively."""

from __future__ import annotations

from ..compat import cuda_support
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase, Release
from ..recipe import Recipe
from ..toolchain import llvm_choices, llvm_default, llvm_unverified, uses_hermetic


def with_note(value: str, note: str) -> str:
    """A list entry: the value, then its note in parentheses (the language's own)."""
    return _("{value}  ({note})").format(value=value, note=note) if note else value


def _joined(parts: list[str]) -> str:
    return _("; ").join(parts)


def release_note(kb: KnowledgeBase, rel: Release) -> str:
    """"newest; CUDA 12.5.1, Python 3.9–3.12" for one release of the list."""
    parts = []
    if rel.is_master:
        parts.append(_("development branch"))
    elif rel.is_prerelease:
        parts.append(_("pre-release"))
    elif rel.version == kb.latest_release().version:
        parts.append(_("newest"))
    cuda = rel.hermetic_cuda_default or rel.tested_cuda
    if cuda:
        parts.append(_("CUDA {version}").format(version=cuda))
    if rel.pythons:
        parts.append(_("Python {low}–{high}").format(low=rel.pythons[0], high=rel.pythons[-1]))
    return _joined(parts)


def release_label(kb: KnowledgeBase, version: str) -> str:
    """The release list's entry: the version, then its note in parentheses."""
    rel = kb.release(version)
    note = release_note(kb, rel) if rel is not None and rel.version == version else ""
    return with_note(version, note)


def cuda_notes(rel: Release | None, target: HostProfile | None, cudas: list[str]) -> dict[str, str]:
    """For each CUDA version of the list: TensorFlow's default, and whether the target's
    driver runs it natively or only through minor-version compatibility (same major,
    newer minor than the driver's CUDA)."""
    default = (rel.hermetic_cuda_default or rel.tested_cuda) if rel is not None else ""
    driver = target.nvidia.cuda_driver_version if target is not None else None
    notes: dict[str, str] = {}
    for cuda in cudas:
        parts = []
        if cuda and cuda == default:
            parts.append(_("TensorFlow's default"))
        support = cuda_support(driver, cuda)
        if support == "native":
            parts.append(_("the driver runs it natively (up to CUDA {driver})")
                         .format(driver=driver))
        elif support == "minor":
            parts.append(_("newer than the driver's CUDA {driver}: minor-version "
                           "compatibility only").format(driver=driver))
        if parts:
            notes[cuda] = _joined(parts)
    return notes


def clang_choices(kb: KnowledgeBase, recipe: Recipe,
                  rel: Release | None) -> tuple[list[str], str, dict[str, str]]:
    """The toolchain.clang list: (values, the empty choice's label, notes). Where the build
    compiles with TF's hermetic C++ toolchain, the LLVM versions its pin offers, the default
    one noted; else every clang the knowledge base knows, the image's noted."""
    if uses_hermetic(recipe, rel):
        assert rel is not None
        default = str(llvm_default(rel))
        label = _("(default: hermetic LLVM {version})").format(version=default)
        if llvm_unverified(rel):
            label = _("(default: hermetic LLVM {version}, UNVERIFIED for the source's "
                      "pin)").format(version=default)
        return ["", *llvm_choices(rel)], label, {default: _("TensorFlow's default")}
    notes = {}
    if rel is not None and rel.default_clang:
        notes[str(rel.default_clang)] = _("the build image's")
    return ["", *[str(c) for c in sorted(kb.clangs)]], _("(none: gcc)"), notes
