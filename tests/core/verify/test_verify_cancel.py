"""Cancelling a verification: the long-job protocol (events(), cancel(), result) over a real
probe process that hangs, from another thread, from asyncio, and by Ctrl-C on the CLI."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tfwizard.core.host import HostProfile, OsInfo
from tfwizard.core.verify.job import Verification, VerifyFinished, VerifyStarted, render_report

ROOT = Path(__file__).resolve().parents[3]


def hanging_python(tmp_path: Path) -> tuple[Path, Path]:
    """An interpreter that starts a grandchild, writes its pid, and sleeps (a hung import)."""
    pid_file = tmp_path / "grandchild.pid"
    path = tmp_path / "bin" / "python"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{sys.executable}\n"
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([{sys.executable!r}, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(300)\n", encoding="utf-8")
    path.chmod(0o755)
    return path, pid_file


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_for(path: Path, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def cpu_host() -> HostProfile:
    return HostProfile(os=OsInfo())


def test_cancel_from_another_thread_kills_the_probe_and_its_children(tmp_path):
    python, pid_file = hanging_python(tmp_path)
    job = Verification(python, expect="cpu", host=cpu_host(), timeout=300)
    report: list = []
    worker = threading.Thread(target=lambda: report.append(job.run()))
    worker.start()
    grandchild = wait_for(pid_file)
    assert alive(grandchild)
    started = time.monotonic()
    job.cancel()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert time.monotonic() - started < 2.0
    result = report[0]
    assert job.result is result
    assert result.status == "cancelled" and not result.ok
    assert result.probe.status == "cancelled"
    assert result.diagnoses == []  # a probe stopped half-way proves nothing about the wheel
    assert "RESULT: CANCELLED" in render_report(result)
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild), "the probe's own child outlived the cancel"


def test_events_end_with_a_cancelled_report(tmp_path):
    python, pid_file = hanging_python(tmp_path)
    job = Verification(python, expect="cpu", host=cpu_host(), timeout=300)

    async def follow() -> list:
        # a second thread cancels once the probe runs, as the GUI's Cancel button does
        canceller = asyncio.get_running_loop().run_in_executor(
            None, lambda: (wait_for(pid_file), job.cancel()))
        seen = [event async for event in job.events()]
        await canceller
        return seen

    started = time.monotonic()
    seen = asyncio.run(follow())
    assert time.monotonic() - started < 30
    assert [type(e) for e in seen] == [VerifyStarted, VerifyFinished]
    assert seen[-1].report is job.result and job.result.status == "cancelled"
    assert seen[-1].to_dict()["report"]["status"] == "cancelled"


def test_a_cancel_before_the_probe_starts_still_stops_it(tmp_path):
    python, _pid = hanging_python(tmp_path)
    job = Verification(python, expect="cpu", host=cpu_host(), timeout=300)
    job.cancel()
    started = time.monotonic()
    report = job.run()
    assert time.monotonic() - started < 2.0
    assert report.status == "cancelled"


def test_an_unknown_expectation_is_refused_before_anything_runs(tmp_path):
    from tfwizard.core.errors import UsageError

    with pytest.raises(UsageError):
        Verification(tmp_path / "python", expect="tpu")


def test_ctrl_c_cancels_tfwizard_verify(tmp_path):
    python, pid_file = hanging_python(tmp_path)
    profile = tmp_path / "host.json"
    profile.write_text(cpu_host().to_json(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TFWIZARD_LANG": "en"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfwizard", "verify", "--python", str(python), "--expect", "cpu",
         "--host", str(profile), "--quiet-log"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        grandchild = wait_for(pid_file)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, _err = proc.communicate(timeout=10)
        assert time.monotonic() - started < 2.0
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.decode()
    assert proc.returncode == 130, text  # ExitStatus.CANCELLED
    assert "RESULT: CANCELLED" in text
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)
