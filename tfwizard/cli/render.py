"""Blocks of text more than one command prints: findings, diagnoses, a build's end, a host.

Each function returns lines (or one line); commands decide where they go (standard
output, standard error, JSON instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.i18n import _
from ..core.vocab import build_outcome

if TYPE_CHECKING:
    from ..core.building.run.events import BuildResult


def finding_json(finding: Any) -> str:
    """A gate's finding as one JSON object (the `--json` form of term.finding_lines)."""
    return json.dumps({"type": "check", "severity": finding.severity, "code": finding.code,
                       "message": finding.message})


def finding_details(finding: Any, kb: Any) -> list[str]:
    """What `tfwizard check` prints under a finding: its key, sources and fix."""
    from ..core.fixes import fix_text

    extra = []
    if finding.key:
        extra.append(_("key: {key}").format(key=finding.key))
    if finding.sources:
        extra.append(_("source: {titles}").format(titles="; ".join(
            kb.sources[s].title for s in finding.sources if s in kb.sources)))
    if finding.fix:
        extra.append(_("fix: {label} ({changes})").format(
            label=finding.fix.label, changes=fix_text(finding.fix.changes)))
    return extra


def build_summary(result: BuildResult, diagnoses: list[Any]) -> list[str]:
    """How a build ended: the wheel or why there is none, where its actions came from, the
    diagnoses of its log (or, when none names the cause, its root-cause lines), and its
    record."""
    from ..core.building.run.progress import CacheSummary, cache_summary_text
    from ..core.diagnosis.text import diagnosis_block, unrecognised_block

    lines = [_("Wheel: {path}").format(path=result.wheel) if result.ok
             else build_outcome(result.status, result.message)]
    if result.cache:  # every build Bazel ran ends with where its actions came from
        lines.append(cache_summary_text(CacheSummary(**result.cache)))
    check = result.wheel_check  # the wheel against its recipe
    if check and check.get("ok"):
        lines.append(check.get("summary", ""))
    for d in diagnoses:  # an unrecognised failure's root-cause lines come last
        block = (unrecognised_block(d) if d.type == "unrecognised"
                 else diagnosis_block(d, quotes=4))
        lines.extend("  " + line for line in block)
    lines.append(_("Record: {path}  (log: {log})").format(
        path=result.record_dir, log=Path(result.record_dir) / "log.txt"))
    return lines


def host_text(host: Any) -> str:
    """The GPUs and driver of a host profile in one line."""
    nvidia = host.nvidia
    if not nvidia.gpus:
        return nvidia.message or _("no NVIDIA GPU")
    gpus = ", ".join(_("GPU {index} ({name}, CC {cc})").format(
        index=g.index, name=g.name or "?", cc=g.compute_capability or "?") for g in nvidia.gpus)
    text = _("{gpus}; driver {driver} (CUDA {cuda})").format(
        gpus=gpus, driver=nvidia.driver_version or "?", cuda=nvidia.cuda_driver_version or "?")
    return text + (" - WSL2" if host.os.wsl2 else "")
