"""Every test module under tests/ is collected by the plain test command.

pytest's `norecursedirs` matches directory basenames at any depth: a pattern "build"
(meant for setuptools' top-level build/) once left all of tests/core/build, 31 modules and
520 tests, out of every full run without a word. This test asks pytest itself what a
plain run collects and compares it with the test modules on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: folders under tests/ that hold inputs, not test modules
NOT_TESTS = ("fixtures", "data", "images")


def _on_disk() -> set[str]:
    tests = ROOT / "tests"
    return {p.relative_to(ROOT).as_posix() for p in tests.rglob("test_*.py")
            if p.relative_to(tests).parts[0] not in NOT_TESTS
            and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)}


def _collected() -> set[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return {line.split("::", 1)[0] for line in out.stdout.splitlines() if "::" in line}


def test_every_test_module_on_disk_is_collected():
    on_disk, collected = _on_disk(), _collected()
    assert "tests/core/building/test_plan.py" in on_disk  # the folder that was left out
    missing = sorted(on_disk - collected)
    assert not missing, f"test modules a plain `pytest` run does not collect: {missing}"
