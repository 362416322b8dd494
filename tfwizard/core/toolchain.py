"""The C++ toolchain a recipe's build compiles with: TensorFlow's hermetic LLVM, the build
image's clang, or gcc. The one owner of that choice: the rules, the configure answers, the
plan's flags, advise and the GUI's choices all ask here.

From TF 2.21 the release's .bazelrc sets `USE_HERMETIC_CC_TOOLCHAIN=1` (with C++ toolchain
resolution): Bazel downloads LLVM from the rules_ml_toolchain commit the release pins and
compiles everything with it, CUDA included. The pin's default is one LLVM major;
`--repo_env=LLVM_VERSION=N` picks another it offers (`Release.hermetic_llvm_versions`). The
image's /usr/lib/llvm-N compiles only under `--config=clang_local`, which a recipe asks for
with `toolchain.local_clang = true`. Older releases always compile with the image's clang
(or gcc).
"""

from __future__ import annotations

from dataclasses import dataclass

from .i18n import _
from .knowledge import Release
from .recipe import Recipe

HERMETIC = "hermetic"
IMAGE = "image"
GCC = "gcc"
#: the clang TF's build images have had since 2.18 (configure.py's first guess too)
FALLBACK_CLANG = 18


@dataclass(frozen=True)
class CxxToolchain:
    """What compiles the build, and what configure.py is told."""

    kind: str  # hermetic | image | gcc
    clang: int | None  # the clang major that compiles (hermetic LLVM or the image's); None: gcc
    #: the LLVM_VERSION the plan passes ("" for the pin's default: no flag)
    llvm_version: str
    #: the image clang configure.py is told about (it checks that the file exists); None: none
    configure_clang: int | None

    @property
    def hermetic(self) -> bool:
        """Whether Bazel's downloaded LLVM compiles (the image's compilers are unused)."""
        return self.kind == HERMETIC


def has_hermetic_cc(release: Release | None) -> bool:
    """Whether the release's .bazelrc turns the hermetic C++ toolchain on."""
    return release is not None and release.hermetic_cc_toolchain


def uses_hermetic(recipe: Recipe, release: Release | None) -> bool:
    """Whether the build compiles with the hermetic LLVM: the release has it, the recipe
    does not ask for the image's clang, and the backend is not ROCm (TF's .bazelrc turns
    `rocm` into `clang_local`)."""
    return (has_hermetic_cc(release) and not recipe.toolchain.local_clang
            and recipe.backend.kind != "rocm")


def llvm_default(release: Release) -> int:
    """The LLVM major the release's toolchain pin compiles with when no LLVM_VERSION is given."""
    text = release.hermetic_llvm_default or ""
    return int(text) if text.isdigit() else FALLBACK_CLANG


def llvm_choices(release: Release | None) -> list[str]:
    """The LLVM majors `--repo_env=LLVM_VERSION=` selects for the release (none: not hermetic)."""
    if release is None or not release.hermetic_cc_toolchain:
        return []
    return list(release.hermetic_llvm_versions)


def llvm_unverified(release: Release | None) -> str:
    """The sentence that says the release's LLVM versions are the table's, UNVERIFIED for
    the rules_ml_toolchain commit the source pins ("" when they are that commit's or no
    source was read)."""
    if release is None or not release.hermetic_llvm_unknown_pin:
        return ""
    return _("The source pins rules_ml_toolchain {pin}, whose LLVM versions tfwizard does "
             "not have: the default and choices are its table's for TensorFlow {version}, "
             "UNVERIFIED for that pin.").format(pin=release.hermetic_llvm_unknown_pin[:12],
                                                version=release.version)


def llvm_for(release: Release | None, min_clang: int) -> str | None:
    """The lowest LLVM the release's hermetic toolchain offers that is at least `min_clang`
    (the closest to what TF's CI compiles with), or None."""
    fits = sorted(int(v) for v in llvm_choices(release) if v.isdigit() and int(v) >= min_clang)
    return str(fits[0]) if fits else None


def nearest_llvm(release: Release, wanted: int) -> str:
    """The offered LLVM closest to `wanted`: the lowest at or above it, else the highest."""
    offered = sorted(int(v) for v in llvm_choices(release) if v.isdigit())
    if not offered:
        return str(llvm_default(release))
    return str(next((v for v in offered if v >= wanted), offered[-1]))


def image_clang(release: Release | None) -> int:
    """The clang the release's build image has (its /usr/lib/llvm-N)."""
    if release is not None and release.default_clang:
        return release.default_clang
    return FALLBACK_CLANG


def cxx_toolchain(recipe: Recipe, release: Release | None) -> CxxToolchain:
    """The toolchain `recipe` builds with for `release`."""
    text = recipe.toolchain.clang
    named = int(text) if text.isdigit() else None
    cuda = recipe.backend.kind == "cuda"
    clang_cuda = cuda and recipe.cuda.compiler == "clang"
    if uses_hermetic(recipe, release):
        assert release is not None
        # configure.py still asks for a clang when CUDA is compiled with clang, and checks
        # that the file exists: it is told the image's, which the hermetic toolchain never
        # reads; a CPU build tells configure no compiler at all
        return CxxToolchain(HERMETIC, named or llvm_default(release), text if named else "",
                            image_clang(release) if clang_cuda else None)
    if clang_cuda:
        clang = named or image_clang(release)
        return CxxToolchain(IMAGE, clang, "", clang)
    if cuda or named is None:  # nvcc's host compiler, or a CPU build without clang
        return CxxToolchain(GCC, None, "", None)
    return CxxToolchain(IMAGE, named, "", named)


def toolchain_notes(toolchain: CxxToolchain, release: Release, told: str) -> list[str]:
    """The plan's notes on a build with TF's hermetic C++ toolchain: what compiles, and
    what the clang configure.py is told (`told`, a path; "" none) is for."""
    if not toolchain.hermetic:
        return []
    notes = [_("TensorFlow {version} compiles with its hermetic C++ toolchain: LLVM {llvm}, "
               "downloaded by Bazel (rules_ml_toolchain); the build image's clang is not "
               "used.").format(version=release.version, llvm=toolchain.clang)]
    unverified = llvm_unverified(release)
    if unverified:
        notes.append(unverified)
    if told:
        notes.append(_("configure.py is told the image's clang ({path}): it checks that the "
                       "file exists, but the hermetic toolchain does not compile with "
                       "it.").format(path=told))
    return notes
