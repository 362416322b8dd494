"""A release's knowledge entry made from a TensorFlow tree: the maintainer's path for a new
release, and the check that an entry still says what the release's files say.

    draft = draft_entry(kb, "2.22.0rc0", read_source_facts(tree))
    draft.differences          # where releases.toml disagrees with the files
    write_entry(folder, draft) # releases.toml (and sources.toml, cuda.toml) updated

The files state what srcfacts.py reads (Bazel, the .bazelrc switches and defaults, the
Pythons, the toolchain pin and lists, the wheel target, the tag's commit); everything else
comes from the release's existing entry, or for a new release from the newest entry
before it, and is listed as UNVERIFIED in the written entry. The entry cites the tree as
a source of its own ("tf-tree-<version>": the files and the commit read).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import UsageError
from ..i18n import _
from ..knowledge import KnowledgeBase, RedistList, Release
from .facts import SourceFacts, parse_redist
from .overlay import HERMETIC_FIELDS, Difference, overlay

#: releases.toml's keys in the order its entries write them
ENTRY_KEYS = (
    "version", "series", "git_tag", "python", "pythons", "requires_python", "tested_compiler",
    "tested_clang", "tested_gcc", "bazel", "bazel_range", "tested_cuda", "tested_cudnn",
    "wheel_cuda", "wheel_cudnn", "wheel_compute_capabilities", "wheel_compiler",
    "wheel_tensorrt", "hermetic_cuda", "hermetic_cuda_default", "hermetic_cudnn_default",
    "cuda_list", "numpy", "numpy_by_python", "manylinux", "glibc_floor", "and_cuda",
    "wheel_style", "cuda_wheel_config", "use_pywrap_rules", "windows_cuda", "image",
    "image_clang", "hermetic_cc_toolchain", "hermetic_llvm_default", "hermetic_llvm_versions",
    "hermetic_nccl_default", "hermetic_nvshmem_default", "tag_commit", "sources",
    "unverified")
#: the keys a tree states (srcfacts.py), by the fact that gives each
READ_KEYS = {"bazel": "bazel", "bazel_range": "bazel_min", "cuda_wheel_config": "configs",
             "hermetic_cc_toolchain": "hermetic_cc_toolchain",
             "use_pywrap_rules": "use_pywrap_rules", "hermetic_cuda_default": "hermetic",
             "hermetic_cudnn_default": "hermetic", "hermetic_nccl_default": "hermetic",
             "hermetic_nvshmem_default": "hermetic",
             "wheel_compute_capabilities": "compute_capabilities",
             "hermetic_cuda": "configure_vars", "pythons": "pythons", "python": "pythons",
             "wheel_style": "wheel_style"}
#: .bazelrc's variable of each hermetic default
_HERMETIC_ENV = {field: env for env, field in HERMETIC_FIELDS.items()}
#: the keys every entry has, whatever the tree says (never marked as inherited)
OWN_KEYS = ("version", "series", "git_tag", "tag_commit", "sources", "unverified")


def git_tag(version: str) -> str:
    """TensorFlow's tag of a release: "v2.19.1", "v2.22.0-rc0" for "2.22.0rc0"."""
    v = Version(version)
    return f"v{v.base_version}" + (f"-{v.pre[0]}{v.pre[1]}" if v.pre else "")


def source_key(version: str) -> str:
    """The sources.toml key that cites a release's tree: "tf-tree-2-22-0rc0"."""
    return "tf-tree-" + re.sub(r"[^0-9a-z]+", "-", version.lower())


@dataclass(frozen=True)
class EntryDraft:
    """A release's entry as its tree describes it, and how it differs from the table's."""

    release: Release
    facts: SourceFacts
    existing: Release | None  # the table's entry for this version, if any
    template: Release  # what the keys the tree does not state come from
    differences: tuple[Difference, ...]  # against the existing entry (or the template)
    read: tuple[str, ...]  # the keys the tree stated
    new_list: RedistList | None = None  # a hermetic list cuda.toml lacks
    unlisted_pin: str = ""  # a rules_ml_toolchain pin cuda.toml has no list for

    @property
    def inherited(self) -> tuple[str, ...]:
        """The keys not read from the tree."""
        return tuple(k for k in ENTRY_KEYS if k not in self.read and k not in OWN_KEYS)


