"""The compatibility knowledge base: resources/knowledge/*.toml as frozen dataclasses.

Every entry names its sources (keys of sources.toml); facts that no primary source
confirmed carry an `unverified` note. `tests/core/test_knowledge.py` lints the data.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .errors import KnowledgeError
from .i18n import _
from .resources import resource_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from .recipe import Recipe


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


def _tuple(value: Any) -> tuple:
    return tuple(value) if isinstance(value, list) else ()


def _spec(text: str, where: str) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier as exc:
        raise KnowledgeError(_("{where}: bad version range {text!r}: {error}").format(
            where=where, text=text, error=exc)) from None


def _read(path: Path) -> dict[str, Any]:
    from .tomlcache import load_toml

    try:
        return load_toml(path)  # parsed once per content (tomlcache.py)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KnowledgeError(_("{file}: cannot load knowledge file: {error}").format(
            file=path.name, error=exc)) from None


#: knowledge files read only when first asked for (wheels.toml: ~16 ms to parse, and only
#: the official-wheel questions of core/advise/ need it)
LAZY_FILES = ("wheels",)


class RawFiles(Mapping[str, Any]):
    """The knowledge files' raw data by name (the file's stem); a LAZY_FILES file is read
    when first looked up, so loading the knowledge base does not pay for it."""

    def __init__(self, folder: Path) -> None:
        paths = sorted(folder.glob("*.toml"))
        self._lazy = {p.stem: p for p in paths if p.stem in LAZY_FILES}
        self._data = {p.stem: _read(p) for p in paths if p.stem not in LAZY_FILES}

    def __getitem__(self, name: str) -> Any:
        if name not in self._data and name in self._lazy:
            self._data.setdefault(name, _read(self._lazy[name]))
        return self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._data, *self._lazy}))

    def __len__(self) -> int:
        return len({*self._data, *self._lazy})


def load_knowledge_from(folder: Path) -> KnowledgeBase:
    """Load the knowledge base from a folder of TOML files."""
    raw = RawFiles(folder)
    for required in ("sources", "releases", "cuda", "gpus", "rocm", "platforms"):
        if required not in raw:
            raise KnowledgeError(_("knowledge base: {file} is missing in {folder}").format(
                file=f"{required}.toml", folder=folder))
    try:
        return _assemble(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise KnowledgeError(_("knowledge base is malformed: {error}").format(
            error=repr(exc))) from None


def _assemble(raw: Mapping[str, Any]) -> KnowledgeBase:
    sources = {
        key: Source(key, s["title"], s["ref"], s.get("note", ""))
        for key, s in raw["sources"]["sources"].items()
    }
    releases: list[Release] = []
    for r in raw["releases"]["release"]:
        if r.get("patch_of"):
            releases.append(_patch_release(r, releases))
            continue
        releases.append(_release(r))
    gpu_ccs = tuple(
        GpuCC(
            g["cc"],
            g["arch"],
            g.get("tegra", False),
            tuple(re.compile(p, re.IGNORECASE) for p in g["patterns"]),
            _tuple(g["sources"]),
        )
        for g in raw["gpus"]["cc"]
    )
    rocm = raw["rocm"]
    gfx = tuple(
        GfxTarget(g["target"], g["version"], g["gpus"], _tuple(g["sources"])) for g in rocm["gfx"]
    )
    rocm_rel = tuple(
        RocmRelease(
            _spec(r["versions"], "rocm.toml"),
            _tuple(r["targets"]),
            _tuple(r["tensorflow"]),
            _tuple(r["sources"]),
        )
        for r in rocm["rocm"]
    )
    return KnowledgeBase(
        sources=sources,
        releases=tuple(releases),
        **_cuda_facts(raw["cuda"]),
        gpu_ccs=gpu_ccs,
        gfx=gfx,
        rocm=rocm_rel,
        rocm_default_targets=_tuple(rocm.get("default_targets", [])),
        platforms=raw["platforms"],
        raw=raw,
    )


def _release(r: Mapping[str, Any]) -> Release:
    """One full entry of releases.toml."""
    where = f"releases.toml {r['version']}"
    return Release(
        version=r["version"],
        series=r["series"],
        git_tag=r["git_tag"],
        python=_spec(r["python"], where),
        pythons=_tuple(r["pythons"]),
        requires_python=_spec(r["requires_python"], where),
        tested_compiler=r["tested_compiler"],
        tested_clang=r.get("tested_clang"),
        tested_gcc=r.get("tested_gcc"),
        bazel=r["bazel"],
        bazel_range=_spec(r["bazel_range"], where),
        tested_cuda=r["tested_cuda"],
        tested_cudnn=r["tested_cudnn"],
        wheel_cuda=r["wheel_cuda"],
        wheel_cudnn=r["wheel_cudnn"],
        wheel_compute_capabilities=_tuple(r["wheel_compute_capabilities"]),
        wheel_compiler=r["wheel_compiler"],
        wheel_tensorrt=r["wheel_tensorrt"],
        hermetic_cuda=r["hermetic_cuda"],
        hermetic_cuda_default=r.get("hermetic_cuda_default"),
        hermetic_cudnn_default=r.get("hermetic_cudnn_default"),
        cuda_list=r.get("cuda_list"),
        numpy=_spec(r["numpy"], where),
        numpy_by_python=tuple(
            (py, _spec(s, where)) for py, s in r.get("numpy_by_python", {}).items()
        ),
        manylinux=r["manylinux"],
        glibc_floor=r["glibc_floor"],
        and_cuda=r["and_cuda"],
        wheel_style=r["wheel_style"],
        cuda_wheel_config=r["cuda_wheel_config"],
        use_pywrap_rules=r["use_pywrap_rules"],
        windows_cuda=r["windows_cuda"],
        image=r["image"],
        image_clang=r.get("image_clang"),
        sources=_tuple(r["sources"]),
        unverified=_tuple(r.get("unverified", [])),
        hermetic_cc_toolchain=r.get("hermetic_cc_toolchain", False),
        hermetic_llvm_default=r.get("hermetic_llvm_default"),
        hermetic_llvm_versions=_tuple(r.get("hermetic_llvm_versions", [])),
        hermetic_nccl_default=r.get("hermetic_nccl_default"),
        hermetic_nvshmem_default=r.get("hermetic_nvshmem_default"),
        tag_commit=r.get("tag_commit", ""),
    )


def _cuda_facts(cuda: Mapping[str, Any]) -> dict[str, Any]:
    """cuda.toml as KnowledgeBase's keyword arguments."""
    floors = tuple(
        DriverFloor(f["cuda_major"], f["linux"], f.get("windows"), _tuple(f["sources"]))
        for f in cuda["driver_floor"]
    )
    toolkit_driver = {k: v for k, v in cuda["toolkit_driver"].items() if k != "sources"}
    unconfirmed = {k: v for k, v in cuda.get("toolkit_driver_unverified", {}).items()
                   if k not in ("sources", "unverified")}
    toolkit_driver.update(unconfirmed)
    archs = {
        a["sm"]: ArchInfo(
            a["sm"],
            a["min_cuda"],
            a.get("max_cuda"),
            a["min_clang"],
            a.get("note", ""),
            _tuple(a["sources"]),
        )
        for a in cuda["arch"]
    }
    sfx = cuda["suffix"]
    suffixes = Suffixes(sfx["a_min_cuda"], sfx["f_min_cuda"], sfx["a_min_clang"], sfx["f_min_clang"],
                        _tuple(sfx.get("tf_accepts", ["a"])), _tuple(sfx.get("sources", [])))
    clangs = {
        c["major"]: ClangInfo(
            c["major"],
            c["newest_cuda"],
            c.get("offsetof_warning", False),
            c.get("c23_warning", False),
            c.get("note", ""),
            _tuple(c["sources"]),
        )
        for c in cuda["clang"]
    }
    redist = {
        r["name"]: RedistList(
            r["name"],
            _tuple(r["cuda"]),
            _tuple(r["cudnn"]),
            r["complete"],
            _tuple(r["sources"]),
            r.get("unverified", ""),
            _tuple(r.get("cuda_without_nccl", [])),
            r.get("commit", ""),
        )
        for r in cuda["redist"].values()
    }
    cudnn = tuple(
        CudnnCompat(
            _spec(c["versions"], "cuda.toml cudnn"),
            _tuple(c["cuda_majors"]),
            c["min_cc"],
            _tuple(c["sources"]),
            c.get("unverified", ""),
        )
        for c in cuda["cudnn"]
    )
    return {"driver_floors": floors, "toolkit_driver": toolkit_driver,
            "toolkit_driver_unverified": tuple(unconfirmed), "archs": archs,
            "suffixes": suffixes, "clangs": clangs, "redist": redist, "cudnn": cudnn}


