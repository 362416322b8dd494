"""What a check says: a Finding (a code, a severity, a message in the current language, its
sources, the recipe key it is about, maybe a Fix). Rules, the preflight and the remote
checks all say it this way, so every front end prints and serialises findings alike."""

from __future__ import annotations

from dataclasses import dataclass
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
class Finding:
    """One rule result: a code, a severity, a message in the current language, its sources, the recipe key it is about and maybe a fix."""

    code: str
    severity: Severity
    message: str
    sources: tuple[str, ...] = ()
    key: str = ""  # the recipe key it is about
    fix: Fix | None = None

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
