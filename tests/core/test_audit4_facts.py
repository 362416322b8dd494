"""The rows of audit 4 (shared/reference/tf-facts-audit-4.md) about releases, hermetic
defaults and lists, as tests: one per row, each naming the row and the source the audit
read. Other rows of the audit have their own modules.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import Recipe
from tfwizard.core.rules import evaluate

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_trees"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _cuda(version: str, cuda: str, cudnn: str, python: str = "3.12") -> Recipe:
    return Recipe().with_changes({"tensorflow.version": version, "backend.kind": "cuda",
                                  "python.version": python, "cuda.version": cuda,
                                  "cuda.cudnn": cudnn, "toolchain.clang": "18",
                                  "cuda.compute_capabilities": ["sm_80", "compute_90"]})


def _codes(recipe: Recipe, severity: str | None = None) -> set[str]:
    return {f.code for f in evaluate(recipe) if severity in (None, f.severity)}


def _fetch_ref(plan) -> str:
    fetch = next(s for s in plan.steps if s.role == "fetch")
    return fetch.argv[fetch.argv.index("--branch") + 1]


def test_r1_2_22_0rc0_is_known_accepted_and_marked_a_pre_release(kb, tmp_path):
    """R1 (PyPI simple index; PR tensorflow/tensorflow#127444): 2.22.0rc0 is the newest."""
    release = kb.release("2.22.0rc0")
    assert release is not None and release.is_prerelease and release.series == "2.22"
    assert release.git_tag == "v2.22.0-rc0"  # TF's rc tags: v2.21.0-rc1 in 2.21.0's GIT_VERSION
    assert kb.latest_release().version == "2.21.0"  # a default recipe takes no rc
    path = tmp_path / "rc.toml"
    assert capture(["recipe", "new", str(path)])[0] == 0
    status, out, err = capture(["recipe", "set", str(path), "tensorflow.version=2.22.0rc0",
                                "python.version=3.14"])
    assert status == 0, err
    assert "pre-release" in out and "v2.22.0-rc0" in out
    status, out, _err = capture(["check", str(path), "--json", "--host",
                                 str(Path(__file__).resolve().parents[1] / "data" / "hosts"
                                     / "no-gpu-server.json")])
    codes = {f["code"] for f in json.loads(out)["findings"]}
    assert "RELEASE_PRERELEASE" in codes and "RELEASE_UNKNOWN" not in codes
    assert "PYTHON_RANGE" not in codes  # the rc builds Python 3.14 (audit 22.1)
    plan = make_plan(Recipe().with_changes({"tensorflow.version": "2.22.0rc0"}), kb=kb)
    assert _fetch_ref(plan) == "v2.22.0-rc0" and plan.release == "2.22.0rc0"


def test_r2_master_is_2_23(kb):
    """R2 (tf-nightly 2.23.0.dev20261026; PR #127445 "Update RELEASE.md on master for
    v2.23.0"): master is 2.23 development, no longer the 2.22 entry."""
    master = kb.release("master")
    assert master.series == "2.23" and master.git_tag == "master"
    assert any("2.23" in note for note in master.unverified)
    # a checkout of master (version.h 2.23.0) is master's series: no version finding
    tree = {"tensorflow/core/public/version.h": "#define TF_MAJOR_VERSION 2\n"
            "#define TF_MINOR_VERSION 23\n#define TF_PATCH_VERSION 0\n"}
    from tfwizard.core.tfsource.facts import facts_from_files
    from tfwizard.core.tfsource.overlay import overlay

    assert overlay(master, facts_from_files(tree, "master"), kb).differences == ()


@pytest.mark.parametrize(("version", "base"), [("2.19.1", "2.19.0"), ("2.18.1", "2.18.0"),
                                               ("2.17.1", "2.17.0"), ("2.16.2", "2.16.1")])
def test_r3_a_patch_release_plans_its_own_tag(kb, version, base):
    """R3 (PyPI 2.19.1; the wheel's GIT_VERSION v2.19.0-10-gf4247ebb6f9; Serving 2.19.1):
    2.19.1 is its own source; the plan cloned v2.19.0 for it."""
    plan = make_plan(Recipe().with_changes({"tensorflow.version": version}), kb=kb)
    assert plan.release == version and _fetch_ref(plan) == f"v{version}"
    assert kb.release(version).patch_of == base
    assert "RELEASE_UNKNOWN" not in _codes(Recipe().with_changes({"tensorflow.version": version}))
    # a patch level the table lacks is refused, never planned as its series' release
    assert "RELEASE_UNKNOWN" in _codes(Recipe().with_changes({"tensorflow.version": "2.19.2"}))
    assert kb.release("2.19.1").tag_commit == "f4247ebb6f9e7421f38c3f01a9a5d5cd54bd24fd"


def test_r4_the_2_21_0_tag_commit(kb):
    """R4 (the 2.21.0 wheel's _pywrap_tf_session.so GIT_VERSION v2.21.0-rc1-5-ga481b10260d)."""
    assert kb.release("2.21.0").tag_commit == "a481b10260d"
    facts = (Path(__file__).resolve().parents[1] / "data" / "tf-facts" / "2.21.toml").read_text()
    assert 'tag_commit = "a481b10260d"' in facts


def test_20_5_the_2_20_nvshmem_default(kb):
    """20.5 (tensorflow/java tensorflow.bazelrc @75402befe, build:cuda_version; a copy):
    HERMETIC_NVSHMEM_VERSION 3.2.5."""
    release = kb.release("2.20.0")
    assert release.hermetic_nvshmem_default == "3.2.5" and "tf-java-2-20" in release.sources
    assert "75402befe" in kb.sources["tf-java-2-20"].ref
    from tfwizard.core.tfsource.facts import read_source_facts

    assert read_source_facts(TREES / "2.20").hermetic["HERMETIC_NVSHMEM_VERSION"] == "3.2.5"


def test_21_1_bazel_the_table_says_the_copy_the_plan_follows_the_source(kb, tmp_path):
    """21.1 CONFLICT (tensorflow/java .bazelversion @82373b893: 7.7.0; docs table
    @7c3650212: 7.4.1): the table says the copy's 7.7.0 and notes both; a source whose
    .bazelversion says otherwise is planned with its own, and check names both."""
    release = kb.release("2.21.0")
    assert release.bazel == "7.7.0"
    [note] = [n for n in release.unverified if n.startswith("bazel:")]
    assert "7.7.0" in note and "7.4.1" in note and "82373b893" in note
    tree = tmp_path / "tree"
    shutil.copytree(TREES / "2.21", tree)
    (tree / ".bazelversion").write_text("7.4.1\n")
    recipe = Recipe().with_changes({"tensorflow.version": "2.21.0",
                                    "tensorflow.source_dir": str(tree)})
    plan = make_plan(recipe, kb=kb)
    assert plan.bazel_version == "7.4.1"
    [finding] = [f for f in evaluate(recipe) if f.code == "SOURCE_FACT_DIFFERS"]
    assert finding.message.startswith(".bazelversion says Bazel version: 7.4.1")
    assert "says 7.7.0" in finding.message


def test_21_5_the_2_21_nccl_default(kb):
    """21.5 (tensorflow/java tensorflow.bazelrc @82373b893 common:cuda_version; the wheel's
    nccl.h 2.27.7): HERMETIC_NCCL_VERSION 2.27.7."""
    assert kb.release("2.21.0").hermetic_nccl_default == "2.27.7"
    assert "HERMETIC_NCCL_VERSION 2.27.7" in kb.sources["tf-java-2-21"].ref


def test_21_6_the_2_21_nvshmem_default(kb):
    """21.6 (the same copy): HERMETIC_NVSHMEM_VERSION 3.2.5."""
    assert kb.release("2.21.0").hermetic_nvshmem_default == "3.2.5"
    assert "HERMETIC_NVSHMEM_VERSION 3.2.5" in kb.sources["tf-java-2-21"].ref


@pytest.mark.parametrize("cuda", ["13.0.1", "13.0.2", "13.1.0"])
def test_21_8_the_2_21_cuda_list_goes_to_13_1_0(kb, cuda):
    """21.8 (rules_ml_toolchain gpu/cuda/cuda_redist_versions.bzl @d8cb9c2c, the pin of
    tensorflow/java's 2.21.0 WORKSPACE copy @82373b893): CUDA up to 13.1.0."""
    assert kb.release("2.21.0").cuda_list == "rules_ml_toolchain-d8cb9c2c"
    assert kb.redist["rules_ml_toolchain-d8cb9c2c"].commit.startswith("d8cb9c2c")
    assert "CUDA_NOT_SUPPORTED" not in _codes(_cuda("2.21.0", cuda, "9.12.0"))
    # the list is read at the pin: a version past it stops the build, an error
    assert "CUDA_NOT_SUPPORTED" in _codes(_cuda("2.21.0", "13.2.0", "9.12.0"), "error")


@pytest.mark.parametrize("cudnn", ["9.12.0", "9.13.0", "9.14.0", "9.15.0", "9.15.1", "9.16.0"])
def test_21_9_the_2_21_cudnn_list_goes_to_9_16_0(kb, cudnn):
    """21.9 (the same file @d8cb9c2c): cuDNN up to 9.16.0."""
    assert "CUDNN_NOT_SUPPORTED" not in _codes(_cuda("2.21.0", "12.9.1", cudnn))
    assert "CUDNN_NOT_SUPPORTED" in _codes(_cuda("2.21.0", "12.9.1", "9.17.0"), "error")


def test_22_4_the_2_22_cudnn_default_is_9_10_0(kb):
    """22.4 (the 2.22.0rc0 wheel's cudnn_version.h 9/10/0): hermetic cuDNN 9.10.0."""
    assert kb.release("2.22.0rc0").hermetic_cudnn_default == "9.10.0"
    assert kb.release("master").hermetic_cudnn_default == "9.10.0"


def test_22_5_the_2_22_nccl_default_is_2_30_7(kb):
    """22.5 (the 2.22.0rc0 wheel's nccl.h 2/30/7): hermetic NCCL 2.30.7."""
    assert kb.release("2.22.0rc0").hermetic_nccl_default == "2.30.7"


def test_22_8_the_2_22_lists_are_rules_ml_toolchain_3cce03c_s(kb):
    """22.8 (rules_ml_toolchain: NCCL 2.30.7 first in 3cce03c; lists at 3cce03c = HEAD
    b117455): CUDA 12.8.2, cuDNN 9.11.1, 9.13.1, 9.17.0-9.21.1 are listed."""
    for version in ("2.22.0rc0", "master"):
        redist = kb.redist[kb.release(version).cuda_list]
        assert {"12.8.2", "13.3.0"} <= set(redist.cuda) and redist.complete
        assert {"9.11.1", "9.13.1", "9.17.0", "9.17.1", "9.18.0", "9.18.1", "9.19.0", "9.19.1",
                "9.20.0", "9.21.0", "9.21.1"} <= set(redist.cudnn)
    assert kb.redist["rules_ml_toolchain-3cce03c"].commit.startswith("3cce03c")
    assert kb.redist["rules_ml_toolchain-head"].commit.startswith("b117455")
    assert not {"CUDA_NOT_SUPPORTED", "CUDNN_NOT_SUPPORTED"} & _codes(
        _cuda("2.22.0rc0", "12.8.2", "9.21.1"))


def test_22_9_an_experimental_module_bazel_is_noted(kb, tmp_path):
    """22.9 (MODULE.bazel @01a5f619 "Experimental Bzlmod support"; ci/official/envs/bzlmod
    @39f851a): recorded as a note; the build follows the .bazelrc (WORKSPACE)."""
    tree = tmp_path / "tree"
    shutil.copytree(TREES / "2.21", tree)
    (tree / "MODULE.bazel").write_text('module(name = "org_tensorflow")\n')
    rc = (tree / ".bazelrc").read_text()
    recipe = Recipe().with_changes({"tensorflow.version": "2.21.0",
                                    "tensorflow.source_dir": str(tree)})
    [note] = [f for f in evaluate(recipe) if f.code == "SOURCE_BZLMOD"]
    assert note.severity == "info" and "keeps WORKSPACE" in note.message
    (tree / ".bazelrc").write_text(rc.replace("common --noenable_bzlmod",
                                              "common --enable_bzlmod"))
    [note] = [f for f in evaluate(recipe) if f.code == "SOURCE_BZLMOD"]
    assert "turns Bzlmod on" in note.message
    assert "SOURCE_BZLMOD" not in _codes(recipe.with_changes(
        {"tensorflow.source_dir": str(TREES / "2.21")}))
    master = Recipe().with_changes({"tensorflow.version": "master",
                                    "tensorflow.source_dir": str(TREES / "master")})
    assert "SOURCE_BZLMOD" in _codes(master)
    assert "SOURCE_FACT_DIFFERS" not in _codes(master)  # the tree agrees with master's entry


def test_22_10_tf_s_cuda_13_wheel_config_is_noted(kb, tmp_path):
    """22.10 (ci/official/envs/linux_x86_cuda13_nvcc @88c4522: WHEEL_NAME=tensorflow_cuda13,
    --config=cuda_nvcc --config=cuda13_version): noted when a CUDA 13 recipe builds a
    source that defines the config; the plan keeps the recipe's own answers."""
    tree = tmp_path / "tree"
    shutil.copytree(TREES / "2.22-rc0", tree)
    rc = tree / ".bazelrc"
    rc.write_text(rc.read_text() + 'common:cuda13_version --repo_env=HERMETIC_CUDA_VERSION='
                  '"13.0.1"\n')
    recipe = _cuda("2.22.0rc0", "13.0.1", "9.12.0").with_changes(
        {"tensorflow.source_dir": str(tree)})
    [note] = [f for f in evaluate(recipe) if f.code == "SOURCE_CUDA13_CONFIG"]
    assert "cuda13_version" in note.message and "tensorflow_cuda13" in note.message
    plan = make_plan(recipe, kb=kb)
    assert plan.configure_env["HERMETIC_CUDA_VERSION"] == "13.0.1"
    assert "--config=cuda13_version" not in plan.flag_list
    assert "SOURCE_CUDA13_CONFIG" not in _codes(recipe.with_changes(
        {"cuda.version": "12.8.1"}))
