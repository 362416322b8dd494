"""Whether a rebuilt wheel can be reinstalled alone (the edit-rebuild loop): every requirement
the wheel declares, with the recipe's extras, is already met in the target interpreter.

    if deps_present(wheel, python, extras=("and-cuda",)):
        install_wheel(wheel, target, wheel_only=True)    # seconds, no resolution

The markers are evaluated for the target interpreter (its own python_version, platform),
the versions read from its installed distributions; anything unreadable answers False
(the full install then resolves as before).
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from collections.abc import Sequence
from email.parser import Parser
from pathlib import Path
from typing import Any

#: run by the target interpreter: its marker environment and installed distributions
_PROBE = """
import importlib.metadata as m, json, os, platform, sys
env = {"implementation_name": sys.implementation.name,
       "implementation_version": platform.python_version(),
       "os_name": os.name, "platform_machine": platform.machine(),
       "platform_release": platform.release(), "platform_system": platform.system(),
       "platform_version": platform.version(),
       "python_full_version": platform.python_version(),
       "platform_python_implementation": platform.python_implementation(),
       "python_version": ".".join(platform.python_version_tuple()[:2]),
       "sys_platform": sys.platform}
dists = {}
for d in m.distributions():
    name = d.metadata["Name"]
    if name:
        dists[name] = d.version
print(json.dumps({"env": env, "dists": dists}))
"""


def wheel_requirements(wheel: Path) -> list[str]:
    """The Requires-Dist lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA")
                    and n.count("/") == 1)
        meta = Parser().parsestr(zf.read(name).decode("utf-8", "replace"))
    return list(meta.get_all("Requires-Dist") or [])


def deps_present(wheel: Path, python: Path | str, extras: Sequence[str] = (),
                 timeout: float = 60) -> bool:
    """True when every requirement of `wheel` (with `extras`) is met in `python`."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        reqs = wheel_requirements(wheel)
        probe = subprocess.run([str(python), "-c", _PROBE], capture_output=True, text=True,
                               timeout=timeout, check=True)
        found = json.loads(probe.stdout)
    except (OSError, ValueError, KeyError, StopIteration, zipfile.BadZipFile,
            subprocess.SubprocessError):
        return False
    have = {canonicalize_name(k): v for k, v in found["dists"].items()}
    for line in reqs:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            return False
        if req.marker is not None and not any(
                req.marker.evaluate({**found["env"], "extra": extra})
                for extra in ["", *extras]):
            continue
        version = have.get(canonicalize_name(req.name))
        if version is None or (req.specifier and not req.specifier.contains(
                version, prereleases=True)):
            return False
    return True


#: run by the target interpreter: `Name==version` of each installed distribution
_LIST = """
import importlib.metadata as m
print("\\n".join(sorted({f"{d.metadata['Name']}=={d.version}" for d in m.distributions()
                         if d.metadata['Name']})))
"""


def dist_list(python: Path | str, env: Any = None, timeout: float = 60) -> list[str]:
    """`Name==version` of every distribution in `python`, sorted: what `pip freeze --all`
    says for a venv without editable or URL installs, in a tenth of its time (no pip
    start-up). The wheel-only reinstall compares it before and after pip; raises
    InstallFailed when the interpreter cannot run it."""
    from ..errors import InstallFailed
    from ..i18n import _

    try:
        done = subprocess.run([str(python), "-I", "-c", _LIST], capture_output=True, text=True,
                              timeout=timeout, check=True, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InstallFailed(_("{python} could not list its packages: {error}").format(
            python=python, error=exc)) from None
    return sorted(line for line in done.stdout.splitlines() if line.strip())
