"""core/install/reinstall.py: whether a rebuilt wheel's dependencies are already in an interpreter
(the test's own, a real one: packaging and pytest are installed there, the rest is not)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

from tfwizard.core.install.reinstall import deps_present, wheel_requirements


def _wheel(tmp_path: Path, *requires: str) -> Path:
    path = tmp_path / "tensorflow_cpu-2.21.0-cp311-cp311-linux_x86_64.whl"
    meta = "Metadata-Version: 2.1\nName: tensorflow-cpu\nVersion: 2.21.0\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("tensorflow_cpu-2.21.0.dist-info/METADATA", meta)
    return path


def test_met_requirements_and_markers_for_this_interpreter(tmp_path):
    wheel = _wheel(tmp_path, "packaging>=20", "Pytest", 'nothing-here-xyz; python_version < "3"',
                   'nvidia-nothing-xyz; extra == "and-cuda"')
    assert wheel_requirements(wheel)[0] == "packaging>=20"
    assert deps_present(wheel, sys.executable)
    # the extra's requirement counts once the recipe asks for the extra
    assert not deps_present(wheel, sys.executable, ["and-cuda"])


def test_missing_or_too_old_or_unreadable_means_a_full_install(tmp_path):
    assert not deps_present(_wheel(tmp_path, "nothing-here-xyz"), sys.executable)
    assert not deps_present(_wheel(tmp_path, "packaging>=9999"), sys.executable)
    assert not deps_present(_wheel(tmp_path, "packaging"), tmp_path / "no-such-python")
    broken = tmp_path / "broken.whl"
    broken.write_bytes(b"not a zip")
    assert not deps_present(broken, sys.executable)
