"""Verify an installed TensorFlow: run probe_tf.py in the target interpreter and judge it.

The probe runs as a subprocess with a timeout, so an import that segfaults or hangs is a
finding in the report, never a crash of the wizard. The report joins what the wheel says
it was built for with what ran, the host profile and the known runtime messages.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import unicodedata
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..diagnosis.runtime import (
    Diagnosis,
    build_targets,
    diagnose,
    gpu_devices,
    op_error,
    probe_failure,
)
from ..diagnosis.text import diagnosis_block
from ..errors import UsageError
from ..host import HostProfile
from ..i18n import _
from ..install.wheelcheck import Expected
from ..jobs import Event
from ..knowledge import KnowledgeBase, load_knowledge
from ..wheelhouse.provenance import installed_line
from .facts import fact_checks

PROBE_SCRIPT = Path(__file__).with_name("probe_tf.py")
DEFAULT_TIMEOUT = 300.0
EXPECTATIONS = ("cpu", "cuda", "rocm")
#: variables that describe the interpreter running tfwizard, not the one being verified
_FOREIGN_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH")


@dataclass
class ProbeRun:
    """How the probe process went, and what it reported (possibly partial)."""

    #: ok | crashed | timeout | error (exited non-zero) | not_started | cancelled
    status: str
    python: str
    returncode: int | None = None
    signal: str | None = None
    elapsed_s: float = 0.0
    timeout_s: float = DEFAULT_TIMEOUT
    data: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""
    message: str = ""

    @property
    def stage(self) -> str:
        """The last stage the probe reached ("start" before it filed any)."""
        return str(self.data.get("stage", "start"))

    def to_dict(self) -> dict[str, Any]:
        """The probe run as JSON (the "probe" object of verify.json)."""
        return asdict(self)


def probe_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The probe's environment: the caller's, minus tfwizard's own Python settings."""
    result = {k: v for k, v in (os.environ if env is None else env).items()
              if k not in _FOREIGN_ENV}
    # INFO lines carry the best diagnostics ("Could not find cuda drivers" is INFO)
    result["TF_CPP_MIN_LOG_LEVEL"] = "0"
    return result


class ProbeProcess:
    """The probe as a child process that another thread may stop: `run()` blocks until it
    ends (finished, crashed, timed out or cancelled), `cancel()` kills it and whatever it
    started, from any thread, at once."""

    def __init__(self, python: str | os.PathLike[str], *, timeout: float = DEFAULT_TIMEOUT,
                 env: Mapping[str, str] | None = None, script: Path = PROBE_SCRIPT) -> None:
        self.python = os.fspath(python)
        self.timeout = timeout
        self.env = env
        self.script = script
        self.cancelled = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def cancel(self) -> None:
        """Stop the probe now (SIGKILL to its process group); run() then reports "cancelled"."""
        with self._lock:
            self.cancelled = True
            proc = self._proc
        if proc is not None and proc.poll() is None:
            _kill_group(proc)

    def run(self) -> ProbeRun:
        """Run the probe to its end; never raises for what the probe does."""
        python, timeout = self.python, self.timeout
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="tfwizard-probe-") as out:
            argv = [python, os.fspath(self.script), out]
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env=probe_env(self.env),
                                        cwd=out, start_new_session=True)
            except OSError as exc:
                return ProbeRun("not_started", python, timeout_s=timeout,
                                message=_("cannot run {python}: {error}").format(
                                    python=python, error=exc.strerror or exc))
            with self._lock:
                self._proc = proc
                cancelled = self.cancelled
            if cancelled:  # cancel() came before there was a process to kill
                _kill_group(proc)
            timed_out = False
            try:
                stdout, _err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
                stdout, _err = proc.communicate(timeout=30)
            except BaseException:  # Ctrl-C, a dying thread: never leave the probe behind
                _kill_group(proc)
                raise
            elapsed = time.monotonic() - started
            data = _collect(Path(out))
        text = stdout.decode("utf-8", "replace") if stdout else ""
        run = ProbeRun("ok", python, proc.returncode, elapsed_s=round(elapsed, 2),
                       timeout_s=timeout, data=data, stdout=text[-20000:])
        _judge_exit(run, timed_out=timed_out, cancelled=self.cancelled, text=text)
        return run


