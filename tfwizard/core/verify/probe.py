"""The probe: probe_tf.py run in the target interpreter as a subprocess with a timeout,
so an import that segfaults or hangs is a result (ProbeRun), never a crash of the wizard."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..i18n import _

PROBE_SCRIPT = Path(__file__).with_name("probe_tf.py")
DEFAULT_TIMEOUT = 300.0
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


def last_lines(run: ProbeRun, count: int = 8) -> list[str]:
    """The last `count` lines the probe logged, over its stages."""
    lines: list[str] = []
    for stage_lines in (run.data.get("log") or {}).values():
        lines.extend(stage_lines)
    return lines[-count:]
