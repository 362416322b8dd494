"""Lint of the knowledge base: every entry loads, parses, is ordered and has a source."""

from __future__ import annotations

import re

import pytest
from packaging.version import Version


def _all_source_lists(node, path=""):
    """Yield (path, sources) for every table in the raw data that carries `sources`."""
    if isinstance(node, dict):
        if "sources" in node and path != "sources":
            yield path, node["sources"]
        for key, value in node.items():
            if key != "sources":
                yield from _all_source_lists(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _all_source_lists(item, f"{path}[{i}]")


def test_every_source_reference_exists_and_every_entry_has_one(kb):
    for path, sources in _all_source_lists({k: v for k, v in kb.raw.items() if k != "sources"}):
        assert isinstance(sources, list) and sources, f"{path}: empty sources"
        for key in sources:
            assert key in kb.sources, f"{path}: unknown source {key!r}"
    # every list-of-tables entry carries sources
    for name, data in kb.raw.items():
        for key, value in data.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                for i, entry in enumerate(value):
                    assert entry.get("sources"), f"{name}.toml {key}[{i}] has no sources"


def test_sources_have_titles_and_refs(kb):
    assert len(kb.sources) >= 20
    for source in kb.sources.values():
        assert source.title.strip() and source.ref.strip()


def test_releases_cover_2_10_to_2_22_and_master(kb):
    series = sorted({r.series for r in kb.releases}, key=Version)
    assert series == [f"2.{n}" for n in range(10, 24)]
    assert kb.releases[-1].is_master and kb.releases[-1].series == "2.23"
    assert [r.version for r in kb.releases if r.is_prerelease] == ["2.22.0rc0"]
    # every patch release PyPI lists for these series, each its own entry
    patches = {r.version: r.patch_of for r in kb.releases if r.patch_of}
    assert patches == {"2.10.1": "2.10.0", "2.11.1": "2.11.0", "2.12.1": "2.12.0",
                       "2.13.1": "2.13.0", "2.14.1": "2.14.0", "2.15.1": "2.15.0",
                       "2.16.2": "2.16.1", "2.17.1": "2.17.0", "2.18.1": "2.18.0",
                       "2.19.1": "2.19.0"}


def test_release_invariants(kb):
    previous = None
    for r in kb.releases:
        if not r.is_master:
            v = Version(r.version)
            # TF's tags: v2.19.1, and v2.22.0-rc0 for a release candidate
            tag = f"v{v.base_version}" + (f"-{v.pre[0]}{v.pre[1]}" if v.pre else "")
            assert r.git_tag == tag
            if previous:
                assert v > previous, "releases must be in ascending order"
            previous = v
        # python range is consistent with the listed pythons
        assert r.pythons and all(p in r.python for p in r.pythons)
        lo = Version(r.pythons[0])
        assert Version(f"{lo.major}.{lo.minor - 1}") not in r.python
        assert Version(r.bazel) in r.bazel_range
        for cc in r.wheel_compute_capabilities:
            assert re.fullmatch(r"(sm|compute)_\d{2,3}", cc)
        assert r.wheel_style in ("build_pip_package", "wheel")
        assert r.manylinux in kb.platforms["manylinux"]
        assert kb.platforms["manylinux"][r.manylinux] == r.glibc_floor
        assert r.sources
        if r.hermetic_cuda:
            redist = kb.redist[r.cuda_list]
            assert r.hermetic_cuda_default in redist.cuda
            assert r.hermetic_cudnn_default in redist.cudnn
        if r.tested_clang:
            assert kb.clang(r.tested_clang) is not None
        if r.image_clang:  # the recipes' default compiler: a clang the knowledge base knows
            assert kb.clang(r.image_clang) is not None
        if r.hermetic_cuda:
            redist = kb.redist[r.cuda_list]
            assert set(redist.cuda_without_nccl) <= set(redist.cuda)
            assert r.hermetic_cuda_default not in redist.cuda_without_nccl
        # wheel style history: build_pip_package up to 2.16, :wheel from 2.17
        if not r.is_master:
            assert (r.wheel_style == "wheel") == (Version(r.series) >= Version("2.17"))
            assert r.cuda_wheel_config == (Version(r.series) >= Version("2.18"))
            assert r.hermetic_cuda == (Version(r.series) >= Version("2.18"))
            assert r.and_cuda == (Version(r.series) >= Version("2.14"))


def test_release_lookup(kb):
    assert kb.release("2.18.0").series == "2.18"
    assert kb.release("2.18.1").series == "2.18"
    assert kb.release("2.18.1").git_tag == "v2.18.1"  # its own source, not 2.18.0's
    assert kb.release("2.18.2") is None  # an unknown patch level is not its series' release
    assert kb.release("2.22.0-rc0") is kb.release("2.22.0rc0")
    assert kb.latest_release().version == "2.21.0"  # never a release candidate
    assert kb.release("master").is_master
    assert kb.release("2.18") is None
    assert kb.release("3.0.0") is None
    assert kb.release("banana") is None


def test_driver_floors_and_toolkit_drivers_parse_and_ascend(kb):
    floors = [Version(kb.driver_floor(m).linux) for m in (11, 12, 13)]
    assert floors == sorted(floors)
    assert str(kb.driver_floor(12).linux) == "525.60.13"
    items = sorted(kb.toolkit_driver.items(), key=lambda kv: Version(kv[0]))
    drivers = [Version(d) for _, d in items]
    assert drivers == sorted(drivers), "toolkit drivers must not go down as CUDA goes up"


def test_arch_table_ranges_are_ordered(kb):
    for sm, arch in kb.archs.items():
        assert Version(arch.min_cuda)
        if arch.max_cuda:
            assert Version(arch.min_cuda) <= Version(arch.max_cuda), sm
        assert arch.min_clang >= 3
    assert kb.arch(35).max_cuda == "11.8"
    assert kb.arch(120).min_cuda == "12.8"


def test_redist_lists_are_sorted_full_versions(kb):
    for redist in kb.redist.values():
        versions = [Version(v) for v in redist.cuda]
        assert versions == sorted(versions) and len(set(versions)) == len(versions)
        cudnn = [Version(v) for v in redist.cudnn]
        assert cudnn == sorted(cudnn)
        assert redist.sources


def test_cudnn_ranges_do_not_overlap(kb):
    for probe in ["8.1.0", "8.9.7.29", "9.3.0", "9.12.0", "9.17.0", "9.22.0"]:
        hits = [c for c in kb.cudnn if Version(probe) in c.versions]
        assert len(hits) == 1, probe


def test_gpu_table(kb):
    ccs = kb.known_ccs()
    assert "8.6" in ccs and "12.0" in ccs and "3.5" in ccs
    for name, cc in [("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
                     ("Tesla K80", "3.7"), ("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA H100 80GB HBM3", "9.0"),
                     ("NVIDIA GeForce RTX 5090", "12.0"), ("NVIDIA B200", "10.0"), ("Tesla T4", "7.5"),
                     ("NVIDIA GeForce GTX 1080 Ti", "6.1"), ("NVIDIA L4", "8.9"), ("NVIDIA A10G", "8.6"),
                     ("NVIDIA RTX A6000", "8.6"), ("Quadro K2200", "5.0"), ("Tesla V100-SXM2-16GB", "7.0")]:
        assert kb.cc_for_gpu_name(name) == cc, name
    assert kb.cc_for_gpu_name("Some Unknown Accelerator") is None
    assert kb.is_tegra("8.7") and not kb.is_tegra("8.6")


def test_rocm_table(kb):
    for g in kb.gfx:
        major, minor, step = g.version // 10000, (g.version // 100) % 100, g.version % 100
        assert g.target == f"gfx{major}{minor}{step:x}", g
    assert kb.rocm_release("6.2.0").tensorflow[0] == "2.16.1"


def test_unverified_facts_are_marked(kb):
    text = "\n".join(str(v) for v in kb.raw.values())
    assert "UNVERIFIED" in text or "unverified" in text
    assert any(r.unverified for r in kb.releases)


def test_wheels_toml_is_read_on_first_use_only(tmp_path):
    """Loading the base does not parse wheels.toml (~16 ms, bench/knowledge_load.py); the
    first official-wheel question does, and its errors surface there."""
    import shutil

    from tfwizard.core.errors import KnowledgeError
    from tfwizard.core.knowledge import load_knowledge_from
    from tfwizard.core.resources import resource_path

    folder = tmp_path / "knowledge"
    shutil.copytree(resource_path("knowledge"), folder)
    good = load_knowledge_from(folder)
    assert good.official_wheel("2.18.0", "x86_64") is not None
    assert "wheels" in good.raw and good.raw["wheels"]["wheel"]
    (folder / "wheels.toml").write_text("this is [not toml")
    kb = load_knowledge_from(folder)  # no error: wheels.toml is not read yet
    assert kb.release("2.18.0") == good.release("2.18.0")
    with pytest.raises(KnowledgeError, match="wheels.toml"):
        kb.official_wheel("2.18.0", "x86_64")