#: what a patch release's entry may state itself; the rest is its base entry's
PATCH_KEYS = {"version": str, "patch_of": str, "git_tag": str, "tag_commit": str,
              "requires_python": str, "sources": list, "unverified": list}


def _patch_release(r: Mapping[str, Any], earlier: list[Release]) -> Release:
    """A patch release (`patch_of = "2.19.0"`): its base entry with its own version, tag,
    tag commit and sources; what it does not state is the base's, marked UNVERIFIED."""
    base = next((e for e in earlier if e.version == r["patch_of"]), None)
    if base is None:
        raise KeyError(f"releases.toml {r['version']}: patch_of {r['patch_of']!r} is not "
                       "an earlier entry")
    extra = set(r) - set(PATCH_KEYS)
    if extra:
        raise KeyError(f"releases.toml {r['version']}: a patch entry cannot set {sorted(extra)}")
    where = f"releases.toml {r['version']}"
    requires = r.get("requires_python")
    return dataclasses.replace(
        base, version=r["version"], git_tag=r["git_tag"], tag_commit=r.get("tag_commit", ""),
        patch_of=base.version,
        requires_python=_spec(requires, where) if requires else base.requires_python,
        sources=_tuple(r["sources"]), unverified=_tuple(r.get("unverified", [])))