def _template(kb: KnowledgeBase, version: Version) -> Release:
    """The newest entry before `version` (patch entries and master left out)."""
    earlier = [r for r in kb.releases if not r.is_master and not r.patch_of
               and Version(r.version) < version]
    if not earlier:
        raise UsageError(_("no release in the knowledge base comes before {version}").format(
            version=version))
    return earlier[-1]


def draft_entry(kb: KnowledgeBase, version: str, facts: SourceFacts,
                redist_text: str | None = None) -> EntryDraft:
    """The entry of `version` as `facts` state it. `redist_text`: the pinned
    rules_ml_toolchain's cuda_redist_versions.bzl, for a pin cuda.toml has no list for."""
    try:
        wanted = Version(version)
    except InvalidVersion:
        raise UsageError(_("{version!r} is not a TensorFlow version").format(
            version=version)) from None
    if facts.tf_version and Version(facts.tf_version) != wanted:
        raise UsageError(
            _("the tree is TensorFlow {found} ({file}), not {version}").format(
                found=facts.tf_version, file=facts.cite("tf_version"), version=version),
            _("Point at the tree of {version}, or give --release {found}.").format(
                version=version, found=facts.tf_version))
    existing = kb.release(str(wanted))
    if existing is not None and existing.patch_of:
        existing = None  # a patch entry gets a full entry of its own
    template = existing or _template(kb, wanted)
    start = template if existing else dataclasses.replace(
        template, version=str(wanted), series=f"{wanted.major}.{wanted.minor}",
        git_tag=git_tag(str(wanted)), tag_commit="", patch_of=None)
    new_list = None
    if redist_text and facts.toolchain_pin and not any(
            r.commit == facts.toolchain_pin for r in kb.redist.values()):
        lists = parse_redist(redist_text)
        if lists is None:
            raise UsageError(_("the --redist file has no CUDA_REDIST_JSON_DICT / "
                               "CUDNN_REDIST_JSON_DICT"))
        new_list = RedistList(f"rules_ml_toolchain-{facts.toolchain_pin[:7]}", lists[0],
                              lists[1], True, (source_key(str(wanted)),),
                              cuda_without_nccl=lists[2], commit=facts.toolchain_pin)
        kb = dataclasses.replace(kb, redist={**kb.redist, new_list.name: new_list})
    view = overlay(start, facts, kb)
    release = view.release
    listed = release.cuda_list or ""
    if listed.startswith("source:"):  # the tree carries its own lists
        name = f"tf-{release.series}"
        new_list = dataclasses.replace(view.kb.redist[listed], name=name,
                                       sources=(source_key(str(wanted)),))
        release = dataclasses.replace(release, cuda_list=name)
    unlisted = ""
    if "@" in listed:  # a pin without lists here: the old name, and say so (--redist)
        release = dataclasses.replace(release, cuda_list=start.cuda_list)
        unlisted = facts.toolchain_pin or ""
    release = dataclasses.replace(release, tag_commit=facts.commit or release.tag_commit)
    read = tuple(k for k, fact in READ_KEYS.items() if fact in facts.origin
                 and (fact != "hermetic" or _HERMETIC_ENV[k] in facts.hermetic))
    if "toolchain_pin" in facts.origin or "redist_cuda" in facts.origin:
        read += ("cuda_list",)
    if release.hermetic_cc_toolchain and facts.toolchain_pin and \
            not release.hermetic_llvm_unknown_pin:  # the pinned commit's, cuda.toml's
        read += ("hermetic_llvm_default", "hermetic_llvm_versions")
    differences = view.differences if existing else overlay(template, facts, kb).differences
    return EntryDraft(release, facts, existing, template, differences, read, new_list,
                      unlisted)


