"""Lint of wheels.toml (what each official wheel needs) and of its loader, and its agreement
with releases.toml, cuda.toml and platforms.toml, which came from other readings."""

from __future__ import annotations

import re

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from tfwizard.core.knowledge import all_official_wheels

ARCHES = ("x86_64", "aarch64")


def _glibc(platform: str) -> str:
    legacy = {"manylinux2014": "2.17", "manylinux2010": "2.12", "manylinux1": "2.5"}
    for alias, glibc in legacy.items():
        if platform.startswith(alias + "_"):
            return glibc
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_\w+", platform)
    assert m, platform
    return f"{m.group(1)}.{m.group(2)}"


def _raw(kb):
    return kb.raw["wheels"]["wheel"]


def _raw_entry(kb, w):
    return next(r for r in _raw(kb) if (r["release"], r["arch"], r["package"])
                == (w.release, w.arch, w.package))


def test_every_release_is_covered_and_master_is_not(kb):
    wheels = all_official_wheels(kb)
    # every final release; a patch release whose wheels were not read has its base's, and a
    # release candidate's may be missing (wheels.toml is read from PyPI's finals)
    releases = [r for r in kb.releases if not r.is_master and not r.is_prerelease]
    for rel in releases:
        x86 = {w.package: w for w in kb.official_wheels(rel.version, "x86_64")}
        assert x86["tensorflow"].kind == "gpu", rel.version
        assert x86["tensorflow-cpu"].kind == "cpu", rel.version
        arm = kb.official_wheel(rel.version, "aarch64")
        assert arm is not None and arm.kind == "cpu", rel.version
    read = {w.release for w in wheels}
    assert {r.patch_of or r.version for r in releases} <= read
    assert read <= {r.version for r in kb.releases if not r.is_master}
    assert kb.official_wheels("master", "x86_64") == ()
    assert {w.arch for w in wheels} == set(ARCHES)
    keys = [(w.release, w.arch, w.package) for w in wheels]
    assert len(keys) == len(set(keys)), "one entry per (release, arch, package)"


def test_sources_and_unverified_marks(kb):
    for raw in _raw(kb):
        where = f"{raw['package']} {raw['release']} {raw['arch']}"
        assert "pypi-wheel-files" in raw["sources"], where
        cited = set()
        for fact, keys in raw["fact_sources"].items():
            for key in keys.split():
                assert key in kb.sources, f"{where}: {fact} cites unknown {key!r}"
                cited.add(key)
            # a fact not (only) read from the wheel says so
            if keys != "pypi-wheel-files":
                assert any(u.startswith(fact + ":") for u in raw["unverified"]), (where, fact)
        assert cited == set(raw["sources"]), where
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw["read_on"])


def test_files_are_named_hashed_and_match_the_entry(kb):
    for w in all_official_wheels(kb):
        assert w.files, w
        pythons = []
        for name, sha in w.files:
            assert re.fullmatch(r"[0-9a-f]{64}", sha), name
            dist, version, _, tags = parse_wheel_filename(name)
            assert dist == canonicalize_name(w.package) and str(version) == w.release
            assert {t.platform for t in tags} == set(w.platform_tags), name
            (interp,) = {t.interpreter for t in tags}
            pythons.append(f"{interp[2]}.{interp[3:]}")
        assert pythons == list(w.pythons)


def test_versions_parse_and_pythons_agree_with_requires_python(kb):
    for w in all_official_wheels(kb):
        versions = [Version(p) for p in w.pythons]
        assert versions == sorted(versions) and len(set(versions)) == len(versions), w
        assert all(p in w.requires_python for p in w.pythons), w
        for spec in (w.and_cuda_cuda, w.and_cuda_cudnn, w.and_cuda_nccl, w.build_cuda,
                     w.driver_min, w.driver_full, w.driver_ptx):
            if spec is not None:
                Version(spec)


def test_glibc_floor_comes_from_the_platform_tags(kb):
    for w in all_official_wheels(kb):
        assert all(p.endswith("_" + w.arch) for p in w.platform_tags), w
        assert {_glibc(p) for p in w.platform_tags} == {w.glibc_floor}, w
        assert kb.platforms["manylinux"][w.manylinux] == w.glibc_floor, w
        assert w.manylinux + "_" + w.arch in w.platform_tags


