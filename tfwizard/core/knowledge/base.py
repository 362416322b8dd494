"""The knowledge base: every fact, and the questions the code asks of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from ..errors import KnowledgeError
from ..i18n import _

if TYPE_CHECKING:
    from ..recipe import Recipe

from .facts import (
    ArchInfo,
    ClangInfo,
    CudnnCompat,
    DriverFloor,
    GfxTarget,
    GpuCC,
    OfficialWheel,
    RedistList,
    Release,
    RocmRelease,
    Source,
    Suffixes,
)
from .read import parse_wheel


@dataclass(frozen=True)
class KnowledgeBase:
    """The whole knowledge base, with the look-ups rules, plan and advise share."""

    sources: dict[str, Source]
    releases: tuple[Release, ...]
    driver_floors: tuple[DriverFloor, ...]
    toolkit_driver: dict[str, str]
    archs: dict[int, ArchInfo]
    suffixes: Suffixes
    clangs: dict[int, ClangInfo]
    redist: dict[str, RedistList]
    cudnn: tuple[CudnnCompat, ...]
    gpu_ccs: tuple[GpuCC, ...]
    gfx: tuple[GfxTarget, ...]
    rocm: tuple[RocmRelease, ...]
    rocm_default_targets: tuple[str, ...]
    platforms: dict[str, Any]
    #: every file's raw data, for the lint test (wheels.toml read on first use: RawFiles)
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)
    #: toolkit_driver rows no NVIDIA table confirmed (cuda.toml [toolkit_driver_unverified])
    toolkit_driver_unverified: tuple[str, ...] = ()

    # -- releases ----------------------------------------------------------------
    def release(self, version: str) -> Release | None:
        """The release entry for "2.18.0", "2.19.1", "2.22.0rc0" (also spelt "2.22.0-rc0")
        or "master"; None for a version the table lacks, patch levels included: a patch
        release is its own source (its own tag), never its series' first release."""
        for rel in self.releases:
            if rel.version == version:
                return rel
        try:
            wanted = Version(version)
        except InvalidVersion:
            return None
        if len(wanted.release) != 3:  # "2.18" is a series, not a release
            return None
        for rel in self.releases:
            if not rel.is_master and Version(rel.version) == wanted:
                return rel
        return None

    def release_for(self, recipe: Recipe) -> Release | None:
        """The release a recipe builds: tensorflow.version, or master when it names none."""
        return self.release(recipe.tensorflow.version or "master")

    def release_versions(self) -> list[str]:
        """Every release's version, oldest first, master last."""
        return [r.version for r in self.releases]

    def latest_release(self) -> Release:
        """The newest final release (not master, not a release candidate)."""
        return [r for r in self.releases if not r.is_master and not r.is_prerelease][-1]

    # -- CUDA ----------------------------------------------------------------------
    def driver_floor(self, cuda_major: int) -> DriverFloor | None:
        """The driver floor of a CUDA major, or None."""
        for floor in self.driver_floors:
            if floor.cuda_major == cuda_major:
                return floor
        return None

    def arch(self, sm: int) -> ArchInfo | None:
        """The architecture entry of sm (86), or None."""
        return self.archs.get(sm)

    def clang(self, major: int) -> ClangInfo | None:
        """The entry of a clang major, or None."""
        return self.clangs.get(major)

    def cudnn_compat(self, version: str) -> CudnnCompat | None:
        """The cuDNN entry covering `version`, or None."""
        try:
            v = Version(version)
        except InvalidVersion:
            return None
        for entry in self.cudnn:
            if v in entry.versions:
                return entry
        return None

    # -- GPUs ------------------------------------------------------------------------
    def cc_for_gpu_name(self, name: str) -> str | None:
        """Derive a compute capability from a GPU's marketing name, or None."""
        for entry in self.gpu_ccs:
            if any(p.search(name) for p in entry.patterns):
                return entry.cc
        return None

    def gpu_arch_name(self, cc: str) -> str | None:
        """The architecture name of a capability ("Ada"), or None."""
        for entry in self.gpu_ccs:
            if entry.cc == cc:
                return entry.arch
        return None

    def is_tegra(self, cc: str) -> bool:
        """Whether a capability is a Tegra (Jetson) one."""
        return any(e.cc == cc and e.tegra for e in self.gpu_ccs)

    def known_ccs(self) -> list[str]:
        """Every compute capability gpus.toml names, in order."""
        return sorted({e.cc for e in self.gpu_ccs}, key=lambda c: Version(c))

    def gfx_for_version(self, version: int) -> GfxTarget | None:
        """The gfx target of a kfd gfx version number, or None."""
        for g in self.gfx:
            if g.version == version:
                return g
        return None

    def rocm_release(self, version: str) -> RocmRelease | None:
        """The ROCm entry covering `version`, or None."""
        try:
            v = Version(version)
        except InvalidVersion:
            return None
        for r in self.rocm:
            if v in r.versions:
                return r
        return None

    # -- official wheels (wheels.toml) ---------------------------------------------------
    def official_wheels(self, release: str, arch: str) -> tuple[OfficialWheel, ...]:
        """The official Linux wheels of a release ("2.18.0"; a patch release whose own were
        not read gets its base release's)
        for "x86_64" or "aarch64", one per package name; () when none are known."""
        return _official_wheels(self, release, arch)

    def official_wheel(self, release: str, arch: str,
                       package: str = "tensorflow") -> OfficialWheel | None:
        """What `pip install <package>==<release>` installs on Linux/arch (a shim followed
        to the wheel it pulls), or None."""
        return _official_wheel(self, release, arch, package)



def all_official_wheels(kb: KnowledgeBase) -> tuple[OfficialWheel, ...]:
    """Every entry of wheels.toml (empty when the file is absent)."""
    try:
        return tuple(parse_wheel(w) for w in kb.raw.get("wheels", {}).get("wheel", []))
    except (KeyError, TypeError, ValueError) as exc:
        raise KnowledgeError(_("knowledge base is malformed: {error}").format(
            error=repr(exc))) from None


def _official_wheels(kb: KnowledgeBase, release: str, arch: str) -> tuple[OfficialWheel, ...]:
    rel = kb.release(release)
    if rel is None or rel.is_master:
        return ()
    wheels = all_official_wheels(kb)
    own = tuple(w for w in wheels if w.release == rel.version and w.arch == arch)
    if own or rel.patch_of is None:
        return own
    # a patch release whose wheels were not read: its base's (same series, same build setup)
    return tuple(w for w in wheels if w.release == rel.patch_of and w.arch == arch)


def _official_wheel(kb: KnowledgeBase, release: str, arch: str,
                    package: str) -> OfficialWheel | None:
    wheels = {w.package: w for w in _official_wheels(kb, release, arch)}
    wheel = wheels.get(package)
    if wheel is not None and wheel.installs:
        # packaging.requirements (markers, tags) costs every command's start ~15 ms
        from packaging.requirements import Requirement

        wheel = wheels.get(Requirement(wheel.installs).name)
    return wheel
