"""Reading the knowledge files: TOML files to the facts' dataclasses, with one error
(KnowledgeError) for a file that cannot be read or an entry that is malformed."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..errors import KnowledgeError
from ..i18n import _

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from .facts import (
    ArchInfo,
    ClangInfo,
    CudnnCompat,
    DriverFloor,
    OfficialWheel,
    RedistList,
    Release,
    Suffixes,
)


def as_tuple(value: Any) -> tuple:
    """A TOML list as a tuple; anything else (a missing key) as ()."""
    return tuple(value) if isinstance(value, list) else ()


def parse_spec(text: str, where: str) -> SpecifierSet:
    """A version range (">=3.9,<3.13"); KnowledgeError naming `where` when it is malformed."""
    try:
        return SpecifierSet(text)
    except InvalidSpecifier as exc:
        raise KnowledgeError(_("{where}: bad version range {text!r}: {error}").format(
            where=where, text=text, error=exc)) from None


def read_toml(path: Path) -> dict[str, Any]:
    """A knowledge file's data; KnowledgeError naming the file when it cannot be read."""
    from ..tomlcache import load_toml

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
        self._data = {p.stem: read_toml(p) for p in paths if p.stem not in LAZY_FILES}

    def __getitem__(self, name: str) -> Any:
        if name not in self._data and name in self._lazy:
            self._data.setdefault(name, read_toml(self._lazy[name]))
        return self._data[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._data, *self._lazy}))

    def __len__(self) -> int:
        return len({*self._data, *self._lazy})



def parse_release(r: Mapping[str, Any]) -> Release:
    """One full entry of releases.toml."""
    where = f"releases.toml {r['version']}"
    return Release(
        version=r["version"],
        series=r["series"],
        git_tag=r["git_tag"],
        python=parse_spec(r["python"], where),
        pythons=as_tuple(r["pythons"]),
        requires_python=parse_spec(r["requires_python"], where),
        tested_compiler=r["tested_compiler"],
        tested_clang=r.get("tested_clang"),
        tested_gcc=r.get("tested_gcc"),
        bazel=r["bazel"],
        bazel_range=parse_spec(r["bazel_range"], where),
        tested_cuda=r["tested_cuda"],
        tested_cudnn=r["tested_cudnn"],
        wheel_cuda=r["wheel_cuda"],
        wheel_cudnn=r["wheel_cudnn"],
        wheel_compute_capabilities=as_tuple(r["wheel_compute_capabilities"]),
        wheel_compiler=r["wheel_compiler"],
        wheel_tensorrt=r["wheel_tensorrt"],
        hermetic_cuda=r["hermetic_cuda"],
        hermetic_cuda_default=r.get("hermetic_cuda_default"),
        hermetic_cudnn_default=r.get("hermetic_cudnn_default"),
        cuda_list=r.get("cuda_list"),
        numpy=parse_spec(r["numpy"], where),
        numpy_by_python=tuple(
            (py, parse_spec(s, where)) for py, s in r.get("numpy_by_python", {}).items()
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
        sources=as_tuple(r["sources"]),
        unverified=as_tuple(r.get("unverified", [])),
        hermetic_cc_toolchain=r.get("hermetic_cc_toolchain", False),
        hermetic_llvm_default=r.get("hermetic_llvm_default"),
        hermetic_llvm_versions=as_tuple(r.get("hermetic_llvm_versions", [])),
        hermetic_nccl_default=r.get("hermetic_nccl_default"),
        hermetic_nvshmem_default=r.get("hermetic_nvshmem_default"),
        tag_commit=r.get("tag_commit", ""),
    )


def cuda_facts(cuda: Mapping[str, Any]) -> dict[str, Any]:
    """cuda.toml as KnowledgeBase's keyword arguments."""
    floors = tuple(
        DriverFloor(f["cuda_major"], f["linux"], f.get("windows"), as_tuple(f["sources"]))
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
            as_tuple(a["sources"]),
        )
        for a in cuda["arch"]
    }
    sfx = cuda["suffix"]
    suffixes = Suffixes(sfx["a_min_cuda"], sfx["f_min_cuda"], sfx["a_min_clang"],
                        sfx["f_min_clang"], as_tuple(sfx.get("tf_accepts", ["a"])), as_tuple(sfx.get("sources", [])))
    clangs = {
        c["major"]: ClangInfo(
            c["major"],
            c["newest_cuda"],
            c.get("offsetof_warning", False),
            c.get("c23_warning", False),
            c.get("note", ""),
            as_tuple(c["sources"]),
        )
        for c in cuda["clang"]
    }
    redist = {
        r["name"]: RedistList(
            r["name"],
            as_tuple(r["cuda"]),
            as_tuple(r["cudnn"]),
            r["complete"],
            as_tuple(r["sources"]),
            r.get("unverified", ""),
            as_tuple(r.get("cuda_without_nccl", [])),
            r.get("commit", ""),
            r.get("llvm_default", ""),
            as_tuple(r.get("llvm_versions", [])),
        )
        for r in cuda["redist"].values()
    }
    cudnn = tuple(
        CudnnCompat(
            parse_spec(c["versions"], "cuda.toml cudnn"),
            as_tuple(c["cuda_majors"]),
            c["min_cc"],
            as_tuple(c["sources"]),
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


def patch_release(r: Mapping[str, Any], earlier: list[Release]) -> Release:
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
        requires_python=parse_spec(requires, where) if requires else base.requires_python,
        sources=as_tuple(r["sources"]), unverified=as_tuple(r.get("unverified", [])))


def parse_wheel(w: dict[str, Any]) -> OfficialWheel:
    """One [[wheel]] entry of wheels.toml."""
    where = f"wheels.toml {w['package']} {w['release']} {w['arch']}"
    return OfficialWheel(
        release=w["release"],
        arch=w["arch"],
        package=w["package"],
        kind=w["kind"],
        installs=w.get("installs"),
        installed_by=w.get("installed_by"),
        pythons=as_tuple(w["pythons"]),
        requires_python=parse_spec(w["requires_python"], where),
        platform_tags=as_tuple(w["platform_tags"]),
        manylinux=w["manylinux"],
        glibc_floor=w["glibc_floor"],
        cpu_baseline=w.get("cpu_baseline"),
        sass=as_tuple(w.get("sass", [])),
        ptx=as_tuple(w.get("ptx", [])),
        build_cuda=w.get("build_cuda"),
        build_cudnn=w.get("build_cudnn"),
        and_cuda=as_tuple(w.get("and_cuda", [])),
        and_cuda_cuda=w.get("and_cuda_cuda"),
        and_cuda_cudnn=w.get("and_cuda_cudnn"),
        and_cuda_nccl=w.get("and_cuda_nccl"),
        driver_min=w.get("driver_min"),
        driver_full=w.get("driver_full"),
        driver_ptx=w.get("driver_ptx"),
        files=tuple((f["name"], f["sha256"]) for f in w["files"]),
        read_on=w["read_on"],
        sources=as_tuple(w["sources"]),
        unverified=as_tuple(w.get("unverified", [])),
        sass_partial=as_tuple(w.get("sass_partial", [])),
    )
