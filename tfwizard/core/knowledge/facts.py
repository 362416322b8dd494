"""The knowledge base's facts: one frozen dataclass per kind of entry of
resources/knowledge/*.toml, and the Python a build uses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import Version

if TYPE_CHECKING:
    from ..recipe import Recipe


@dataclass(frozen=True)
class Source:
    """A source a fact cites (sources.toml): title and where it was read."""

    key: str
    title: str
    ref: str
    note: str = ""


@dataclass(frozen=True)
class Release:
    """One TensorFlow release (releases.toml): what it builds with and what its wheel is."""

    version: str  # "2.18.0" or "master"
    series: str  # "2.18"
    git_tag: str
    python: SpecifierSet
    pythons: tuple[str, ...]
    requires_python: SpecifierSet
    tested_compiler: str
    tested_clang: int | None
    tested_gcc: int | None
    bazel: str
    bazel_range: SpecifierSet
    tested_cuda: str
    tested_cudnn: str
    wheel_cuda: str
    wheel_cudnn: str
    wheel_compute_capabilities: tuple[str, ...]
    wheel_compiler: str
    wheel_tensorrt: bool
    hermetic_cuda: bool
    hermetic_cuda_default: str | None
    hermetic_cudnn_default: str | None
    cuda_list: str | None
    numpy: SpecifierSet
    numpy_by_python: tuple[tuple[str, SpecifierSet], ...]
    manylinux: str
    glibc_floor: str
    and_cuda: bool
    wheel_style: str  # build_pip_package | wheel
    cuda_wheel_config: bool
    use_pywrap_rules: bool
    windows_cuda: bool
    image: str  # may contain "{python}"
    image_clang: int | None  # the clang major the default image has (/usr/lib/llvm-N)
    sources: tuple[str, ...]
    unverified: tuple[str, ...]
    # TF's .bazelrc `USE_HERMETIC_CC_TOOLCHAIN=1`: Bazel downloads the C++ toolchain (LLVM
    # from rules_ml_toolchain) and the image's /usr/lib/llvm-N is unused unless clang_local
    hermetic_cc_toolchain: bool = False
    hermetic_llvm_default: str | None = None  # the LLVM major the toolchain pin defaults to
    hermetic_llvm_versions: tuple[str, ...] = ()  # the majors `--repo_env=LLVM_VERSION=` selects
    #: the rules_ml_toolchain commit a source pins whose LLVM versions tfwizard does not
    #: have: hermetic_llvm_* are the table's, UNVERIFIED for it (set by tfsource/overlay.py)
    hermetic_llvm_unknown_pin: str = ""
    hermetic_nccl_default: str | None = None  # `HERMETIC_NCCL_VERSION` of the cuda_version config
    hermetic_nvshmem_default: str | None = None  # `HERMETIC_NVSHMEM_VERSION`, likewise
    #: the commit the release's tag names ("" when not read)
    tag_commit: str = ""
    #: a patch release's base entry ("2.19.0" for 2.19.1): the facts it shares with it
    patch_of: str | None = None

    @property
    def is_master(self) -> bool:
        """Whether this is the master entry."""
        return self.version == "master"

    @property
    def is_prerelease(self) -> bool:
        """Whether this is a release candidate (or another pre-release): "2.22.0rc0"."""
        return not self.is_master and Version(self.version).is_prerelease

    @property
    def series_version(self) -> Version:
        """The series ("2.18") as a Version."""
        return Version(self.series)

    def numpy_for(self, python: str) -> SpecifierSet:
        """The NumPy range the release's wheel needs on `python`."""
        for py, spec in self.numpy_by_python:
            if py == python:
                return spec
        return self.numpy

    def image_for(self, python: str) -> str:
        """The release's build image for `python`."""
        return self.image.replace("{python}", python)

    @property
    def default_clang(self) -> int | None:
        """The clang a recipe gets by default: the one the release's build image has."""
        return self.image_clang or self.tested_clang

    @property
    def tested_cuda_version(self) -> str:
        """The CUDA a build of this release is tested with, as a hermetic or local version."""
        return self.hermetic_cuda_default or self.tested_cuda


def default_python(release: Release) -> str:
    """The Python a release builds for when the recipe names none (python.version empty):
    3.11, in every release's range from 2.12 on and with build images, else the newest."""
    return "3.11" if "3.11" in release.pythons else release.pythons[-1]


def recipe_python(recipe: Recipe, release: Release) -> str:
    """The Python a recipe builds for: python.version, else the release's default."""
    return recipe.python.version or default_python(release)


@dataclass(frozen=True)
class DriverFloor:
    """The oldest NVIDIA driver a CUDA major needs."""

    cuda_major: int
    linux: str
    windows: str | None
    sources: tuple[str, ...]


