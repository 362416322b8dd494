"""TensorFlow's facts read from the source being built (core/tfsource/facts.py) and laid over the
table (core/tfsource/overlay.py): what each file says, what is not stated, and a checkout whose
files disagree with the table planned and checked from its files.

The trees in tests/fixtures/tf_trees are in the shape of TensorFlow's files; each README
cites the file and commit its facts come from (tensorflow/java's copies @75402befe and
@82373b893, rules_ml_toolchain @d8cb9c2c and @3cce03c, TF files by index id).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import Recipe
from tfwizard.core.rules import evaluate
from tfwizard.core.tfsource.facts import (
    facts_from_files,
    parse_bazelrc,
    parse_redist,
    parse_tf_version,
    read_source_facts,
)
from tfwizard.core.tfsource.overlay import source_view

TREES = Path(__file__).resolve().parents[2] / "fixtures" / "tf_trees"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _tree(tmp_path: Path, name: str = "2.21") -> Path:
    dest = tmp_path / name
    shutil.copytree(TREES / name, dest)
    return dest


def _recipe(tree: Path, **changes: object) -> Recipe:
    return Recipe().with_changes({"tensorflow.version": "2.21.0",
                                  "tensorflow.source_dir": str(tree), "python.version": "3.11",
                                  "backend.kind": "cuda", "cuda.version": "12.5.1",
                                  "cuda.cudnn": "9.3.0", "toolchain.clang": "18",
                                  "cuda.compute_capabilities": ["sm_80"], **changes})


# -- one file at a time -----------------------------------------------------------------------


def test_bazelrc_configs_switches_and_defaults_in_both_spellings():
    configs, env = parse_bazelrc(
        "common --repo_env USE_HERMETIC_CC_TOOLCHAIN=1\n"
        "build:cuda_version --repo_env=HERMETIC_CUDA_VERSION=\"12.8.1\"  # comment\n"
        "common:clang_local --repo_env USE_HERMETIC_CC_TOOLCHAIN=0\n"
        "build:cuda \\\n  --repo_env TF_NEED_CUDA=1\n")
    assert configs == {"cuda_version", "clang_local", "cuda"}
    assert env[""] == {"USE_HERMETIC_CC_TOOLCHAIN": "1"}
    assert env["cuda_version"] == {"HERMETIC_CUDA_VERSION": "12.8.1"}
    assert env["clang_local"] == {"USE_HERMETIC_CC_TOOLCHAIN": "0"}
    assert env["cuda"] == {"TF_NEED_CUDA": "1"}  # a continued line is one line


def test_the_2_21_tree_states_what_tensorflow_java_s_copy_says():
    facts = read_source_facts(TREES / "2.21")
    assert facts.tf_version == "2.21.0" and facts.bazel == "7.7.0"
    assert {"cuda_clang", "cuda_wheel", "release_cpu_linux", "clang_local"} <= set(facts.configs)
    assert facts.hermetic_cc_toolchain is True and facts.use_pywrap_rules is True
    assert facts.hermetic == {"HERMETIC_CUDA_VERSION": "12.5.1", "HERMETIC_CUDNN_VERSION": "9.3.0",
                              "HERMETIC_NCCL_VERSION": "2.27.7",
                              "HERMETIC_NVSHMEM_VERSION": "3.2.5"}
    assert facts.compute_capabilities == ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")
    assert facts.pythons == ("3.10", "3.11", "3.12", "3.13")
    assert facts.toolchain_pin == "d8cb9c2c168cd64000eaa6eda0781a9615a26ffe"
    assert facts.wheel_style == "wheel" and facts.configure_default_ccs == "3.5,7.0"
    assert {"HERMETIC_CUDA_VERSION", "TF_NEED_CUDA", "CLANG_CUDA_COMPILER_PATH"} <= set(
        facts.configure_vars)
    assert facts.origin["bazel"] == ".bazelversion"
    assert facts.origin["toolchain_pin"] == "tensorflow/workspace0.bzl"
    assert facts.origin["tf_version"] == "tensorflow/core/public/release_version.h"


def test_the_2_20_tree_carries_its_own_lists_and_setup_py_s_version():
    facts = read_source_facts(TREES / "2.20")
    assert facts.tf_version == "2.20.0" and facts.origin["tf_version"].endswith("setup.py")
    assert facts.hermetic_cc_toolchain is False  # no switch in that era's .bazelrc
    assert facts.redist_cuda[-1] == "12.8.1" and facts.redist_cudnn[-1] == "9.8.0"
    assert facts.redist_without_nccl == ()  # 11.8 by name, 12.x through the comprehension


def test_nccl_wheels_keyed_by_version_leave_the_others_without_nccl():
    text = ('CUDA_REDIST_JSON_DICT = {\n    "12.6.2": [],\n    "12.6.3": [],\n}\n'
            'CUDNN_REDIST_JSON_DICT = {\n    "9.6.0": [],\n}\n'
            'CUDA_NCCL_WHEELS = {\n    "12.6.2": X,\n}\n')
    assert parse_redist(text) == (("12.6.2", "12.6.3"), ("9.6.0",), ("12.6.3",))
    assert parse_redist("no lists here") is None


def test_the_version_suffix_makes_a_pre_release():
    assert read_source_facts(TREES / "2.22-rc0").tf_version == "2.22.0rc0"
    header = "#define TF_MAJOR_VERSION 2\n#define TF_MINOR_VERSION 23\n#define TF_PATCH_VERSION 0\n"
    assert parse_tf_version(None, header) == "2.23.0"  # no suffix line: a final version
    assert parse_tf_version("_VERSION = '2.19.1'\n", header) == "2.19.1"  # setup.py first


def test_what_a_tree_does_not_state_is_unknown_not_different(kb):
    facts = facts_from_files({"configure.py": "x = 'TF_NEED_CUDA'\n"}, "partial")
    assert facts.bazel is None and facts.pythons is None and facts.configs is None
    assert facts.hermetic_cc_toolchain is None and facts.tf_version is None
    view = source_view(Recipe().with_changes({"tensorflow.version": "2.21.0"}), kb,
                       facts=facts)
    # configure.py reads no HERMETIC_CUDA_VERSION: that much is stated, and differs
    assert [d.fact for d in view.differences] == ["hermetic_cuda"]
    assert view.release.bazel == "7.7.0" and view.release.hermetic_cc_toolchain


def test_an_edited_tree_is_read_again(tmp_path):
    tree = _tree(tmp_path)
    assert read_source_facts(tree).bazel == "7.7.0"
    (tree / ".bazelversion").write_text("7.4.1\n")
    assert read_source_facts(tree).bazel == "7.4.1"
    (tree / "requirements_lock_3_14.txt").write_text("")
    assert read_source_facts(tree).pythons[-1] == "3.14"


def test_the_checkout_s_commit_is_read_from_git(tmp_path):
    tree = _tree(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(argv, cwd=tree, env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    facts = read_source_facts(tree)
    assert facts.commit == head
    assert facts.cite("bazel") == f".bazelversion @ {head[:12]}"


# -- a checkout that disagrees with the table --------------------------------------------------


def _disagreeing(tmp_path: Path) -> Path:
    """The 2.21 tree edited the way a researcher's branch may differ: an older Bazel, no
    hermetic C++ toolchain or pywrap rules, cuDNN 9.8.0 by default, Pythons 3.10-3.12,
    and the pre-2.17 wheel target."""
    tree = _tree(tmp_path)
    (tree / ".bazelversion").write_text("7.4.1\n")
    rc = (tree / ".bazelrc").read_text()
    rc = rc.replace("common --repo_env USE_HERMETIC_CC_TOOLCHAIN=1\n", "")
    rc = rc.replace("common --repo_env=USE_PYWRAP_RULES=True\n", "")
    rc = rc.replace('HERMETIC_CUDNN_VERSION="9.3.0"', 'HERMETIC_CUDNN_VERSION="9.8.0"')
    (tree / ".bazelrc").write_text(rc)
    (tree / "requirements_lock_3_13.txt").unlink()
    (tree / "tensorflow/tools/pip_package/BUILD").write_text(
        'sh_binary(\n    name = "build_pip_package",\n)\n')
    return tree


def test_check_names_each_disagreement_once_with_both_values_and_the_file(tmp_path):
    tree = _disagreeing(tmp_path)
    found = [f for f in evaluate(_recipe(tree)) if f.code == "SOURCE_FACT_DIFFERS"]
    by_fact = {f.message.split(" says ")[1].split(":")[0]: f.message for f in found}
    assert len(found) == 6, [f.message for f in found]
    assert "7.4.1" in by_fact["Bazel version"] and "7.7.0" in by_fact["Bazel version"]
    assert by_fact["Bazel version"].startswith(".bazelversion says")
    hermetic = by_fact["the hermetic C++ toolchain (USE_HERMETIC_CC_TOOLCHAIN)"]
    assert hermetic.startswith(".bazelrc says") and "off" in hermetic and "says on" in hermetic
    cudnn = by_fact["hermetic cuDNN default (HERMETIC_CUDNN_VERSION)"]
    assert "9.8.0" in cudnn and "9.3.0" in cudnn
    assert "3.10, 3.11, 3.12;" in by_fact["Python versions (requirements_lock_3_*.txt)"]
    assert "build_pip_package" in by_fact["wheel target"]
    assert all(f.severity == "info" and f.sources == ("tf-source-tree",) for f in found)


def test_the_plan_follows_the_files(tmp_path, kb):
    tree = _disagreeing(tmp_path)
    plan = make_plan(_recipe(tree), kb=kb, uid=1000, gid=1000)
    table = make_plan(_recipe(TREES / "2.21"), kb=kb, uid=1000, gid=1000)
    assert (table.bazel_version, plan.bazel_version) == ("7.7.0", "7.4.1")
    assert "--repo_env=USE_PYWRAP_RULES=1" in table.flag_list
    assert "--repo_env=USE_PYWRAP_RULES=1" not in plan.flag_list
    assert plan.bazel_target == "//tensorflow/tools/pip_package:build_pip_package"
    assert [s.role for s in plan.steps] == ["configure", "build", "package"]
    assert {d["fact"] for d in plan.source_facts["differences"]} == {
        "bazel", "hermetic_cc_toolchain", "use_pywrap_rules", "hermetic_cudnn_default",
        "pythons", "wheel_style"}
    assert sum(n.startswith("source: ") for n in plan.notes) == 6
    assert table.source_facts["differences"] == [] and table.source_facts["tf_version"] == "2.21.0"


def test_a_python_the_source_has_no_lock_file_for_is_an_error(tmp_path):
    tree = _disagreeing(tmp_path)
    assert not [f for f in evaluate(_recipe(TREES / "2.21", **{"python.version": "3.13"}))
                if f.code == "PYTHON_RANGE"]
    [err] = [f for f in evaluate(_recipe(tree, **{"python.version": "3.13"}))
             if f.code == "PYTHON_RANGE"]
    assert err.severity == "error" and "3.10-3.12" in err.message


def test_without_a_version_the_checkout_s_own_release_is_checked(kb):
    view = source_view(Recipe().with_changes({"tensorflow.source_dir": str(TREES / "2.22-rc0")}),
                       kb)
    assert view.release.version == "2.22.0rc0" and view.differences == ()
    found = evaluate(Recipe().with_changes({"tensorflow.source_dir": str(TREES / "2.22-rc0")}))
    assert "RELEASE_PRERELEASE" in {f.code for f in found}
    assert "RELEASE_ASSUMED_MASTER" not in {f.code for f in found}


def test_a_checkout_of_another_release_says_so_with_a_fix(kb):
    found = evaluate(_recipe(TREES / "2.22-rc0"))
    [version] = [f for f in found if f.code == "SOURCE_FACT_DIFFERS"
                 and f.key == "tensorflow.version"]
    assert "2.22.0rc0" in version.message and "2.21.0" in version.message
    assert version.fix.changes == {"tensorflow.version": "2.22.0rc0"}


def test_the_pin_picks_the_list_or_marks_the_table_s_unverified(tmp_path, kb):
    tree = _tree(tmp_path, "2.22-rc0")
    view = source_view(_recipe(tree, **{"tensorflow.version": "2.21.0"}), kb)
    assert view.release.cuda_list == "rules_ml_toolchain-3cce03c"  # a pin the table knows
    pin = tree / "tensorflow" / "workspace0.bzl"
    pin.write_text(pin.read_text().replace("3cce03c2becb6d2b56b99dece73b9b95b2f926f4",
                                           "0123456789abcdef0123456789abcdef01234567"))
    view = source_view(_recipe(tree, **{"tensorflow.version": "2.22.0rc0"}), kb)
    guess = view.kb.redist[view.release.cuda_list]
    assert view.release.cuda_list == "rules_ml_toolchain-3cce03c@01234567"
    assert "0123456789ab" in guess.unverified  # unlisted versions become warnings
    found = evaluate(_recipe(tree, **{"tensorflow.version": "2.22.0rc0",
                                      "python.version": "3.12", "cuda.version": "13.4.0"}))
    [cuda] = [f for f in found if f.code == "CUDA_NOT_SUPPORTED"]
    assert cuda.severity == "warning"


def test_a_backend_config_the_source_lacks_is_an_error(tmp_path):
    tree = _tree(tmp_path)
    rc = (tree / ".bazelrc").read_text().replace("common:rocm --config=clang_local\n", "")
    (tree / ".bazelrc").write_text(rc)
    recipe = _recipe(tree, **{"backend.kind": "rocm", "rocm.version": "6.2.0",
                              "rocm.amdgpu_targets": ["gfx90a"]})
    [err] = [f for f in evaluate(recipe) if f.code == "SOURCE_CONFIG_MISSING"]
    assert err.severity == "error" and "`rocm`" in err.message
    assert not [f for f in evaluate(_recipe(TREES / "2.21")) if f.code == "SOURCE_CONFIG_MISSING"]


def test_a_checkout_of_a_patch_release_the_table_lacks_is_checked_as_its_series(tmp_path):
    tree = _tree(tmp_path)
    header = tree / "tensorflow/core/public/release_version.h"
    header.write_text(header.read_text().replace("TF_PATCH_VERSION 0", "TF_PATCH_VERSION 3"))
    recipe = Recipe().with_changes({"tensorflow.source_dir": str(tree)})
    found = evaluate(recipe)
    assert "RELEASE_UNKNOWN" not in {f.code for f in found}
    [version] = [f for f in found if f.code == "SOURCE_FACT_DIFFERS"]
    assert "2.21.3" in version.message and "table for TensorFlow 2.21.0" in version.message
    assert version.fix is None  # 2.21.3 is no entry to switch to
    assert make_plan(recipe, uid=1000, gid=1000).source_facts["tf_version"] == "2.21.3"
