"""What a check says: a Finding (a code, a severity, a message in the current language, its
sources, the recipe key it is about, maybe a Fix; the evidence it rests on and other ways
out, its Remedies). Rules, the preflight, the remote checks and advise all say it this
way, so every front end prints and serialises findings alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .vocab import Severity, severity_order

if TYPE_CHECKING:
    from .knowledge import KnowledgeBase


@dataclass(frozen=True)
class Fix:
    """A recipe change that resolves a finding: a label for the button, and the changes."""

    label: str
    changes: dict[str, Any]


@dataclass(frozen=True)
class Remedy:
    """One way out of a finding, of a kind: build | release | prerelease | python | driver |
    container | reboot | env | cpu-wheel | profile.

    A build's `changes` are recipe keys (as `recipe set` takes them); a release's or a
    package's `requirement` is what pip installs.
    """

    kind: str
    label: str
    changes: Mapping[str, Any] = field(default_factory=dict, hash=False)
    requirement: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The remedy as JSON data."""
        return {"kind": self.kind, "label": self.label, "changes": dict(self.changes),
                "requirement": self.requirement}


@dataclass(frozen=True)
class Finding:
    """One check's result: a code, a severity, a message in the current language, its
    sources, the recipe key it is about and maybe a fix (a recipe change).

    `evidence` are the facts compared, as sentences (advise shows them under a check that
    passed, too); `facts` the same values for machines and tests; `remedies` the ways out
    besides the recipe fix (another release, a driver, a CPU wheel: advise's)."""

    code: str
    severity: Severity
    message: str
    sources: tuple[str, ...] = ()
    key: str = ""  # the recipe key it is about
    fix: Fix | None = None
    evidence: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict, hash=False)
    remedies: tuple[Remedy, ...] = ()

    @property
    def fixes(self) -> tuple[Remedy, ...]:
        """Every way out: the recipe fix (as a build remedy) first, then the remedies."""
        own = () if self.fix is None else (
            Remedy("build", self.fix.label, dict(self.fix.changes)),)
        return own + self.remedies

    def to_dict(self, kb: KnowledgeBase | None = None) -> dict[str, Any]:
        """The finding as JSON, with the source titles when a knowledge base is given."""
        data: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "key": self.key,
            "sources": list(self.sources),
            "fix": None if self.fix is None else {"label": self.fix.label,
                                                  "changes": self.fix.changes},
            "evidence": list(self.evidence),
            "facts": dict(self.facts),
            "fixes": [r.to_dict() for r in self.fixes],
        }
        if kb is not None:
            data["source_titles"] = [kb.sources[s].title for s in self.sources if s in kb.sources]
        return data


#: findings that follow from another one (no cubin for the GPU -> the PTX must JIT): a
#: reader should see the cause (CC_DROPPED_BY_CUDA, CC_NOT_COVERED) first
SYMPTOMS = frozenset({"PTX_DRIVER", "CC_PTX_JIT"})


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes; within each, causes before symptoms (stable)."""
    return sorted(findings, key=lambda f: (severity_order(f.severity), f.code in SYMPTOMS))


def errors(findings: list[Finding]) -> list[Finding]:
    """The findings that stop a build."""
    return [f for f in findings if f.severity == "error"]