#: the knowledge texts people read, by file: (table path, keys); each is shown through `_()`
#: where it is used (runtime_diagnosis, diagnose, rules), so each needs a translation
_DISPLAY_KEYS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("failures", "failure"), ("title", "cause", "next_step")),
    (("runtime", "message"), ("title", "cause", "next_step", "next_step_wsl")),
    (("runtime", "check"), ("title", "cause", "next_step", "next_step_wsl", "log_cause",
                            "log_next_step")),
)
#: single platform texts shown by the checks (platforms.toml)
_DISPLAY_PLATFORM = (("windows", "message"), ("wsl2", "advice"), ("aarch64", "note"))
#: single texts of other tables, by path: the build estimate's assumptions (build/cost)
_DISPLAY_TEXTS = (("advise", "build_time", "unverified"), ("advise", "build_size", "unverified"))


def display_texts(kb: KnowledgeBase | None = None) -> set[str]:
    """Every knowledge-base text that is shown to people translated (`_(text)`).

    failures.toml's title/cause/next_step (build diagnosis), runtime.toml's
    title/cause/next_step/next_step_wsl (and a check's log_cause/log_next_step: runtime
    diagnosis), platforms.toml's Windows,
    WSL2 and aarch64 texts, the note of a GPU architecture a CUDA dropped (the check
    CC_DROPPED_BY_CUDA quotes it), and advise.toml's estimate caveats (Review). Source titles are document names and stay English.
    """
    kb = kb or load_knowledge()
    texts: set[str] = set()
    for path, keys in _DISPLAY_KEYS:
        table: Any = kb.raw
        for part in path:
            table = table.get(part, {}) if isinstance(table, Mapping) else {}
        for entry in table if isinstance(table, list) else []:
            texts.update(str(entry[k]) for k in keys if entry.get(k))
    for section, key in _DISPLAY_PLATFORM:
        text = kb.platforms.get(section, {}).get(key)
        if text:
            texts.add(str(text))
    texts.update(a.note for a in kb.archs.values() if a.note and a.max_cuda)
    for text_path in _DISPLAY_TEXTS:
        node: Any = kb.raw
        *parts, key = text_path
        for part in parts:
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        if isinstance(node, Mapping) and node.get(key):
            texts.add(str(node[key]))
    return texts


@cache
def load_knowledge() -> KnowledgeBase:
    """The shipped knowledge base (loaded once per process)."""
    return load_knowledge_from(resource_path("knowledge"))


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


def _wheel(w: dict[str, Any]) -> OfficialWheel:
    where = f"wheels.toml {w['package']} {w['release']} {w['arch']}"
    return OfficialWheel(
        release=w["release"],
        arch=w["arch"],
        package=w["package"],
        kind=w["kind"],
        installs=w.get("installs"),
        installed_by=w.get("installed_by"),
        pythons=_tuple(w["pythons"]),
        requires_python=_spec(w["requires_python"], where),
        platform_tags=_tuple(w["platform_tags"]),
        manylinux=w["manylinux"],
        glibc_floor=w["glibc_floor"],
        cpu_baseline=w.get("cpu_baseline"),
        sass=_tuple(w.get("sass", [])),
        ptx=_tuple(w.get("ptx", [])),
        build_cuda=w.get("build_cuda"),
        build_cudnn=w.get("build_cudnn"),
        and_cuda=_tuple(w.get("and_cuda", [])),
        and_cuda_cuda=w.get("and_cuda_cuda"),
        and_cuda_cudnn=w.get("and_cuda_cudnn"),
        and_cuda_nccl=w.get("and_cuda_nccl"),
        driver_min=w.get("driver_min"),
        driver_full=w.get("driver_full"),
        driver_ptx=w.get("driver_ptx"),
        files=tuple((f["name"], f["sha256"]) for f in w["files"]),
        read_on=w["read_on"],
        sources=_tuple(w["sources"]),
        unverified=_tuple(w.get("unverified", [])),
        sass_partial=_tuple(w.get("sass_partial", [])),
    )


def all_official_wheels(kb: KnowledgeBase) -> tuple[OfficialWheel, ...]:
    """Every entry of wheels.toml (empty when the file is absent)."""
    try:
        return tuple(_wheel(w) for w in kb.raw.get("wheels", {}).get("wheel", []))
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