def test_sass_and_ptx_tokens_and_the_cuda_that_built_them(kb):
    for w in all_official_wheels(kb):
        for t in w.sass:
            assert re.fullmatch(r"sm_\d{2,3}[af]?", t), t
        for t in w.ptx:
            assert re.fullmatch(r"compute_\d{2,3}[af]?", t), t
        if w.kind != "gpu":
            assert not w.sass and not w.ptx and w.build_cuda is None, w
            continue
        assert w.sass and w.ptx, w
        sass = [Version(c) for c in w.sass_ccs]
        assert sass == sorted(sass)
        # the PTX is the newest target: the one later GPUs JIT
        assert all(Version(p) == max(sass) for p in w.ptx_ccs), w
        # a compute_XY compiles to SASS sm_XY too (tf-cuda-rules), which TF's generated
        # kernels lack (tf-wheel-fatbins): sass_partial names exactly those
        assert list(w.sass_partial) == ["sm_" + p.split("_")[1] for p in w.ptx], w
        assert set(w.sass_partial) <= set(w.sass), w
        # the CUDA the wheel was built with can target every one of them
        for cc in w.sass_ccs + w.ptx_ccs:
            arch = kb.arch(int(cc.replace(".", "")))
            assert arch is not None, cc
            assert Version(arch.min_cuda) <= Version(w.build_cuda), (w.release, cc)
            if arch.max_cuda:
                assert Version(w.build_cuda) <= Version(arch.max_cuda + ".99"), (w.release, cc)
    assert kb.official_wheel("2.18.0", "x86_64").sass_ccs == ("6.0", "7.0", "8.0", "8.9", "9.0")
    assert kb.official_wheel("2.18.0", "x86_64").ptx_ccs == ("9.0",)
    assert kb.official_wheel("2.18.0", "x86_64").sass_partial == ("sm_90",)


def test_and_cuda_summary_agrees_with_the_requirements(kb):
    for w in all_official_wheels(kb):
        reqs = {Requirement(r).name: Requirement(r) for r in w.and_cuda}
        for field, prefix in (("and_cuda_cuda", "nvidia-cuda-runtime-cu"),
                              ("and_cuda_cudnn", "nvidia-cudnn-cu"),
                              ("and_cuda_nccl", "nvidia-nccl-cu")):
            names = [n for n in reqs if n.startswith(prefix)]
            value = getattr(w, field)
            if not names:
                assert value is None, (w, field)
                continue
            (name,) = names
            assert value is not None and Version(value) in reqs[name].specifier, (w, field)
            lower = [s.version for s in reqs[name].specifier if s.operator in ("==", ">=")]
            assert lower == [value], (w, field)
        if w.kind == "gpu" and w.and_cuda:
            assert Version(w.and_cuda_cuda).major == Version(w.build_cuda).major
            assert f"cu{Version(w.build_cuda).major}" in next(iter(reqs))
            assert Version(w.and_cuda_cudnn).major == int(w.build_cudnn)


def test_driver_floors_come_from_cuda_toml(kb):
    for w in all_official_wheels(kb):
        if w.kind != "gpu":
            assert w.driver_min is None and w.driver_ptx is None, w
            continue
        build = Version(w.build_cuda)
        assert w.driver_min == kb.driver_floor(build.major).linux
        ptx_key = w.build_cuda if w.build_cuda in kb.toolkit_driver else f"{w.build_cuda}.0"
        assert w.driver_ptx == kb.toolkit_driver[ptx_key]
        pulled = Version(w.and_cuda_cuda or w.build_cuda)
        assert w.driver_full == kb.toolkit_driver[f"{pulled.major}.{pulled.minor}.0"]
        assert Version(w.driver_min) <= Version(w.driver_full)
        assert Version(w.driver_min) <= Version(w.driver_ptx)
    w = kb.official_wheel("2.18.0", "x86_64")
    assert (w.driver_min, w.driver_ptx) == ("525.60.13", "555.42.06")


