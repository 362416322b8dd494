"""The release as the source being built describes it: the table's entry with the source's
own facts (srcfacts.py) laid over it.

    view = source_view(recipe, kb)            # the checkout's facts, or None
    view.release, view.kb                     # what the checks and the plan use
    view.differences                          # one per fact where table and files disagree

Where the table and the files disagree, the files win: the plan (configure answers, Bazel
flags, target), `check` and the preflight all take `view.release` (a
`dataclasses.replace` of the table's entry), and each disagreement is one
`SOURCE_FACT_DIFFERS` finding that names the table's value, the file's value and the file.
A source that pins rules_ml_toolchain gets the CUDA/cuDNN lists of that commit when the
table has them (cuda.toml `commit`), or the table's list marked UNVERIFIED when it has not;
a tree that carries its own `cuda_redist_versions.bzl` gets exactly its lists. The hermetic
LLVM (default and `LLVM_VERSION` choices) follows the pin the same way: the commit's when
the table has it, else the table's with `hermetic_llvm_unknown_pin` set (UNVERIFIED).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..bazelversion import version_from_spec
from ..i18n import N_, _, translate
from ..knowledge import KnowledgeBase, RedistList, Release
from ..recipe import Recipe
from .facts import SourceFacts, read_source_facts

#: the sources.toml key facts read from the source being built cite
SOURCE_KEY = "tf-source-tree"
#: how a fact is named to people, by Release field (translated where shown)
FACT_NAMES = {
    "version": N_("TensorFlow version"),
    "bazel": N_("Bazel version"),
    "bazel_range": N_("Bazel range (configure.py)"),
    "cuda_wheel_config": N_("the cuda_wheel config"),
    "hermetic_cc_toolchain": N_("the hermetic C++ toolchain (USE_HERMETIC_CC_TOOLCHAIN)"),
    "use_pywrap_rules": N_("pywrap rules (USE_PYWRAP_RULES)"),
    "hermetic_cuda_default": N_("hermetic CUDA default (HERMETIC_CUDA_VERSION)"),
    "hermetic_cudnn_default": N_("hermetic cuDNN default (HERMETIC_CUDNN_VERSION)"),
    "hermetic_nccl_default": N_("hermetic NCCL default (HERMETIC_NCCL_VERSION)"),
    "hermetic_nvshmem_default": N_("hermetic NVSHMEM default (HERMETIC_NVSHMEM_VERSION)"),
    "wheel_compute_capabilities": N_("release compute capabilities"),
    "hermetic_cuda": N_("hermetic CUDA (configure.py asks HERMETIC_CUDA_VERSION)"),
    "pythons": N_("Python versions (requirements_lock_3_*.txt)"),
    "cuda_list": N_("hermetic CUDA/cuDNN lists"),
    "hermetic_llvm_versions": N_("hermetic LLVM (default, and the LLVM_VERSION choices)"),
    "wheel_style": N_("wheel target"),
}
#: .bazelrc's hermetic defaults, by the Release field they set
HERMETIC_FIELDS = {"HERMETIC_CUDA_VERSION": "hermetic_cuda_default",
                   "HERMETIC_CUDNN_VERSION": "hermetic_cudnn_default",
                   "HERMETIC_NCCL_VERSION": "hermetic_nccl_default",
                   "HERMETIC_NVSHMEM_VERSION": "hermetic_nvshmem_default"}


@dataclass(frozen=True)
class Difference:
    """One fact where the table and the source's files disagree."""

    fact: str  # a Release field (FACT_NAMES)
    table: str
    source: str
    file: str  # "FILE @ COMMIT" of the source

    def to_dict(self) -> dict[str, str]:
        """JSON-ready (the plan and the record keep it)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SourceView:
    """The table's release with the source's facts over it, and where they disagreed."""

    release: Release
    kb: KnowledgeBase  # the table, plus the lists the source carries or pins
    facts: SourceFacts
    table_release: Release
    differences: tuple[Difference, ...]

    def plan_notes(self) -> list[str]:
        """The plan's notes: one per difference from the table."""
        return [_("source: {file} says {fact} {source} (tfwizard's table: {table}); the "
                  "plan follows the file").format(
                    file=d.file or self.facts.where, fact=translate(FACT_NAMES[d.fact]),
                    source=d.source or "-", table=d.table or "-")
                for d in self.differences]

    def to_record(self) -> dict[str, Any]:
        """What plan.json keeps: where, commit, the tree's version, the differences."""
        facts = self.facts
        return {"where": facts.where, "commit": facts.commit, "tf_version": facts.tf_version,
                "release": self.table_release.version,
                "differences": [d.to_dict() for d in self.differences]}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _python_range(pythons: tuple[str, ...]) -> SpecifierSet:
    low, high = Version(pythons[0]), Version(pythons[-1])
    return SpecifierSet(f">={low.major}.{low.minor},<{high.major}.{high.minor + 1}")


