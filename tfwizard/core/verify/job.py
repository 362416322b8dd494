"""Verify an installed TensorFlow: run probe_tf.py in the target interpreter and judge it.

The probe runs as a subprocess with a timeout, so an import that segfaults or hangs is a
finding in the report, never a crash of the wizard. The report joins what the wheel says
it was built for with what ran, the host profile and the known runtime messages.
"""


from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..diagnosis.runtime import (
    Diagnosis,
    diagnose,
    gpu_devices,
    op_error,
    probe_failure,
)
from ..errors import UsageError
from ..host import HostProfile
from ..i18n import _
from ..install.wheelcheck import Expected
from ..jobs import Event
from ..knowledge import KnowledgeBase, load_knowledge
from .facts import fact_checks
from .probe import (
    DEFAULT_TIMEOUT,
    PROBE_SCRIPT,
    ProbeProcess,
    ProbeRun,
    last_lines,
    probe_env,
    run_probe,
)
from .render import missing_interpreter, render_report
from .report import EXPECTATIONS, Check, VerifyReport, wheel_kind

__all__ = ["DEFAULT_TIMEOUT", "EXPECTATIONS", "PROBE_SCRIPT", "Check", "ProbeProcess", "ProbeRun",
           "Verification", "VerifyFinished", "VerifyReport", "VerifyStarted", "judge",
           "missing_interpreter", "probe_env", "render_report", "run_probe", "verify",
           "wheel_kind"]


def _checks(run: ProbeRun, expect: str, facts: list[tuple[str, str, bool, str]]
            ) -> list[Check]:
    """The checks of a probe run; `facts`: verifyfacts.fact_checks of it."""
    data = run.data
    # the check names and details are words for people (verify.json keeps them as shown)
    checks = [Check(_("probe finished"), run.status == "ok", run.message or
                    _("in {seconds:g} s").format(seconds=run.elapsed_s))]
    tf = data.get("tensorflow")
    checks.append(Check(_("tensorflow imports"), tf is not None,
                        f"TensorFlow {tf.get('version')}" if tf else
                        str(data.get("import_error") or _("not reached"))))
    if tf is None:
        return checks
    ops = data.get("ops") or []
    cpu_ops = [o for o in ops if ":CPU:" in str(o.get("device", "")).upper()]
    checks.append(Check(_("CPU op"), bool(cpu_ops) and all(o.get("ok") for o in cpu_ops),
                        _ops_detail(cpu_ops)))
    if expect in ("cuda", "rocm"):
        kind = wheel_kind(data)
        checks.append(Check(_("wheel built for {expect}").format(expect=expect), kind == expect,
                            _("the wheel is a {kind} build").format(kind=kind)))
        gpus = gpu_devices(data)
        checks.append(Check(_("GPU visible"), bool(gpus),
                            ", ".join(gpus) if gpus else _("no GPU device")))
        gpu_ops = [o for o in ops if ":GPU:" in str(o.get("device", "")).upper()]
        checks.append(Check(_("GPU op on every GPU"),
                            bool(gpus) and len(gpu_ops) >= len(gpus)
                            and all(o.get("ok") for o in gpu_ops),
                            _ops_detail(gpu_ops) if gpu_ops else _("no GPU op ran")))
    checks.extend(Check(name, ok, detail, key) for key, name, ok, detail in facts)
    return checks


def _ops_detail(ops: list[Mapping[str, Any]]) -> str:
    parts = []
    for o in ops:
        if o.get("ok"):
            parts.append(_("{device}: reduce_sum = {value:.4f} (expected {expected:.4f})").format(
                device=o.get("device"), value=o.get("value"), expected=o.get("expected")))
        else:
            parts.append(f"{o.get('device')}: {op_error(o)}")
    return "; ".join(parts) or _("no op ran")


@dataclass(frozen=True)
class VerifyStarted(Event):
    """The probe is starting in `python` (it is given `timeout_s` seconds)."""

    type: ClassVar[str] = "started"
    python: str
    timeout_s: float


@dataclass(frozen=True)
class VerifyFinished(Event):
    """The verification ended (passed, failed or cancelled): its report."""

    type: ClassVar[str] = "finished"
    report: VerifyReport

    def to_dict(self) -> dict[str, Any]:
        """{"type": "finished", "report": the report as JSON}."""
        return {"type": self.type, "report": self.report.to_dict()}


