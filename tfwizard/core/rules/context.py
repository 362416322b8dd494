"""The rules' shared pieces: Finding and Fix, the evaluation context every rule
writes to, and the version and target helpers more than one rule family uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from packaging.version import InvalidVersion, Version

from .. import cc as ccmod
from ..findings import Finding, Fix
from ..host import HostProfile
from ..knowledge import KnowledgeBase, Release
from ..recipe import Recipe
from ..tfsource.overlay import SourceView
from ..toolchain import CxxToolchain, cxx_toolchain
from ..vocab import Severity


@lru_cache(maxsize=4096)
def as_version(text: str) -> Version | None:
    """The text as a Version, or None when it is not one (cached: rules ask often)."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def major_minor(text: str) -> tuple[int, int] | None:
    """(major, minor) of a version text, or None."""
    v = as_version(text)
    return (v.major, v.minor) if v is not None else None


def version_number(text: str) -> float:
    """A version as one comparable number (12.4.1 -> 120401.0; not a version: 0)."""
    v = as_version(text)
    if v is None:
        return 0.0
    parts = (list(v.release) + [0, 0, 0])[:3]
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


@dataclass
class Ctx:
    """What one evaluation sees (recipe, knowledge, release, hosts) and the findings it collects."""

    recipe: Recipe
    kb: KnowledgeBase
    release: Release | None
    build: HostProfile | None
    target: HostProfile | None
    target_is_build_host: bool
    out: list[Finding] = field(default_factory=list)
    #: the release as the source's own files describe it (srcoverlay.py), when read
    source: SourceView | None = None

    def add(self, code: str, severity: Severity, message: str, sources: tuple[str, ...] | list[str] = (),
            key: str = "", fix: Fix | None = None) -> None:
        """Add a finding."""
        self.out.append(Finding(code, severity, message, tuple(sources), key, fix))


Rule = Callable[[Ctx], None]


def cc_targets(ctx: Ctx) -> list[ccmod.Target]:
    """The compute-capability targets the recipe builds for ("auto" expanded for the target)."""
    gpus = ctx.target.nvidia_ccs() if ctx.target is not None else []
    return ccmod.targets(ccmod.expand(list(ctx.recipe.cuda.compute_capabilities), gpus))


def clang_major(ctx: Ctx) -> int | None:
    """The recipe's clang major version, or None when it names none."""
    clang = ctx.recipe.toolchain.clang
    return int(clang) if clang.isdigit() else None


def toolchain(ctx: Ctx) -> CxxToolchain:
    """The C++ toolchain the recipe's build compiles with (toolchain.py)."""
    return cxx_toolchain(ctx.recipe, ctx.release)


