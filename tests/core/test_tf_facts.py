"""The knowledge base against what TensorFlow's own files say (issue 14).

tests/data/tf-facts/ states, per release, the file and commit each fact was read from and
the values as read. These tests derive the knowledge base's values from there and compare;
they also hold the checks the issue was closed on (a refused CUDA names the release's real
list, no unpublished image, configure finds cuDNN in the 2.16/2.17 images).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tfwizard.core.building.plan import configure
from tfwizard.core.building.plan.configure import configure_env, simulate_find_cuda
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import Recipe
from tfwizard.core.rules import evaluate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

FACTS_DIR = Path(__file__).resolve().parents[1] / "data" / "tf-facts"
FACTS = {p.stem: tomllib.loads(p.read_text("utf-8")) for p in sorted(FACTS_DIR.glob("*.toml"))}
#: fact table -> the knowledge-base key an UNVERIFIED note names
NOTE_KEY = {"hermetic_lists": "cuda_list", "hermetic_llvm": "hermetic_llvm_*", "image": "image", "image_compiler": "image_clang",
            "hermetic_defaults": "hermetic_*_default",
            "compute_capabilities": "compute_capabilities", "bazel": "bazel"}
#: hermetic_defaults' keys -> the Release fields they give
DEFAULT_FIELDS = {"cuda": "hermetic_cuda_default", "cudnn": "hermetic_cudnn_default",
                  "nccl": "hermetic_nccl_default", "nvshmem": "hermetic_nvshmem_default"}


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _release(kb: Any, facts: dict[str, Any]) -> Any:
    release = kb.release(facts["release"])
    assert release is not None and release.version == facts["release"]
    return release


def _tables(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in facts.items() if isinstance(v, dict)}


def test_the_facts_cover_the_releases_the_audit_read():
    assert sorted(FACTS) == ["2.16", "2.17", "2.18", "2.19", "2.20", "2.21", "2.22"]
    for series, facts in FACTS.items():
        assert facts["release"].startswith(series + ".")
        for patch in facts.get("patch", []):
            assert patch["release"].startswith(series + ".")


@pytest.mark.parametrize("series", sorted(FACTS))
def test_each_patch_release_is_its_own_entry_and_tag(series, kb):
    """Audit 4 R3: 2.19.1 is 10 commits after v2.19.0 (its wheel's GIT_VERSION
    v2.19.0-10-gf4247ebb6f9): a patch release plans its own tag and commit."""
    facts = FACTS[series]
    for patch in facts.get("patch", []):
        entry = kb.release(patch["release"])
        assert entry is not None and entry.version == patch["release"]
        assert entry.git_tag == "v" + patch["release"]
        assert entry.patch_of == facts["release"]
        assert entry.tag_commit == patch["tag_commit"]
        if patch["tag_commit"]:
            assert patch["tag_commit"] in kb.sources["tf-serving-tags"].ref


@pytest.mark.parametrize("series", sorted(FACTS))
def test_hermetic_lists_are_the_release_s_own(series, kb):
    facts = FACTS[series]
    release = _release(kb, facts)
    lists = facts.get("hermetic_lists")
    if lists is None:
        assert not release.hermetic_cuda and release.cuda_list is None
        return
    redist = kb.redist[release.cuda_list]
    assert list(redist.cuda) == lists["cuda"]
    assert list(redist.cudnn) == lists["cudnn"]
    assert list(redist.cuda_without_nccl) == lists["cuda_without_nccl"]
    assert set(lists["cuda_without_nccl"]) <= set(lists["cuda"])
    # an inferred list gives warnings, a read one errors
    assert bool(redist.unverified) == (not lists["verified"])
    assert redist.complete


@pytest.mark.parametrize("series", ["2.21", "2.22"])
def test_the_hermetic_llvm_is_the_pinned_commit_s(series, kb):
    facts = FACTS[series]
    llvm, release = facts["hermetic_llvm"], _release(kb, facts)
    redist = kb.redist[release.cuda_list]
    assert redist.commit == llvm["commit"] == facts["hermetic_lists"]["commit"]
    assert (redist.llvm_default, list(redist.llvm_versions)) == (llvm["default"],
                                                                 llvm["versions"])
    assert (release.hermetic_llvm_default, list(release.hermetic_llvm_versions)) == (
        llvm["default"], llvm["versions"])


def test_no_two_releases_share_a_hermetic_list(kb):
    # a patch release shares its base's list (its own files were not read)
    lists = [r.cuda_list for r in kb.releases if r.hermetic_cuda and not r.patch_of]
    assert len(set(lists)) == len(lists), lists
    used = set(lists)
    assert set(kb.redist) == used, f"lists no release uses: {set(kb.redist) - used}"


@pytest.mark.parametrize("series", sorted(FACTS))
def test_the_image_is_the_one_tf_ci_used(series, kb):
    fact = FACTS[series]["image"]
    release = _release(kb, FACTS[series])
    if "value" in fact:
        expected = fact["value"]
    else:
        name, _eq, value = fact["read"].partition("=")
        assert name == "TFCI_DOCKER_IMAGE"
        expected = value.replace("${TFCI_PYTHON_VERSION}", "{python}")
    assert release.image == expected


@pytest.mark.parametrize("series", sorted(FACTS))
def test_image_compiler_and_build_defaults(series, kb):
    facts = FACTS[series]
    release = _release(kb, facts)
    assert release.image_clang == facts["image_compiler"]["clang"]
    assert release.default_clang == release.image_clang
    for key, name in DEFAULT_FIELDS.items():
        if key in facts.get("hermetic_defaults", {}):
            assert getattr(release, name) == facts["hermetic_defaults"][key], name
    if "bazel" in facts:
        assert release.bazel == facts["bazel"]["value"]
    if "pythons" in facts:
        assert list(release.pythons) == facts["pythons"]["value"]
    if "compute_capabilities" in facts:
        assert list(release.wheel_compute_capabilities) == facts["compute_capabilities"]["value"]


@pytest.mark.parametrize("series", sorted(FACTS))
def test_every_fact_cites_the_file_and_commit_it_was_read_from(series, kb):
    facts = FACTS[series]
    release = _release(kb, facts)
    for table, fact in _tables(facts).items():
        entry_sources = release.sources
        if table == "hermetic_lists":
            entry_sources = kb.redist[release.cuda_list].sources
        if fact["repo"] == "pypi.org":
            assert "pypi-wheels" in entry_sources, table
            continue
        if not fact["commit"]:
            assert not fact["verified"], f"{table}: nothing read, so it cannot be verified"
            continue
        citing = [key for key in entry_sources
                  if fact["path"] in kb.sources[key].ref and fact["commit"] in kb.sources[key].ref]
        assert citing, f"{series} {table}: no cited source names {fact['path']} @ {fact['commit']}"
    assert release.tag_commit == facts["tag_commit"]
    if "serving" in facts["tag_commit_from"]:
        assert facts["tag_commit"] in kb.sources["tf-serving-tags"].ref


@pytest.mark.parametrize("series", sorted(FACTS))
def test_indirect_facts_are_unverified_in_the_knowledge_base(series, kb):
    facts = FACTS[series]
    release = _release(kb, facts)
    heads = set()
    for note in release.unverified:
        head = note.split(":", 1)[0]
        heads.update(re.split(r"\s+and\s+|,\s*", head))
    for table, fact in _tables(facts).items():
        if fact["verified"] or table not in NOTE_KEY:
            continue
        assert NOTE_KEY[table] in heads, f"{series}: {table} is indirect but not UNVERIFIED"


# -- configure finds cuDNN in the 2.16 / 2.17 images (audit M4) -------------------------------


def test_the_configure_search_is_find_cuda_config_s():
    for series in ("2.16", "2.17"):
        search = FACTS[series]["cuda_search"]
        assert configure.CUDA_DEFAULT_BASES == tuple(search["default_bases"])
        assert configure.CUDA_HEADER_DIRS == tuple(search["header_dirs"])
        assert configure.CUDNN_HEADERS == tuple(search["cudnn_headers"])
        assert search["tf_cuda_paths_replaces_defaults"]
        assert configure.cuda_search_bases({"TF_CUDA_PATHS": "/a,/b"}) == ["/a", "/b"]


def _image_headers(image: dict[str, Any]) -> dict[str, str | None]:
    """The headers configure reads in TF's image, from the image's package list."""
    cudnn = image["cudnn_include"]
    return {f"{image['toolkit']}/include/cuda.h": image["cuda_version"],
            f"{cudnn}/cudnn.h": None,  # cuDNN 8's cudnn.h includes cudnn_version.h
            f"{cudnn}/cudnn_version.h": image["cudnn_version"]}


@pytest.mark.parametrize("series", ["2.16", "2.17"])
def test_the_cuda_plan_lets_configure_find_cudnn_in_tf_s_image(series, kb):
    release = kb.release(FACTS[series]["release"])
    recipe = Recipe().with_changes({
        "tensorflow.version": release.version, "backend.kind": "cuda",
        "cuda.version": release.tested_cuda, "cuda.cudnn": release.tested_cudnn,
        "toolchain.clang": str(release.default_clang),
        "cuda.compute_capabilities": list(release.wheel_compute_capabilities)})
    plan = make_plan(recipe, kb=kb)
    env = next(s for s in plan.steps if s.name == "configure").env
    assert "TF_CUDA_PATHS" not in env and "TF_CUDA_PATHS" not in "".join(plan.predicted_bazelrc)
    assert env["CLANG_CUDA_COMPILER_PATH"] == "/usr/lib/llvm-17/bin/clang"
    headers = _image_headers(FACTS[series]["image_cuda"])
    found = simulate_find_cuda(env, headers)
    assert found.error == ""
    assert found.found == {"cuda": "/usr/local/cuda-12.3/include/cuda.h",
                           "cudnn": "/usr/include/cudnn_version.h"}
    # what the plan said before: TF_CUDA_PATHS replaced the search list and hid cuDNN
    old = simulate_find_cuda({**env, "TF_CUDA_PATHS": "/usr/local/cuda-12.3"}, headers)
    assert "Could not find any cudnn.h, cudnn_version.h matching version '8'" in old.error
    # local paths from the recipe keep /usr when cuDNN's place is not named
    local = configure_env(recipe.with_changes({"cuda.local_cuda_path": "/opt/cuda"}), release)
    assert local["TF_CUDA_PATHS"] == "/opt/cuda,/usr"
    both = configure_env(recipe.with_changes({"cuda.local_cuda_path": "/opt/cuda",
                                              "cuda.local_cudnn_path": "/opt/cudnn"}), release)
    assert both["TF_CUDA_PATHS"] == "/opt/cuda,/opt/cudnn"


# -- done when: check refuses what the release's Bazel rules reject ----------------------------


def _cuda_recipe(version: str, cuda: str, cudnn: str = "9.3.0") -> Recipe:
    return Recipe().with_changes({"tensorflow.version": version, "backend.kind": "cuda",
                                  "python.version": "3.11", "cuda.version": cuda,
                                  "cuda.cudnn": cudnn, "toolchain.clang": "18",
                                  "cuda.compute_capabilities": ["sm_80", "compute_90"]})


@pytest.mark.parametrize(("series", "cuda"), [("2.18", "12.8.1"), ("2.18", "12.6.3"),
                                              ("2.19", "12.8.0")])
def test_check_refuses_cuda_the_release_s_rules_reject(series, cuda):
    facts = FACTS[series]["hermetic_lists"]
    found = evaluate(_cuda_recipe(FACTS[series]["release"], cuda))
    [err] = [f for f in found if f.code == "CUDA_NOT_SUPPORTED"]
    assert err.severity == "error"
    assert f"Listed: {', '.join(facts['cuda'])}." in err.message


@pytest.mark.parametrize(("series", "cuda", "cudnn"), [("2.18", "12.6.1", "9.5.0"),
                                                      ("2.19", "12.6.2", "9.6.0"),
                                                      ("2.20", "12.8.1", "9.8.0"),
                                                      ("2.21", "13.1.0", "9.16.0"),
                                                      ("2.22", "13.3.0", "9.22.0")])
def test_check_accepts_the_newest_of_each_list(series, cuda, cudnn):
    found = evaluate(_cuda_recipe(FACTS[series]["release"], cuda, cudnn))
    assert not {"CUDA_NOT_SUPPORTED", "CUDNN_NOT_SUPPORTED", "CUDA_NO_NCCL_WHEEL"} & {
        f.code for f in found}


def test_cuda_without_an_nccl_wheel_is_a_warning():
    found = evaluate(_cuda_recipe("2.19.0", "12.6.3"))
    [warn] = [f for f in found if f.code == "CUDA_NO_NCCL_WHEEL"]
    assert warn.severity == "warning" and warn.fix.changes == {"cuda.version": "12.6.2"}
    assert "CUDA_NOT_SUPPORTED" not in {f.code for f in found}


def test_an_unverified_list_gives_warnings_not_errors():
    # r2.22's rules_ml_toolchain pin was not read: versions past its list warn
    found = evaluate(_cuda_recipe("2.22.0rc0", "13.4.0", "9.23.0"))
    bad = {f.code: f for f in found if f.code in ("CUDA_NOT_SUPPORTED", "CUDNN_NOT_SUPPORTED")}
    assert set(bad) == {"CUDA_NOT_SUPPORTED", "CUDNN_NOT_SUPPORTED"}
    assert all(f.severity == "warning" and "UNVERIFIED" in f.message for f in bad.values())


@pytest.mark.parametrize("series", ["2.20", "2.21"])
def test_plans_never_name_an_unpublished_image(series, kb):
    release = kb.release(FACTS[series]["release"])
    for python in ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14"):
        recipe = Recipe().with_changes({"tensorflow.version": release.version,
                                        "python.version": python})
        image = make_plan(recipe, kb=kb).image
        assert image == "us-central1-docker.pkg.dev/tensorflow-sigs/tensorflow/ml-build:latest"


def test_no_release_names_a_sig_build_tag_that_was_never_built(kb):
    for release in kb.releases:
        if release.image.startswith("tensorflow/build:"):
            newer = [p for p in release.pythons
                     if tuple(map(int, p.split("."))) > (3, 12)]
            assert not newer, f"{release.version}: tensorflow/build has no python{newer} tags"


def test_the_default_compiler_is_the_image_s(kb):
    from tfwizard.core.defaults import default_recipe

    for series in ("2.16", "2.17"):
        release = kb.release(FACTS[series]["release"])
        recipe = Recipe().with_changes({"tensorflow.version": release.version,
                                        "backend.kind": "cuda", "cuda.version": "12.3",
                                        "cuda.cudnn": "8.9", "toolchain.clang": "18",
                                        "cuda.compute_capabilities": ["sm_80"]})
        [warn] = [f for f in evaluate(recipe) if f.code == "CLANG_NOT_IN_IMAGE"]
        assert warn.severity == "warning" and warn.fix.changes == {"toolchain.clang": "17"}
        fixed = recipe.with_changes(warn.fix.changes)
        assert "CLANG_NOT_IN_IMAGE" not in {f.code for f in evaluate(fixed)}
    assert default_recipe().toolchain.clang == str(kb.latest_release().image_clang)