def _bazel_changes(release: Release, facts: SourceFacts) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    version = version_from_spec(facts.bazel) if facts.bazel else None
    if version is not None:
        changes["bazel"] = str(version)
    if facts.bazel_min:
        spec = f">={facts.bazel_min}" + (f",<={facts.bazel_max}" if facts.bazel_max else "")
        try:
            changes["bazel_range"] = SpecifierSet(spec)
        except ValueError:
            pass
    if version is not None and version not in changes.get("bazel_range", release.bazel_range):
        changes["bazel_range"] = SpecifierSet(f">={version},<{version.major + 1}")
    return changes


def _lists(release: Release, facts: SourceFacts, kb: KnowledgeBase
           ) -> tuple[dict[str, Any], dict[str, RedistList], str]:
    """(Release changes, lists to add to the knowledge base, the table's list as text)."""
    table = kb.redist.get(release.cuda_list or "")
    table_text = _list_text(table) if table else ""
    if facts.redist_cuda is not None and facts.redist_cudnn is not None:
        name = f"source:{facts.where}"
        own = RedistList(name, facts.redist_cuda, facts.redist_cudnn, True, (SOURCE_KEY,),
                         cuda_without_nccl=facts.redist_without_nccl)
        if table is not None and (table.cuda, table.cudnn, table.cuda_without_nccl) == (
                own.cuda, own.cudnn, own.cuda_without_nccl) and not table.unverified:
            return {}, {}, table_text  # the table has this very list
        return {"cuda_list": name}, {name: own}, table_text
    pin = facts.toolchain_pin
    if not pin or (table is not None and table.commit == pin):
        return {}, {}, table_text
    known = pinned(kb, pin)
    if known is not None:
        return {"cuda_list": known.name}, {}, table_text
    if table is None:
        return {}, {}, table_text
    # a pin whose lists the table lacks: the table's list, but only as a guess
    name = f"{table.name}@{pin[:8]}"
    guess = dataclasses.replace(
        table, name=name, commit="", unverified=(
            f"the source pins rules_ml_toolchain {pin[:12]}, whose lists tfwizard does not "
            f"have; these are {table.name}'s"))
    return {"cuda_list": name}, {name: guess}, table_text


def pinned(kb: KnowledgeBase, pin: str) -> RedistList | None:
    """The table's rules_ml_toolchain entry read at commit `pin`, if any."""
    return next((r for r in kb.redist.values() if pin and r.commit == pin), None)


def _llvm(release: Release, facts: SourceFacts, kb: KnowledgeBase
          ) -> tuple[dict[str, Any], Difference | None]:
    """(Release changes, the difference): the hermetic LLVM of the rules_ml_toolchain
    commit the source pins, where the release compiles with it; a pin the table has no
    LLVM facts for keeps the table's, marked with the pin (UNVERIFIED)."""
    pin = facts.toolchain_pin
    if not pin or not release.hermetic_cc_toolchain:
        return {}, None
    known = pinned(kb, pin)
    if known is None or not known.llvm_versions:
        return {"hermetic_llvm_unknown_pin": pin}, None
    table = _llvm_text(release.hermetic_llvm_default, release.hermetic_llvm_versions)
    own = _llvm_text(known.llvm_default, known.llvm_versions)
    changes = {"hermetic_llvm_default": known.llvm_default,
               "hermetic_llvm_versions": known.llvm_versions}
    if own == table:
        return changes, None
    return changes, Difference("hermetic_llvm_versions", table,
                               f"{own} @ rules_ml_toolchain {pin[:8]}",
                               facts.cite("toolchain_pin"))


def _llvm_text(default: str | None, versions: tuple[str, ...]) -> str:
    return f"{default or '-'} ({', '.join(versions)})"


def _list_text(redist: RedistList) -> str:
    at = f" @ {redist.commit[:8]}" if redist.commit else ""
    return (f"{redist.name}{at}: CUDA {redist.cuda[0]}-{redist.cuda[-1]}, "
            f"cuDNN {redist.cudnn[0]}-{redist.cudnn[-1]}")


def _changes(release: Release, facts: SourceFacts) -> dict[str, Any]:
    """The Release fields the facts state (same value or not)."""
    changes = _bazel_changes(release, facts)
    if facts.configs is not None:
        changes["cuda_wheel_config"] = "cuda_wheel" in facts.configs
    for name in ("hermetic_cc_toolchain", "use_pywrap_rules", "wheel_style"):
        value = getattr(facts, name)
        if value is not None:
            changes[name] = value
    for env_name, field_name in HERMETIC_FIELDS.items():
        if env_name in facts.hermetic:
            changes[field_name] = facts.hermetic[env_name]
    if facts.compute_capabilities:
        changes["wheel_compute_capabilities"] = facts.compute_capabilities
    if facts.configure_vars and "TF_NEED_CUDA" in facts.configure_vars:
        changes["hermetic_cuda"] = "HERMETIC_CUDA_VERSION" in facts.configure_vars
    if facts.pythons:
        changes["pythons"] = facts.pythons
        changes["python"] = _python_range(facts.pythons)
    return changes