class Verification:
    """One verification as a long job (core/jobs.py): `events()` runs the probe in a worker
    thread, `cancel()` kills it from any thread, `result` is the VerifyReport.

    ``expect`` None takes the recipe's backend.kind, else what the wheel says it is.
    ``recipe`` (a Recipe) also lets a compute-capability fix list the whole new value.
    ``expected``: what the build promised of its wheel (wheelcheck.recorded_expectation of
    its record): the installed TensorFlow's own facts are held against it.
    """

    def __init__(self, python: str | os.PathLike[str], *, expect: str | None = None,
                 host: HostProfile | None = None, timeout: float = DEFAULT_TIMEOUT,
                 env: Mapping[str, str] | None = None, recipe: Any = None,
                 kb: KnowledgeBase | None = None, expected: Expected | None = None) -> None:
        if expect is not None and expect not in EXPECTATIONS:
            raise UsageError(_("expect: {value!r} is not one of {choices}").format(
                value=expect, choices=", ".join(EXPECTATIONS)))
        self.python = os.fspath(python)
        self.expect, self.host, self.timeout = expect, host, timeout
        self.recipe, self.kb, self.expected = recipe, kb, expected
        self.result: VerifyReport | None = None
        self._probe = ProbeProcess(python, timeout=timeout, env=env)

    async def events(self) -> AsyncIterator[Event]:
        """VerifyStarted, then VerifyFinished with the report (also when cancelled)."""
        loop = asyncio.get_running_loop()
        yield VerifyStarted(self.python, self.timeout)
        try:
            report = await loop.run_in_executor(None, self.run)
        finally:
            if self.result is None:  # the task was cancelled (aclose, CancelledError)
                self._probe.cancel()
        yield VerifyFinished(report)

    def cancel(self) -> None:
        """Stop the probe now; the report then says "cancelled"."""
        self._probe.cancel()

    def run(self) -> VerifyReport:
        """Probe and judge, blocking (events() runs this in a thread); sets `result`."""
        self.result = judge(self._probe.run(), expect=self.expect, host=self.host,
                            recipe=self.recipe, kb=self.kb, expected=self.expected)
        return self.result


def verify(python: str | os.PathLike[str], *, expect: str | None = None,
           host: HostProfile | None = None, timeout: float = DEFAULT_TIMEOUT,
           env: Mapping[str, str] | None = None, recipe: Any = None,
           kb: KnowledgeBase | None = None, expected: Expected | None = None) -> VerifyReport:
    """Probe TensorFlow in `python` and judge it against `expect` (cpu | cuda | rocm),
    blocking: `Verification(...).run()`."""
    return Verification(python, expect=expect, host=host, timeout=timeout, env=env,
                        recipe=recipe, kb=kb, expected=expected).run()


def judge(run: ProbeRun, *, expect: str | None = None, host: HostProfile | None = None,
          recipe: Any = None, kb: KnowledgeBase | None = None,
          expected: Expected | None = None) -> VerifyReport:
    """The report on a probe run: checks against the expectation, and the diagnoses."""
    kb = kb or load_knowledge()
    python = run.python
    source = "option"
    if expect is None and recipe is not None:
        expect, source = recipe.backend.kind, "recipe"
    if expect is None:
        expect, source = wheel_kind(run.data), "wheel"
    diagnoses: list[Diagnosis] = []
    if run.status != "cancelled":  # a run stopped half-way proves nothing about the wheel
        recipe_ccs = list(recipe.cuda.compute_capabilities) if recipe is not None else None
        diagnoses = diagnose(run.data, host, expect=expect, python=python, kb=kb,
                             recipe_ccs=recipe_ccs)
        from ..fixes import resolve_diagnoses

        diagnoses = resolve_diagnoses(diagnoses, recipe=recipe)  # concrete values, or why not
    if run.status == "crashed":
        diagnoses.insert(0, probe_failure("crashed", {"how": run.signal, "stage": run.stage},
                                          kb=kb, evidence=last_lines(run)))
    elif run.status == "timeout":
        diagnoses.insert(0, probe_failure("timeout", {"timeout": f"{run.timeout_s:g}",
                                                      "stage": run.stage},
                                          kb=kb, evidence=last_lines(run)))
    host_gpus = None
    if host is not None:
        host_gpus = {"nvidia": [asdict(g) for g in host.nvidia.gpus],
                     "driver": host.nvidia.driver_version,
                     "cuda_driver_version": host.nvidia.cuda_driver_version,
                     "amd": [asdict(g) for g in host.amd.gpus], "wsl2": host.os.wsl2}
    facts = [] if run.status == "cancelled" else fact_checks(run.data, host=host, kb=kb,
                                                             expected=expected)
    return VerifyReport(python, expect, source, run, _checks(run, expect, facts), diagnoses,
                        host_gpus)
