"""The rule catalog in the order rules run, and `evaluate()`: every rule over one recipe."""

from __future__ import annotations

from ..findings import Finding, sort_findings
from ..host import HostProfile
from ..knowledge import KnowledgeBase, load_knowledge
from ..recipe import Recipe
from ..tfsource.facts import SourceFacts
from ..tfsource.overlay import release_view
from .capabilities import rule_compute_capabilities
from .compiler import rule_compiler
from .context import Ctx, Rule
from .cuda import rule_cuda_versions
from .driver import rule_driver
from .network import rule_least_privilege, rule_remote_and_network
from .platform import rule_platform
from .release import rule_git_ref, rule_python, rule_release
from .resources import rule_bazel_flags, rule_docker, rule_image, rule_resources
from .rocm import rule_rocm
from .source import rule_source_build_modes, rule_source_dir, rule_source_facts


def evaluate(
    recipe: Recipe,
    build_host: HostProfile | None = None,
    target_host: HostProfile | None = None,
    kb: KnowledgeBase | None = None,
    *,
    source_facts: SourceFacts | None = None,
) -> list[Finding]:
    """All findings for a recipe, errors first. target_host None = the build host.

    The release is the table's entry as the source's own files describe it: the
    checkout's (tensorflow.source_dir), or `source_facts` read from a clone
    (srcoverlay.py)."""
    from ..host import auto_host  # "auto" and the target: one rule for check, plan and build

    kb = kb or load_knowledge()
    view, release, kb = release_view(recipe, kb, facts=source_facts)
    ctx = Ctx(recipe, kb, release, build_host, auto_host(build_host, target_host),
              target_host is None, source=view)
    for rule in RULES:
        rule(ctx)
    return sort_findings(ctx.out)


RULES: tuple[Rule, ...] = (
    rule_release,
    rule_git_ref,
    rule_source_dir,
    rule_source_facts,
    rule_source_build_modes,
    rule_python,
    rule_cuda_versions,
    rule_driver,
    rule_compute_capabilities,
    rule_compiler,
    rule_platform,
    rule_rocm,
    rule_resources,
    rule_docker,
    rule_image,
    rule_bazel_flags,
    rule_remote_and_network,
    rule_least_privilege,
)


def apply_fix(recipe: Recipe, finding: Finding) -> Recipe:
    """The recipe with a finding's fix applied (the GUI's one click)."""
    if finding.fix is None:
        return recipe
    new = recipe.with_changes(finding.fix.changes)
    new.document, new.path = recipe.document, recipe.path
    return new
