"""The verification's report: the probe run, the checks against the expectation and the
diagnoses, as data (verify.json)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..diagnosis.runtime import (
    Diagnosis,
)
from .probe import ProbeRun

EXPECTATIONS = ("cpu", "cuda", "rocm")


@dataclass
class Check:
    """One check of the report: its name, whether it passed, and what was seen."""

    name: str
    ok: bool
    detail: str = ""
    key: str = ""  # "fact:..." for verifyfacts' checks (the Verify page's rows)


@dataclass
class VerifyReport:
    """The judged verification: the probe run, the checks against the expectation, the diagnoses."""

    python: str
    expect: str  # cpu | cuda | rocm (given, from the recipe, or what the wheel says it is)
    expect_source: str  # option | recipe | wheel
    probe: ProbeRun
    checks: list[Check] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    host: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """Every check passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    @property
    def status(self) -> str:
        """passed | failed | cancelled (the long-job result's word, core/jobs.py)."""
        if self.probe.status == "cancelled":
            return "cancelled"
        return "passed" if self.ok else "failed"

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (verify.json)."""
        probe = self.probe.data
        return {
            "ok": self.ok,
            "status": self.status,
            "python": self.python,
            "expect": self.expect,
            "expect_source": self.expect_source,
            "probe_status": self.probe.status,
            "tensorflow": (probe.get("tensorflow") or {}).get("version"),
            "checks": [asdict(c) for c in self.checks],
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "probe": self.probe.to_dict(),
            "host_gpus": self.host,
        }

    def to_json(self) -> str:
        """The report as indented JSON (verify.json)."""
        return json.dumps(self.to_dict(), indent=2, default=str)


def wheel_kind(data: Mapping[str, Any]) -> str:
    """What the probed TensorFlow says it was built for: cpu, cuda or rocm."""
    info = data.get("build_info") or {}
    if data.get("built_with_rocm") or info.get("is_rocm_build"):
        return "rocm"
    if data.get("built_with_cuda") or info.get("is_cuda_build"):
        return "cuda"
    return "cpu"