def run_probe(python: str | os.PathLike[str], *, timeout: float = DEFAULT_TIMEOUT,
              env: Mapping[str, str] | None = None, script: Path = PROBE_SCRIPT) -> ProbeRun:
    """Run the probe in `python`; never raises for what the probe does (crash, hang, garbage)."""
    return ProbeProcess(python, timeout=timeout, env=env, script=script).run()


def _collect(out: Path) -> dict[str, Any]:
    """What the probe filed in its folder, with the log lines it wrote after its last stage."""
    data = _read_result(out)
    if "log" not in data or not data.get("log"):
        lines = _read_log(out)
        if lines:  # the probe died before filing its log: keep what fd 2 got
            data.setdefault("log", {})
            data["log"] = {data.get("stage", "start"): lines}
    elif not data.get("complete"):
        # lines after the last filed stage (a crash mid-stage) still matter
        filed = sum(len(v) for v in data["log"].values())
        rest = _read_log(out)[filed:]
        if rest:
            data["log"].setdefault(str(data.get("stage", "?")), []).extend(rest)
    return data


def _judge_exit(run: ProbeRun, *, timed_out: bool, cancelled: bool, text: str) -> None:
    """Set the run's status and message from how the process ended."""
    code, data, python = run.returncode, run.data, run.python
    if cancelled:
        run.status = "cancelled"
        run.message = _("cancelled during '{stage}'").format(stage=run.stage)
    elif timed_out:
        run.status = "timeout"
        run.message = _("no result within {timeout:g} s (last stage: {stage})").format(
            timeout=run.timeout_s, stage=run.stage)
    elif code is not None and code < 0:
        run.status = "crashed"
        run.signal = _signal_name(-code)
        run.message = _("killed by {signal} during '{stage}'").format(signal=run.signal,
                                                                     stage=run.stage)
    elif code != 0 or not data:
        run.status = "error"
        if data:
            run.message = _("the probe exited with status {status} during '{stage}'").format(
                status=code, stage=run.stage)
        else:
            run.message = _("{python} did not run the probe (status {status}): {output}").format(
                python=python, status=code, output=text.strip()[-300:] or _("no output"))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the probe and anything it started (its own session), by process group id."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _read_result(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_log(folder: Path) -> list[str]:
    try:
        return (folder / "stderr.log").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


# -- the report ----------------------------------------------------------------------------------


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


def _wheel_kind(data: Mapping[str, Any]) -> str:
    info = data.get("build_info") or {}
    if data.get("built_with_rocm") or info.get("is_rocm_build"):
        return "rocm"
    if data.get("built_with_cuda") or info.get("is_cuda_build"):
        return "cuda"
    return "cpu"


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
        kind = _wheel_kind(data)
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
        expect, source = _wheel_kind(run.data), "wheel"
    diagnoses: list[Diagnosis] = []
    if run.status != "cancelled":  # a run stopped half-way proves nothing about the wheel
        recipe_ccs = list(recipe.cuda.compute_capabilities) if recipe is not None else None
        diagnoses = diagnose(run.data, host, expect=expect, python=python, kb=kb,
                             recipe_ccs=recipe_ccs)
        from ..fixes import resolve_diagnoses

        diagnoses = resolve_diagnoses(diagnoses, recipe=recipe)  # concrete values, or why not
    if run.status == "crashed":
        diagnoses.insert(0, probe_failure("crashed", {"how": run.signal, "stage": run.stage},
                                          kb=kb, evidence=_last_lines(run)))
    elif run.status == "timeout":
        diagnoses.insert(0, probe_failure("timeout", {"timeout": f"{run.timeout_s:g}",
                                                      "stage": run.stage},
                                          kb=kb, evidence=_last_lines(run)))
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


def _last_lines(run: ProbeRun, count: int = 8) -> list[str]:
    lines: list[str] = []
    for stage_lines in (run.data.get("log") or {}).values():
        lines.extend(stage_lines)
    return lines[-count:]


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
            kind=_wheel_kind(data), value=data.get("built_with_cuda"))))
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
        lines = _last_lines(report.probe, count=40)
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
