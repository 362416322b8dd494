"""The one-line verdict at the top of Review: can the build start, and is a build needed
at all (the official wheel may already serve the machine: core/advise/).

Whether it can start is what the findings say: the rules' and the preflight's
(core/session.py, as `tfwizard build` runs them); errors block the build, as on every
page. Until the preflight has answered, a recipe the rules pass is CHECKING, never ready.
This only puts it in one sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..advise import Advice, Intent, advise
from ..errors import TfWizardError
from ..findings import Finding
from ..host import HostProfile
from ..i18n import _, ngettext
from ..knowledge import KnowledgeBase
from ..recipe import Recipe

READY = "ready"
WARNINGS = "warnings"
BLOCKED = "blocked"
CHECKING = "checking"


@dataclass(frozen=True)
class Verdict:
    """READY, WARNINGS or BLOCKED, and the sentence that says it."""

    status: str
    text: str
    #: the official wheel serves the machine: a build may not be needed
    official: bool = False


def official_advice(kb: KnowledgeBase, recipe: Recipe, build: HostProfile | None,
                    target: HostProfile | None) -> Advice | None:
    """`tfwizard advise` for the recipe's backend on the target (else build) machine."""
    if build is None:
        return None
    intent = Intent.CPU if recipe.backend.kind == "cpu" else Intent.GPU
    try:
        return advise(kb, host=build, target=target, intent=intent)
    except TfWizardError:
        return None


def review_verdict(findings: Sequence[Finding], advice: Advice | None = None, *,
                   pending: bool = False) -> Verdict:
    """The verdict on the findings of every page and the preflight's, and the advice when
    given; `pending`: the preflight has not answered yet."""
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity == "warning"]
    if errors:
        status = BLOCKED
        text = ngettext("Not ready to build: fix the {count} error listed below first.",
                        "Not ready to build: fix the {count} errors listed below first.",
                        len(errors)).format(count=len(errors))
    elif pending:
        status = CHECKING
        text = _("Checking what `tfwizard build` checks before it starts (proxies, paths, "
                 "the build image)…")
    elif warnings:
        status = WARNINGS
        text = ngettext("Ready to build, with {count} warning worth reading below.",
                        "Ready to build, with {count} warnings worth reading below.",
                        len(warnings)).format(count=len(warnings))
    else:
        status = READY
        text = _("Ready to build: no problems found.")
    official = advice is not None and advice.official_serves and bool(advice.requirement) \
        and not advice.on_target
    if official and advice is not None:
        text += " " + _("A build may not be needed: {advice}").format(advice=advice.summary)
    return Verdict(status, text, official)
