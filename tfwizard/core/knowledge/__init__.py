"""The compatibility knowledge base: resources/knowledge/*.toml as frozen dataclasses.

Every entry names its sources (keys of sources.toml); facts that no primary source
confirmed carry an `unverified` note. `tests/core/test_knowledge.py` lints the data.
The facts are in `facts`, the knowledge base and its questions in `base`, reading the
files in `read`, loading them once in `load`; import the names from here.
"""

from __future__ import annotations

from .base import KnowledgeBase, all_official_wheels
from .facts import (
    ArchInfo,
    ClangInfo,
    CudnnCompat,
    DriverFloor,
    GfxTarget,
    GpuCC,
    OfficialWheel,
    RedistList,
    Release,
    RocmRelease,
    Source,
    Suffixes,
    default_python,
    recipe_python,
)
from .load import display_texts, load_knowledge, load_knowledge_from
from .read import LAZY_FILES, PATCH_KEYS, RawFiles, parse_spec, read_toml

__all__ = [
    "LAZY_FILES", "PATCH_KEYS", "ArchInfo", "ClangInfo", "CudnnCompat", "DriverFloor",
    "GfxTarget", "GpuCC", "KnowledgeBase", "OfficialWheel", "RawFiles", "RedistList", "Release",
    "RocmRelease", "Source", "Suffixes", "all_official_wheels", "default_python",
    "display_texts", "load_knowledge", "load_knowledge_from", "parse_spec", "read_toml",
    "recipe_python",
]
