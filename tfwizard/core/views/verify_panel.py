"""The verification report as panel rows: one row per check, each pass, fail or info.

The Verify page draws these rows (tfwizard/gui/widgets/verify_panel.py); the words are
the core's, so the panel and `tfwizard verify` say the same things.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..diagnosis.runtime import gpu_devices, op_error
from ..i18n import _
from ..verify.job import VerifyReport, missing_interpreter, wheel_kind

#: a row's status: passed, failed, a fact that is neither (e.g. a CPU wheel's CUDA), or
#: not checked (TensorFlow did not import, so nothing after it could run)
ROW_STATUSES = ("pass", "fail", "info", "skip")


@dataclass(frozen=True)
class PanelRow:
    """One check of the verification panel."""

    key: str  # stable name, e.g. "import", "op:/device:CPU:0"
    label: str
    status: str  # pass | fail | info
    detail: str = ""


def _import_rows(data: Mapping[str, Any]) -> list[PanelRow]:
    tf = data.get("tensorflow")
    if not tf:
        why = str(data.get("import_error") or _("not reached"))
        return [PanelRow("import", _("TensorFlow imported"), "fail", why)]
    where = str(tf.get("path") or "")
    return [PanelRow("import", _("TensorFlow imported"), "pass", where),
            PanelRow("version", _("Version"), "pass", str(tf.get("version") or "?"))]


def _build_row(data: Mapping[str, Any], expect: str) -> PanelRow:
    info = data.get("build_info") or {}
    kind = wheel_kind(data)
    parts = [f"{key} {info[key]}" for key in ("cuda_version", "cudnn_version")
             if info.get(key)]
    detail = _("a {kind} build").format(kind=kind) + (f" ({', '.join(parts)})" if parts else "")
    if expect in ("cuda", "rocm"):
        return PanelRow("built-with", _("Built with CUDA/cuDNN"),
                        "pass" if kind == expect else "fail", detail)
    return PanelRow("built-with", _("Built with CUDA/cuDNN"), "info", detail)


def _gpu_row(data: Mapping[str, Any], expect: str) -> PanelRow:
    gpus = gpu_devices(data)
    details = {str(d.get("name")): f"{d.get('device_name') or '?'}, CC "
                                    f"{d.get('compute_capability') or '?'}"
               for d in data.get("gpu_details") or []}
    text = ", ".join(f"{g} ({details[g]})" if g in details else g for g in gpus)
    if expect in ("cuda", "rocm"):
        return PanelRow("gpus", _("GPUs visible"), "pass" if gpus else "fail",
                        text or _("no GPU device"))
    return PanelRow("gpus", _("GPUs visible"), "info",
                    text or _("none (a CPU build was expected)"))


def _op_rows(data: Mapping[str, Any]) -> list[PanelRow]:
    rows = []
    for op in data.get("ops") or []:
        device = str(op.get("device"))
        if op.get("ok"):
            detail = _("reduce_sum = {value:.4f} (expected {expected:.4f})").format(
                value=op.get("value"), expected=op.get("expected"))
        else:
            detail = op_error(op)
        rows.append(PanelRow(f"op:{device}", _("Op on {device}").format(device=device),
                             "pass" if op.get("ok") else "fail", detail))
    if not rows:
        rows.append(PanelRow("op", _("Op on each device"), "fail", _("no op ran")))
    return rows


def _matmul_rows(data: Mapping[str, Any]) -> list[PanelRow]:
    rows = []
    for mm in data.get("matmul") or []:
        device = str(mm.get("device"))
        label = _("Matmul on {device}").format(device=device)
        if "ms" in mm:
            rows.append(PanelRow(f"matmul:{device}", label, "pass",
                                 _("{n}×{n} in {ms} ms ({gflops} GFLOP/s)").format(
                                     n=mm.get("n"), ms=mm["ms"], gflops=mm.get("gflops"))))
        else:
            rows.append(PanelRow(f"matmul:{device}", label, "fail", str(mm.get("error"))))
    return rows


def _library_row(data: Mapping[str, Any]) -> PanelRow:
    libs = data.get("libraries") or []
    if not libs:
        return PanelRow("libraries", _("Library origins"), "info",
                        _("no CUDA/ROCm library loaded"))
    text = "; ".join(f"{lib.get('name')}: {lib.get('origin')} ({lib.get('path')})"
                     for lib in libs)
    return PanelRow("libraries", _("Library origins"), "info", text)


def panel_rows(report: VerifyReport) -> list[PanelRow]:
    """The panel's rows for a report: TensorFlow imported, version, built with CUDA/cuDNN,
    GPUs visible, an op on each device, the matmul figures, where the libraries came from,
    and the wheel's build facts against the recipe and this machine."""
    data = report.probe.data
    rows = _import_rows(data)
    if not data.get("tensorflow"):
        # every check still has its row, saying why it did not run
        why = _("not checked: TensorFlow did not import")
        gpu = report.expect in ("cuda", "rocm")
        return rows + [PanelRow(key, label, "skip", why) for key, label in (
            ("version", _("Version")), ("built-with", _("Built with CUDA/cuDNN")),
            *([("gpus", _("GPUs visible"))] if gpu else []),
            ("op", _("Op on each device")), ("matmul", _("Matmul")))]
    rows.append(_build_row(data, report.expect))
    rows.append(_gpu_row(data, report.expect))
    rows += _op_rows(data)
    rows += _matmul_rows(data)
    rows.append(_library_row(data))
    # the wheel's own build facts against the recipe's build and this machine (verifyfacts)
    rows += [PanelRow(c.key, c.name, "pass" if c.ok else "fail", c.detail)
             for c in report.checks if c.key.startswith("fact:")]
    return rows


def verdict_text(report: VerifyReport) -> str:
    """The one line at the top of the panel."""
    version = (report.probe.data.get("tensorflow") or {}).get("version")
    if report.status == "cancelled":
        return _("Verification cancelled: the probe was stopped before it finished.")
    if report.ok:
        return _("TensorFlow {version} works here: every check passed ({expect}).").format(
            version=version, expect=report.expect)
    missing = missing_interpreter(report)
    if missing:
        return missing
    failed = sum(1 for c in report.checks if not c.ok)
    if not report.diagnoses:
        return _("TensorFlow does not work as expected here: {count} of {total} checks "
                 "failed.").format(count=failed, total=len(report.checks))
    return _("TensorFlow does not work as expected here: {count} of {total} checks failed; "
             "the diagnosis below says why and what to do.").format(
        count=failed, total=len(report.checks))
