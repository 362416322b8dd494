"""Loading the knowledge base: the files, assembled and checked, once per process; and the
texts of it that people read."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import KnowledgeError
from ..i18n import _
from ..resources import resource_path
from .base import KnowledgeBase
from .facts import GfxTarget, GpuCC, Release, RocmRelease, Source
from .read import RawFiles, as_tuple, cuda_facts, parse_release, parse_spec, patch_release


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
            releases.append(patch_release(r, releases))
            continue
        releases.append(parse_release(r))
    gpu_ccs = tuple(
        GpuCC(
            g["cc"],
            g["arch"],
            g.get("tegra", False),
            tuple(re.compile(p, re.IGNORECASE) for p in g["patterns"]),
            as_tuple(g["sources"]),
        )
        for g in raw["gpus"]["cc"]
    )
    rocm = raw["rocm"]
    gfx = tuple(
        GfxTarget(g["target"], g["version"], g["gpus"], as_tuple(g["sources"])) for g in rocm["gfx"]
    )
    rocm_rel = tuple(
        RocmRelease(
            parse_spec(r["versions"], "rocm.toml"),
            as_tuple(r["targets"]),
            as_tuple(r["tensorflow"]),
            as_tuple(r["sources"]),
        )
        for r in rocm["rocm"]
    )
    return KnowledgeBase(
        sources=sources,
        releases=tuple(releases),
        **cuda_facts(raw["cuda"]),
        gpu_ccs=gpu_ccs,
        gfx=gfx,
        rocm=rocm_rel,
        rocm_default_targets=as_tuple(rocm.get("default_targets", [])),
        platforms=raw["platforms"],
        raw=raw,
    )



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
