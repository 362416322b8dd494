"""The rules' shared pieces: the evaluation context every rule writes to, and the target
helpers more than one rule family uses (version helpers: compat.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .. import cc as ccmod
from ..findings import Finding, Fix
from ..host import HostProfile
from ..knowledge import KnowledgeBase, Release
from ..recipe import Recipe
from ..tfsource.overlay import SourceView
from ..toolchain import CxxToolchain, cxx_toolchain
from ..vocab import Severity


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


