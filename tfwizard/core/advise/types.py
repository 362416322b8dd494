"""What advise() answers with: the intent, the verdicts, the build estimate, the advice (its
findings are the common Finding, core/findings.py, with their evidence and Remedies)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..findings import Finding
from ..i18n import _


class Intent(str, Enum):
    """What the person wants from TensorFlow."""

    GPU = "gpu"  # a working GPU TensorFlow
    CPU = "cpu"  # a CPU TensorFlow
    CHANGES = "changes"  # TensorFlow with my own changes
    OTHER_MACHINE = "other-machine"  # a wheel for another machine


VERDICTS = ("official", "official-with-caveats", "fixable", "build", "unsupported", "unknown")
BACKENDS = ("cpu", "cuda", "rocm")

#: remedies that make an official wheel serve without a build
RESOLVING_KINDS = frozenset({"release", "python", "driver", "container", "reboot"})
#: findings that mean the facts to decide are missing
UNKNOWN_CODES = frozenset({"NO_TARGET_PROFILE", "NO_GPU_ON_HOST", "OS_NOT_LINUX",
                           "ROCM_NOT_ASSESSED"})
#: findings another release can remove (they get a "use release X" remedy when one serves)
RELEASE_DEPENDENT = frozenset({
    "NO_OFFICIAL_WHEEL", "PYTHON_NOT_PUBLISHED", "GLIBC_TOO_OLD", "DRIVER_TOO_OLD",
    "GPU_NOT_COVERED", "GPU_PTX_DRIVER", "GPU_PTX_JIT", "GPU_PTX_JIT_FAILS",
    "LOCAL_CUDA_NEEDED",
})


@dataclass(frozen=True)
class BuildEstimate:
    """How long a source build would take on the build host: a rough model (advise.toml)."""

    hours: float
    low: float
    high: float
    jobs: int
    cpus: int
    ram_gib: float | None
    backend: str
    sources: tuple[str, ...]
    unverified: str

    def text(self) -> str:
        """"about 3 hours", in the current language."""
        if self.hours <= 1.0:
            return _("about an hour")
        return _("about {hours} hours").format(hours=f"{self.hours:g}")

    def to_dict(self) -> dict[str, Any]:
        """The estimate as JSON data."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Advice:
    """The answer: does an official wheel serve the machine, and if not, why."""

    verdict: str
    summary: str
    intent: Intent
    backend: str
    release: str
    #: given | newest-serving | newest-with-caveats | newest
    release_choice: str
    arch: str
    python: str | None
    package: str | None
    requirement: str | None
    #: the pip command, an argv list to run on the machine the advice is about
    install: tuple[str, ...]
    #: the verdict about the machine alone (without your changes or custom options)
    machine_verdict: str
    findings: tuple[Finding, ...]
    estimate: BuildEstimate
    on_target: bool

    @property
    def official_serves(self) -> bool:
        """Whether an official wheel serves the machine (perhaps with caveats)."""
        return self.machine_verdict in ("official", "official-with-caveats")

    @property
    def build_proposed(self) -> bool:
        """Whether the advice proposes a source build (its verdict, or a fix of a reason);
        where the wheel serves without one, no build time is offered."""
        return self.verdict == "build" or any(r.kind == "build" for f in self.reasons
                                              for r in f.fixes)

    @property
    def reasons(self) -> tuple[Finding, ...]:
        """The findings that stand in the way or cost something (errors and warnings)."""
        return tuple(f for f in self.findings if f.severity != "info")

    def codes(self, severity: str | None = None) -> list[str]:
        """The codes of the findings, of one severity when given."""
        return [f.code for f in self.findings if severity is None or f.severity == severity]

    def finding(self, code: str) -> Finding | None:
        """The finding with this code, or None."""
        return next((f for f in self.findings if f.code == code), None)

    def to_dict(self) -> dict[str, Any]:
        """The advice as JSON data (`tfwizard check --advise --json`)."""
        return {
            "verdict": self.verdict, "summary": self.summary, "intent": self.intent.value,
            "backend": self.backend, "release": self.release,
            "release_choice": self.release_choice, "arch": self.arch, "python": self.python,
            "package": self.package, "requirement": self.requirement,
            "install": list(self.install), "machine_verdict": self.machine_verdict,
            "official_serves": self.official_serves, "on_target": self.on_target,
            "build_proposed": self.build_proposed,
            "findings": [f.to_dict() for f in self.findings],
            "estimate": self.estimate.to_dict(),
        }