def _notes(draft: EntryDraft) -> list[str]:
    """The entry's UNVERIFIED notes: the old ones still true, and one naming what was not
    read from the tree."""
    kept = []
    old = draft.existing.unverified if draft.existing else ()
    for note in old:
        head = note.split(":", 1)[0]
        keys = [k.strip() for k in re.split(r",|\band\b", head) if k.strip()]
        if keys and all(any(fnmatch.fnmatch(r, k) or fnmatch.fnmatch(r, "*_" + k)
                                for r in draft.read) for k in keys):
            continue  # every key it doubted is now read from the tree
        kept.append(note)
    if draft.existing is None:
        # knowledge data is English (people read it translated where it is shown)
        kept.append(("{keys}: {template}'s entry, not read from {version}'s tree; check "
                     "them against the docs table and the official wheel").format(
            keys=", ".join(k for k in draft.inherited if k not in ("numpy_by_python",
                                                                    "tested_gcc")),
            template=draft.template.version, version=draft.release.version))
    if draft.unlisted_pin:
        kept.append(f"cuda_list: the tree pins rules_ml_toolchain {draft.unlisted_pin}, "
                    f"whose lists cuda.toml lacks; {draft.release.cuda_list} is a stand-in "
                    "(give --redist)")
    if draft.release.hermetic_llvm_unknown_pin:
        kept.append(f"hermetic_llvm_*: the tree pins rules_ml_toolchain "
                    f"{draft.release.hermetic_llvm_unknown_pin}, whose LLVM versions cuda.toml "
                    f"lacks; these are {draft.template.version}'s")
    if not draft.release.tag_commit:
        kept.append("tag_commit: the tree's commit was not known (no .git, no --commit)")
    return kept


def entry_values(draft: EntryDraft) -> dict[str, Any]:
    """The entry as releases.toml's key -> value, in ENTRY_KEYS order (None left out)."""
    rel = draft.release
    values: dict[str, Any] = {}
    for key in ENTRY_KEYS:
        if key == "sources":
            values[key] = [*dict.fromkeys([*rel.sources, source_key(rel.version)])]
        elif key == "unverified":
            values[key] = _notes(draft)
        elif key == "numpy_by_python":
            if rel.numpy_by_python:
                values[key] = {py: str(spec) for py, spec in rel.numpy_by_python}
        else:
            value = getattr(rel, key)
            if value is None or (key in _OPTIONAL and not value):
                continue
            values[key] = list(value) if isinstance(value, tuple) else (
                value if isinstance(value, (bool, int)) else _text(value))
    return values


#: keys an entry leaves out when they are empty or off (older entries lack them)
_OPTIONAL = ("tag_commit", "hermetic_cc_toolchain", "hermetic_llvm_versions")


def _text(value: Any) -> str:
    """A value as releases.toml writes it: ranges lower bound first (">=3.10,<3.15")."""
    if isinstance(value, SpecifierSet):
        return ",".join(sorted((str(s) for s in value), key=lambda s: (s[0] != ">", s)))
    return str(value)


def _table(values: dict[str, Any]) -> Any:
    table = tomlkit.table()
    for key, value in values.items():
        if key == "unverified" and value:
            array = tomlkit.array()
            array.extend(value)
            table.add(key, array.multiline(True))
        elif isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            table.add(key, inline)
        else:
            table.add(key, value)
    table.add(tomlkit.nl())
    return table


def entry_toml(draft: EntryDraft) -> str:
    """The entry as the `[[release]]` table releases.toml would get."""
    doc = tomlkit.document()
    aot = tomlkit.aot()
    aot.append(_table(entry_values(draft)))
    doc.append("release", aot)
    return tomlkit.dumps(doc)


def _insert(aot: Any, key: str, value: str, table: Any, *, order: Any) -> None:
    """Replace the entry whose `key` is `value`, else insert it where `order` says."""
    for i, entry in enumerate(aot):
        if entry.get(key) == value:
            aot[i] = table
            return
    at = next((i for i, entry in enumerate(aot) if order(entry)), len(aot))
    aot.insert(at, table)