#: the fact whose file a Release field came from (SourceFacts.origin's keys)
_ORIGIN = {"bazel": "bazel", "bazel_range": "bazel_min", "cuda_wheel_config": "configs",
           "hermetic_cc_toolchain": "hermetic_cc_toolchain",
           "use_pywrap_rules": "use_pywrap_rules", "wheel_style": "wheel_style",
           "wheel_compute_capabilities": "compute_capabilities",
           "hermetic_cuda": "configure_vars", "pythons": "pythons",
           **dict.fromkeys(HERMETIC_FIELDS.values(), "hermetic")}


def overlay(release: Release, facts: SourceFacts, kb: KnowledgeBase) -> SourceView:
    """The release as `facts` describe it, and one Difference per disagreement."""
    changes = _changes(release, facts)
    diffs = [Difference(name, _text(getattr(release, name)), _text(value),
                        facts.cite(_ORIGIN[name]))
             for name, value in changes.items()
             if name in _ORIGIN and _ORIGIN[name] in facts.origin
             and _text(getattr(release, name)) != _text(value)]
    list_changes, added, table_text = _lists(release, facts, kb)
    if list_changes:
        changes.update(list_changes)
        new = added.get(list_changes["cuda_list"]) or kb.redist[list_changes["cuda_list"]]
        source = facts.cite("redist_cuda") or facts.cite("toolchain_pin")
        diffs.append(Difference("cuda_list", table_text, _list_text(new), source))
    llvm_changes, llvm_diff = _llvm(dataclasses.replace(release, **changes), facts, kb)
    changes.update(llvm_changes)
    if llvm_diff is not None:
        diffs.append(llvm_diff)
    version = _version_difference(release, facts)
    if version is not None:
        diffs.insert(0, version)
    new_kb = dataclasses.replace(kb, redist={**kb.redist, **added}) if added else kb
    return SourceView(dataclasses.replace(release, **changes), new_kb, facts, release,
                      tuple(diffs))


def _version_difference(release: Release, facts: SourceFacts) -> Difference | None:
    """The checkout's own version against the entry's (master: its series)."""
    if not facts.tf_version:
        return None
    mine = Version(facts.tf_version)
    if release.is_master:
        same = (mine.major, mine.minor) == Version(release.series).release[:2]
        table = f"master ({release.series})"
    else:
        same = mine == Version(release.version)
        table = release.version
    return None if same else Difference("version", table, facts.tf_version,
                                        facts.cite("tf_version"))


def base_release(kb: KnowledgeBase, version: str, facts: SourceFacts | None) -> Release | None:
    """The table entry checks start from: the recipe's version; with none, the release the
    checkout says it is, else the newest entry of its series before it (a patch release
    the table lacks: its files correct the rest, and the version is one difference), else
    master."""
    if version or facts is None or not facts.tf_version:
        return kb.release(version or "master")
    own = kb.release(facts.tf_version)
    if own is not None:
        return own
    mine = Version(facts.tf_version)
    same_series = [r for r in kb.releases if not r.is_master
                   and Version(r.series).release == mine.release[:2]
                   and Version(r.version) <= mine]
    return same_series[-1] if same_series else kb.release("master")


def recipe_source_facts(recipe: Recipe, recipe_dir: Path | None = None) -> SourceFacts | None:
    """The facts of the recipe's checkout (tensorflow.source_dir) when it is a folder here."""
    if not recipe.tensorflow.source_dir:
        return None
    path = recipe.resolve_path("tensorflow.source_dir", base=recipe_dir)
    if path is None or not path.is_dir():
        return None
    facts = read_source_facts(path)
    return facts if facts.stated else None


def source_view(recipe: Recipe, kb: KnowledgeBase, *, recipe_dir: Path | None = None,
                facts: SourceFacts | None = None) -> SourceView | None:
    """The recipe's release as its source describes it: `facts` (read after a clone), else
    the checkout's; None when there are none or the release is unknown."""
    facts = facts if facts is not None else recipe_source_facts(recipe, recipe_dir)
    if facts is None:
        return None
    release = base_release(kb, recipe.tensorflow.version, facts)
    if release is None:
        return None
    return overlay(release, facts, kb)


def release_view(recipe: Recipe, kb: KnowledgeBase, *, facts: SourceFacts | None = None
                 ) -> tuple[SourceView | None, Release | None, KnowledgeBase]:
    """The source's view (source_view; None where no checkout or clone was read), and the
    release and knowledge base a recipe's checks and choices are made from: the view's,
    else the table's entry."""
    view = source_view(recipe, kb, facts=facts)
    if view is None:
        return None, kb.release_for(recipe), kb
    return view, view.release, view.kb