def test_cpu_baseline_agrees_with_the_recorded_machine_code(kb):
    for w in all_official_wheels(kb):
        raw = _raw_entry(kb, w)
        if w.kind == "shim":
            assert w.cpu_baseline is None and "cpu_probe" not in raw
            continue
        probe = raw["cpu_probe"]
        assert probe["file"] in {name for name, _ in w.files}
        if w.arch == "x86_64":
            assert w.cpu_baseline == "avx"
            # compiled code is VEX-encoded (-mavx) and uses no FMA, AVX2 or AVX-512
            assert probe["vex"] >= 0.9 * (probe["vex"] + probe["legacy_sse"]) > 0
            assert probe["fma"] == probe["avx2"] == probe["avx512"] == 0
        else:
            assert w.cpu_baseline == "armv8-a"
            assert probe["instructions"] > 1000
            assert all(probe[k] == 0 for k in ("lse", "dotprod", "sve", "fp16", "rcpc"))


def test_shims_lead_to_the_wheel_they_install(kb):
    shims = [w for w in all_official_wheels(kb) if w.kind == "shim"]
    assert shims
    for shim in shims:
        target = Requirement(shim.installs)
        assert str(target.specifier) == f"=={shim.release}"
        got = kb.official_wheel(shim.release, shim.arch, shim.package)
        assert got is not None and got.package == target.name and got.installed_by == shim.package
        assert got.kind == "cpu" and got.pythons == shim.pythons
    assert kb.official_wheel("2.15.0", "aarch64").package == "tensorflow-cpu-aws"
    assert kb.official_wheel("2.16.1", "aarch64").package == "tensorflow"


def test_first_full_aarch64_tensorflow_wheel_matches_platforms_toml(kb):
    full = [Version(w.release) for w in all_official_wheels(kb)
            if w.arch == "aarch64" and w.package == "tensorflow" and w.kind != "shim"]
    first = min(full)
    assert f"{first.major}.{first.minor}" == kb.platforms["aarch64"]["first_google_wheel_series"]
    # and no aarch64 wheel is a CUDA build (platforms.toml's aarch64 note)
    assert all(w.kind != "gpu" for w in all_official_wheels(kb) if w.arch == "aarch64")


def test_agrees_with_the_wheel_facts_of_releases_toml(kb):
    for rel in kb.releases:
        if rel.is_master:
            continue
        gpu = kb.official_wheel(rel.version, "x86_64")
        if gpu is None:  # a release candidate wheels.toml lacks
            assert rel.is_prerelease, rel.version
            continue
        raw = _raw_entry(kb, gpu)
        # build_info's list: the cubin-only targets, then the compute_ ones
        built = tuple(t for t in gpu.sass if t not in gpu.sass_partial) + gpu.ptx
        assert built == rel.wheel_compute_capabilities, rel.version
        assert gpu.build_cuda == rel.wheel_cuda and gpu.build_cudnn == rel.wheel_cudnn
        assert raw["build_tensorrt"] == rel.wheel_tensorrt, rel.version
        assert _compiler(raw["cpu_compiler"]) == _compiler(rel.wheel_compiler), rel.version
        assert gpu.manylinux == rel.manylinux and gpu.glibc_floor == rel.glibc_floor
        assert gpu.pythons == rel.pythons, rel.version
        assert gpu.requires_python == rel.requires_python, rel.version
        assert bool(gpu.and_cuda) == rel.and_cuda, rel.version
        for w in kb.official_wheels(rel.version, "x86_64") + kb.official_wheels(
                rel.version, "aarch64"):
            assert w.pythons == rel.pythons and w.glibc_floor == rel.glibc_floor, w


def _compiler(text: str) -> str:
    """"/usr/lib/llvm-18/bin/clang" and "clang 18" alike -> "clang18"."""
    m = re.search(r"(clang|gcc)", text)
    major = re.search(r"(\d+)", text.replace("/dt9", ""))
    return (m.group(1) if m else text) + (major.group(1) if major else "")


@pytest.mark.parametrize("version", ["2.18.1", "2.18.0"])
def test_lookup_by_series(kb, version):
    assert {w.release for w in kb.official_wheels(version, "x86_64")} == {"2.18.0"}


def test_lookup_misses(kb):
    assert kb.official_wheels("3.0.0", "x86_64") == ()
    assert kb.official_wheels("2.18.0", "ppc64le") == ()
    assert kb.official_wheel("2.18.0", "x86_64", "tensorflow-rocm") is None
