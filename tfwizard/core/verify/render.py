"""A verification report as text: the table the CLI prints and the GUI shows."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from pathlib import Path

from ..diagnosis.runtime import (
    build_targets,
    gpu_devices,
    op_error,
)
from ..diagnosis.text import diagnosis_block
from ..i18n import _
from ..wheelhouse.provenance import installed_line
from .probe import ProbeRun, last_lines
from .report import VerifyReport, wheel_kind


def _width(text: str) -> int:
    """Columns a text takes in a terminal (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _row(label: str, value: str) -> str:
    """One "  Label          value" line of the report, aligned for any language."""
    return f"  {label}{' ' * max(1, 15 - _width(label))}{value}"


def _probe_status(run: ProbeRun) -> str:
    """How the probe went, e.g. "ok in 3.2 s" (ProbeRun.status in words)."""
    text = {"ok": _("ok in {seconds:g} s"), "crashed": _("crashed in {seconds:g} s"),
            "timeout": _("timed out in {seconds:g} s"), "error": _("failed in {seconds:g} s"),
            "not_started": _("not started"),
            "cancelled": _("cancelled after {seconds:g} s")}.get(run.status, run.status + " ({seconds:g} s)")
    return text.format(seconds=run.elapsed_s)


def _expectation(report: VerifyReport) -> str:
    text = {"option": _("Expectation: {expect} (from option)"),
            "recipe": _("Expectation: {expect} (from recipe)"),
            "wheel": _("Expectation: {expect} (from wheel)")}.get(report.expect_source)
    return (text or "{expect} ({source})").format(expect=report.expect,
                                                 source=report.expect_source)


def _wheelhouse_rows(report: VerifyReport, env: Mapping[str, str] | None) -> list[str]:
    """The row naming a wheelhouse build, and whence its install record says it came."""
    data = report.probe.data
    if not data.get("provenance"):
        return []
    from ..wheelhouse.fetch import install_record_of

    return [_row(_("Wheelhouse"), installed_line(data, install_record_of(report.python, env)))]


def render_report(report: VerifyReport, *, show_log: bool = True,
                  env: Mapping[str, str] | None = None) -> str:
    """The readable report `tfwizard verify` prints (in the current language); `env`
    names the data folder whose install records say where a wheelhouse build came from."""
    data = report.probe.data
    tf = data.get("tensorflow") or {}
    info = data.get("build_info") or {}
    out = [_("TensorFlow verification of {python}").format(python=report.python)]
    out.append(_row("TensorFlow", str(tf.get("version", "-")) +
                    (f"  ({tf.get('path')})" if tf.get("path") else "")))
    out += _wheelhouse_rows(report, env)
    py = data.get("python") or {}
    if py:
        out.append(_row("Python", f"{py.get('version')}  ({py.get('executable')})"))
    if tf:  # without TensorFlow there is no build to speak of
        out.append(_row(_("Build"), _("{kind} build (is_built_with_cuda = {value})").format(
            kind=wheel_kind(data), value=data.get("built_with_cuda"))))
    for key in ("cuda_version", "cudnn_version"):
        if info.get(key):
            out.append(_row(key, str(info[key])))
    targets = build_targets(data)
    if targets:
        out.append(_row(_("Built for CCs"), ", ".join(targets)))
    devices = data.get("devices") or []
    out.append(_row(_("Devices"), ", ".join(d.get("name", "?") for d in devices) or _("none")))
    if tf and not gpu_devices(data):
        out.append(_row(_("GPUs"), _("none: TensorFlow lists no GPU device")))
    for d in data.get("gpu_details") or []:
        out.append(f"                 {d.get('name')}: {d.get('device_name') or '?'}, "
                   f"CC {d.get('compute_capability') or '?'}")
    for op in data.get("ops") or []:
        if op.get("ok"):
            result = _("ok, {value:.4f} (expected {expected:.4f})").format(
                value=op.get("value"), expected=op.get("expected"))
        else:
            result = _("FAILED: {error}").format(error=op_error(op))
        out.append(_row("reduce_sum", f"{op.get('device')}: {result}"))
    for mm in data.get("matmul") or []:
        if "ms" in mm:
            out.append(_row(f"matmul {mm.get('n')}^2", f"{mm.get('device')}: {mm['ms']} ms"
                                                       f" ({mm.get('gflops')} GFLOP/s)"))
        else:
            out.append(_row("matmul", f"{mm.get('device')}: " + _("FAILED: {error}").format(
                error=mm.get("error"))))
    libs = data.get("libraries") or []
    if libs:
        out.append("  " + _("Libraries"))
        for lib in libs:
            out.append(f"    {lib.get('name'):<28} {lib.get('origin'):<8} {lib.get('path')}")
    elif tf:
        out.append(_row(_("Libraries"), _("no CUDA/ROCm library loaded")))
    out.append(_row(_("Probe"), _probe_status(report.probe) + (
        f": {report.probe.message}" if report.probe.message else "")))
    out.append("")
    out.append(_expectation(report))
    for c in report.checks:
        if c.detail:
            line = _("[ok] {check}: {detail}") if c.ok else _("[FAIL] {check}: {detail}")
        else:
            line = _("[ok] {check}") if c.ok else _("[FAIL] {check}")
        out.append("  " + line.format(check=c.name, detail=c.detail))
    if report.diagnoses:
        out.append("")
        out.append(_("Diagnosis:"))
        for d in report.diagnoses:
            out.extend("  " + line for line in diagnosis_block(d, indent="        ", quotes=3))
    if show_log:
        lines = last_lines(report.probe, count=40)
        if lines:
            out.append("")
            out.append(_("TensorFlow log (fd 2 during the probe):"))
            out.extend(f"  | {line[:300]}" for line in lines)
    out.append("")
    out.append(_result_line(report))
    return "\n".join(out)


def missing_interpreter(report: VerifyReport) -> str | None:
    """Why the probe could not start when the interpreter does not exist, else None."""
    if report.probe.status != "not_started" or Path(report.python).exists():
        return None
    return _("{python} does not exist: install the wheel first (that creates the venv), or "
             "choose the interpreter of a venv that has TensorFlow.").format(
        python=report.python)


def _result_line(report: VerifyReport) -> str:
    """The last line; an interpreter that does not exist says why it may not."""
    if report.status == "cancelled":
        return _("RESULT: CANCELLED, the probe was stopped before it finished.")
    if report.ok:
        return _("RESULT: OK, everything the expectation promised works.")
    missing = missing_interpreter(report)
    if missing:
        return _("RESULT: FAILED, {why}").format(why=missing)
    if not report.diagnoses:
        return _("RESULT: FAILED, see the checks above.")
    return _("RESULT: FAILED, see the checks and diagnosis above.")
