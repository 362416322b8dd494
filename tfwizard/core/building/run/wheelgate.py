"""The gate every built wheel passes before a build reports success (both runners).

The wheel the build copied out is read (METADATA, WHEEL, TensorFlow's build_info.py) and
held against the plan (core/install/wheelcheck.py): the release asked for (or, for a ref or a
checkout, the version its source says), the Python tag and glibc floor, the backend, the
CUDA and cuDNN versions and the compute capabilities configure was given. The comparison
goes into the record (wheel-check.json), the log and the result; a fact that differs
fails the build, naming it. The wheel stays where it was copied (nothing is lost), but
the result hands out none, so nothing installs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from ...i18n import _
from ...install.wheelcheck import Found, WheelCheck, compare, expected_of, version_from_source
from ...install.wheelfacts import read_wheel_facts
from ...knowledge import load_knowledge
from ...safety import safe_relative
from ...tfsource.facts import VERSION_FILES, tf_version_of
from ..plan.plan import SRC, BuildPlan
from .events import Artifact, BuildEvent

ReadSource = Callable[[str], "bytes | None"]


def _source_version(read: ReadSource) -> str | None:
    """The TensorFlow version the build's source tree says it is (srcfacts reads TF's
    files), None when no file names one."""
    files = {name: data.decode("utf-8", "replace") for name in VERSION_FILES
             if (data := read(name))}
    return tf_version_of(files)[0]


def check_built_wheel(plan: BuildPlan, wheel: Path, read: ReadSource) -> WheelCheck:
    """The wheel held against the plan (blocking: reads the wheel, and when the plan's
    version is the source's own, the source through `read`, a function from a path under
    the source folder to its bytes or None)."""
    release = load_knowledge().release(plan.release)
    source = _source_version(read) if version_from_source(plan) else None
    expected = expected_of(plan, source_version=source,
                           glibc_floor=release.glibc_floor if release is not None else "")
    return compare(expected, Found.of_wheel(read_wheel_facts(wheel)), wheel=str(wheel))


class WheelGate:
    """The runners' part that checks the wheel they copied out (a mixin of BuildRunner)."""

    wheel_check: WheelCheck | None = None

    def _read_source(self, path: str) -> bytes | None:
        """A file of the build's source tree (a path under it), None when absent: from the
        checkout itself for a recipe with source_dir, else from the build's container."""
        runner: Any = self
        plan: BuildPlan = runner.plan
        if plan.source_kind == "dir" and plan.source_dir:
            try:
                return (Path(plan.source_dir) / safe_relative(path)).read_bytes()
            except OSError:
                return None
        return self._read_in_container(f"{SRC}/{path}")

    def _read_in_container(self, path: str) -> bytes | None:
        """A file in the last step's container (its volumes have the source)."""
        from .artifacts import read_archive_file

        runner: Any = self
        last = runner.stepper.last
        return read_archive_file(last.container, path) if last else None

    async def _wheel_events(self, wheels: list[Path]) -> AsyncIterator[BuildEvent]:
        """The check of the build's wheel (the last one copied out): its line in the log,
        wheel-check.json in the record; then, when it passed, the Artifact of each wheel
        (front ends offer an Artifact's wheel to install: never one that failed)."""
        if not wheels:
            return
        runner: Any = self
        checked = await runner.engine.call(_("checking the wheel against the recipe"),
                                           check_built_wheel, runner.plan, wheels[-1],
                                           self._read_source)
        self.wheel_check = checked
        checked.write(runner.record.path)
        yield runner.log.say(checked.summary())
        for wheel in wheels if checked.ok else []:
            yield Artifact("wheel", str(wheel))

    def wheel_mismatch(self) -> str:
        """What the build's wheel has that the recipe did not ask for ("" when nothing)."""
        return self.wheel_check.difference() if self.wheel_check is not None else ""