@dataclass(frozen=True)
class ArchInfo:
    """One GPU architecture (sm): the CUDA versions and clang that can build it."""

    sm: int
    min_cuda: str
    max_cuda: str | None
    min_clang: int
    note: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class ClangInfo:
    """One clang major: the newest CUDA it compiles."""

    major: int
    newest_cuda: str
    offsetof_warning: bool
    c23_warning: bool
    note: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class RedistList:
    """A hermetic CUDA/cuDNN redistributable list (cuda.toml [redist.*])."""

    name: str
    cuda: tuple[str, ...]
    cudnn: tuple[str, ...]
    complete: bool
    sources: tuple[str, ...]
    #: non-empty: which list the release pins is inferred, so a version not listed is a
    #: warning, not an error
    unverified: str = ""
    #: CUDA versions listed without an NCCL wheel entry (the NCCL repository rule stops)
    cuda_without_nccl: tuple[str, ...] = ()
    #: the rules_ml_toolchain commit the lists were read at ("" for TF's own files): a
    #: source that pins this commit gets this list (srcoverlay.py)
    commit: str = ""
    #: the LLVM major that commit's hermetic C++ toolchain defaults to, and the majors
    #: `--repo_env=LLVM_VERSION=` selects (Linux x86_64); "" and () where not read
    llvm_default: str = ""
    llvm_versions: tuple[str, ...] = ()


@dataclass(frozen=True)
class CudnnCompat:
    """Which CUDA majors a range of cuDNN versions has builds for."""

    versions: SpecifierSet
    cuda_majors: tuple[int, ...]
    min_cc: str
    sources: tuple[str, ...]
    unverified: str = ""


@dataclass(frozen=True)
class GpuCC:
    """A GPU name pattern and its compute capability (gpus.toml)."""

    cc: str
    arch: str
    tegra: bool
    patterns: tuple[re.Pattern[str], ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class GfxTarget:
    """An AMD gfx target and the GPUs that have it."""

    target: str
    version: int
    gpus: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class RocmRelease:
    """A ROCm release range, its gfx targets and the TensorFlow it serves."""

    versions: SpecifierSet
    targets: tuple[str, ...]
    tensorflow: tuple[str, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Suffixes:
    """The CUDA and clang that the "a" and "f" target suffixes need, and the suffixes TF's
    CUDA rules accept."""

    a_min_cuda: str
    f_min_cuda: str
    a_min_clang: int
    f_min_clang: int
    tf_accepts: tuple[str, ...] = ("a",)
    sources: tuple[str, ...] = ()



# -- official wheels: what each PyPI wheel needs (wheels.toml, tests/tools/official_wheels.py)
@dataclass(frozen=True)
class OfficialWheel:
    """One official TensorFlow Linux wheel as published on PyPI, read from its files."""

    release: str
    arch: str  # x86_64 | aarch64
    package: str  # tensorflow | tensorflow-cpu | tensorflow-cpu-aws | tensorflow-aarch64
    kind: str  # gpu | cpu | shim
    installs: str | None  # a shim's requirement, e.g. "tensorflow-cpu-aws==2.15.0"
    installed_by: str | None  # the shim package that installs this wheel
    pythons: tuple[str, ...]
    requires_python: SpecifierSet
    platform_tags: tuple[str, ...]
    manylinux: str
    glibc_floor: str
    cpu_baseline: str | None  # avx | armv8-a (None for a shim)
    sass: tuple[str, ...]  # sm_XX: cubins (a compute_XX of build_info gives one too)
    ptx: tuple[str, ...]  # compute_XX: PTX
    build_cuda: str | None
    build_cudnn: str | None
    and_cuda: tuple[str, ...]  # requirements of the [and-cuda] extra
    and_cuda_cuda: str | None
    and_cuda_cudnn: str | None
    and_cuda_nccl: str | None
    driver_min: str | None  # minor-version compatibility floor (Linux)
    driver_full: str | None  # the driver the pulled CUDA minor release shipped with
    driver_ptx: str | None  # needed to JIT the wheel's PTX
    files: tuple[tuple[str, str], ...]  # (file name, sha256)
    read_on: str
    sources: tuple[str, ...]
    unverified: tuple[str, ...]
    #: cubins only TF's hand-written kernels have: its MLIR-generated kernels carry PTX there
    sass_partial: tuple[str, ...] = ()

    @property
    def sass_ccs(self) -> tuple[str, ...]:
        """The SASS targets as compute capabilities: ("6.0", "8.9", ...)."""
        return tuple(_cc(t) for t in self.sass)

    @property
    def ptx_ccs(self) -> tuple[str, ...]:
        """The capabilities the wheel carries PTX for."""
        return tuple(_cc(t) for t in self.ptx)


def _cc(target: str) -> str:
    digits = target.split("_", 1)[1].rstrip("af")
    return f"{digits[:-1]}.{digits[-1]}"
