"""The hermetic LLVM of the rules_ml_toolchain commit the source pins (core/tfsource/overlay.py):
a pin the table knows gives its LLVM default and `LLVM_VERSION` choices to the plan, the
checks and the choice notes, and the difference from the table is shown; a pin it does not
know keeps the table's, marked UNVERIFIED. The facts are per commit in cuda.toml
`[redist.*]` (`llvm_default`, `llvm_versions`), each cited by a source naming the file.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import Recipe
from tfwizard.core.rules import evaluate
from tfwizard.core.tfsource.overlay import source_view
from tfwizard.core.views.choice_notes import clang_choices

TREES = Path(__file__).resolve().parents[2] / "fixtures" / "tf_trees"
D8CB = "d8cb9c2c168cd64000eaa6eda0781a9615a26ffe"  # the 2.21 tree's pin: LLVM 18-21
C3CE = "3cce03c2becb6d2b56b99dece73b9b95b2f926f4"  # LLVM 18-22
UNKNOWN = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _tree(tmp_path: Path, pin: str) -> Path:
    """The 2.21 tree (TF 2.21.0, whose table entry says LLVM 18 of 18-21) pinning `pin`."""
    tree = tmp_path / "2.21"
    shutil.copytree(TREES / "2.21", tree)
    workspace = tree / "tensorflow" / "workspace0.bzl"
    workspace.write_text(workspace.read_text().replace(D8CB, pin))
    return tree


def _recipe(tree: Path, clang: str = "22") -> Recipe:
    return Recipe().with_changes({"tensorflow.version": "2.21.0",
                                  "tensorflow.source_dir": str(tree), "python.version": "3.11",
                                  "backend.kind": "cuda", "cuda.version": "12.5.1",
                                  "cuda.cudnn": "9.3.0", "toolchain.clang": clang,
                                  "cuda.compute_capabilities": ["sm_80"]})


def _llvm_unknown(recipe: Recipe):
    return [f for f in evaluate(recipe) if f.code == "LLVM_VERSION_UNKNOWN"]


def test_a_known_pin_gives_its_llvm_choices_and_shows_the_difference(tmp_path, kb):
    tree = _tree(tmp_path, C3CE)
    view = source_view(_recipe(tree), kb)
    assert view.table_release.hermetic_llvm_versions == ("18", "19", "20", "21")
    assert view.release.hermetic_llvm_versions == ("18", "19", "20", "21", "22")
    assert view.release.hermetic_llvm_unknown_pin == ""
    [diff] = [d for d in view.differences if d.fact == "hermetic_llvm_versions"]
    assert diff.table == "18 (18, 19, 20, 21)"
    assert diff.source == "18 (18, 19, 20, 21, 22) @ rules_ml_toolchain 3cce03c2"
    assert diff.file.startswith("tensorflow/workspace0.bzl")
    # LLVM 22: offered by the pin, not by the table's 2.21 entry
    assert _llvm_unknown(_recipe(tree)) == []
    [table] = _llvm_unknown(_recipe(TREES / "2.21"))
    assert table.severity == "error"
    plan = make_plan(_recipe(tree), kb=kb, uid=1000, gid=1000)
    assert "--repo_env=LLVM_VERSION=22" in plan.flag_list and plan.hermetic_llvm == "22"
    assert any("hermetic LLVM (default, and the LLVM_VERSION choices)" in n
               and "3cce03c2" in n for n in plan.notes)
    found = [f.message for f in evaluate(_recipe(tree)) if f.code == "SOURCE_FACT_DIFFERS"]
    assert any("LLVM_VERSION choices" in m and "18, 19, 20, 21, 22" in m for m in found)
    values, _label, _notes = clang_choices(view.kb, _recipe(tree), view.release)
    assert values == ["", "18", "19", "20", "21", "22"]


def test_the_pinned_commit_s_default_is_the_plan_s_and_the_choices(tmp_path, kb):
    """A commit whose default differs from the release's (the read commits all default to
    18: the table is edited so that this commit's is 20)."""
    name = "rules_ml_toolchain-3cce03c"
    edited = dataclasses.replace(kb, redist={**kb.redist, name: dataclasses.replace(
        kb.redist[name], llvm_default="20")})
    tree = _tree(tmp_path, C3CE)
    recipe = _recipe(tree, clang="")
    view = source_view(recipe, edited)
    assert view.release.hermetic_llvm_default == "20"
    [diff] = [d for d in view.differences if d.fact == "hermetic_llvm_versions"]
    assert diff.table.startswith("18 (") and diff.source.startswith("20 (")
    plan = make_plan(recipe, kb=edited, uid=1000, gid=1000)
    assert plan.hermetic_llvm == "20"
    assert not any(f.startswith("--repo_env=LLVM_VERSION") for f in plan.flag_list)
    assert make_plan(recipe, kb=kb, uid=1000, gid=1000).hermetic_llvm == "18"
    _values, label, notes = clang_choices(view.kb, recipe, view.release)
    assert "LLVM 20" in label and notes == {"20": "TensorFlow's default"}


def test_a_pin_the_table_lacks_keeps_its_llvm_marked_unverified(tmp_path, kb):
    tree = _tree(tmp_path, UNKNOWN)
    view = source_view(_recipe(tree), kb)
    assert view.release.hermetic_llvm_versions == view.table_release.hermetic_llvm_versions
    assert view.release.hermetic_llvm_unknown_pin == UNKNOWN
    assert not [d for d in view.differences if d.fact == "hermetic_llvm_versions"]
    [warning] = _llvm_unknown(_recipe(tree))  # the table's list is a guess for this pin
    assert warning.severity == "warning"
    assert "UNVERIFIED" in warning.message and UNKNOWN[:12] in warning.message
    [hermetic] = [f for f in evaluate(_recipe(tree, clang="18")) if f.code == "CXX_HERMETIC"]
    assert "UNVERIFIED" in hermetic.message
    _values, label, _notes = clang_choices(view.kb, _recipe(tree), view.release)
    assert "UNVERIFIED" in label
    plan = make_plan(_recipe(tree, clang="21"), kb=kb, uid=1000, gid=1000)
    assert any("UNVERIFIED" in n and UNKNOWN[:12] in n for n in plan.notes)
    known = source_view(_recipe(_tree(tmp_path / "known", D8CB)), kb)
    assert "UNVERIFIED" not in clang_choices(known.kb, _recipe(tree), known.release)[1]


def test_every_pinned_commit_has_llvm_facts_a_source_names(kb):
    commits = [r for r in kb.redist.values() if r.commit]
    assert {r.commit[:7] for r in commits} >= {"d8cb9c2", "3cce03c", "b117455"}
    for redist in commits:
        assert redist.llvm_default in redist.llvm_versions, redist.name
        citing = [key for key in redist.sources
                  if redist.commit[:7] in kb.sources[key].ref
                  and "cc_toolchain_deps.bzl" in kb.sources[key].ref]
        assert citing, f"{redist.name}: no source names cc_toolchain_deps.bzl @ {redist.commit}"


def test_a_release_s_llvm_is_its_pinned_commit_s(kb):
    """The table agrees with itself: a hermetic release whose list was read at a commit
    states that commit's LLVM."""
    for release in kb.releases:
        redist = kb.redist.get(release.cuda_list or "")
        if not release.hermetic_cc_toolchain or redist is None or not redist.commit:
            continue
        assert (release.hermetic_llvm_default, release.hermetic_llvm_versions) == (
            redist.llvm_default, redist.llvm_versions), release.version