def write_entry(folder: Path, draft: EntryDraft) -> list[Path]:
    """Write the draft into releases.toml (and its source into sources.toml, a new list into
    cuda.toml) in `folder`, keeping the files' comments; returns the files written."""
    rel = draft.release
    wanted = Version(rel.version)
    path = folder / "releases.toml"
    doc = tomlkit.parse(path.read_text("utf-8"))
    _insert(doc["release"], "version", rel.version, _table(entry_values(draft)),
            order=lambda e: e["version"] == "master" or (
                not e.get("patch_of") and Version(e["version"]) > wanted))
    path.write_text(tomlkit.dumps(doc), "utf-8")
    written = [path]
    sources_path = folder / "sources.toml"
    doc = tomlkit.parse(sources_path.read_text("utf-8"))
    doc["sources"][source_key(rel.version)] = _table(_source_values(draft))
    sources_path.write_text(tomlkit.dumps(doc), "utf-8")
    written.append(sources_path)
    if draft.new_list is not None:
        cuda_path = folder / "cuda.toml"
        doc = tomlkit.parse(cuda_path.read_text("utf-8"))
        new = draft.new_list
        values: dict[str, Any] = {"name": new.name}
        if new.commit:
            values["commit"] = new.commit
        values.update(cuda=list(new.cuda), cudnn=list(new.cudnn), complete=True)
        if new.cuda_without_nccl:
            values["cuda_without_nccl"] = list(new.cuda_without_nccl)
        values["sources"] = list(new.sources)
        doc["redist"][new.name.replace(".", "_")] = _table(values)
        cuda_path.write_text(tomlkit.dumps(doc), "utf-8")
        written.append(cuda_path)
    return written


def _source_values(draft: EntryDraft) -> dict[str, str]:
    facts = draft.facts
    files = sorted(set(facts.origin.values()))
    at = facts.commit or "commit unknown"
    return {"title": f"TensorFlow {draft.release.version}'s own files, read by `tfwizard "
                     "knowledge from-source`",
            "ref": f"tensorflow/tensorflow @ {at}: {', '.join(files)}"}


#: what `fetch_tree` checks out of a tag: the files srcfacts.py reads (sparse, no cone)
SPARSE = ("/.bazelversion", "/.bazelrc", "/configure.py", "/requirements_lock_3_*.txt",
          "/WORKSPACE", "/MODULE.bazel", "/tensorflow/workspace*.bzl",
          "/tensorflow/tools/pip_package/setup.py", "/tensorflow/tools/pip_package/BUILD",
          "/tensorflow/core/public/*version.h", "**/gpus/cuda/hermetic/cuda_redist_versions.bzl")
GIT_TIMEOUT_S = 900


def is_url(text: str) -> bool:
    """Whether a from-source argument is a git URL rather than a folder here."""
    return "://" in text or re.match(r"^[\w.-]+@[\w.-]+:", text) is not None


def fetch_tree(url: str, ref: str, dest: Path) -> None:
    """Only the files the facts need, at `ref` (a tag or branch), into `dest`: a shallow,
    blob-less clone with a sparse checkout (TensorFlow's whole tree is gigabytes)."""
    steps = (["git", "clone", "--quiet", "--depth", "1", "--filter=blob:none", "--no-checkout",
              "--branch", ref, "--", url, str(dest)],
             ["git", "-C", str(dest), "sparse-checkout", "set", "--no-cone", *SPARSE],
             ["git", "-C", str(dest), "checkout", "--quiet"])
    for argv in steps:
        try:
            done = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                  timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(_("git failed: {error}").format(error=exc)) from None
        if done.returncode != 0:
            raise UsageError(_("`{command}` failed: {error}").format(
                command=" ".join(argv[:3]), error=done.stderr.strip()[-500:]),
                _("Check the URL and that {ref} is a tag or branch there.").format(ref=ref))
