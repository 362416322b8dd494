"""Which interpreter Install will use, and whether the wheel's Python matches it: said
on the Source page before a multi-hour build, not by pip after it.

Install puts the wheel into `install.venv` when that venv exists; otherwise it creates the
venv with `install.python`, else with tfwizard's own base interpreter (core/install/job.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..knowledge import KnowledgeBase, recipe_python
from ..recipe import Recipe
from .job import InstallTarget, base_python, target_env, venv_python

#: how Install reaches its interpreter
EXISTING_VENV = "venv"  # the named venv exists: its python
CHOSEN = "chosen"  # install.python creates the venv (or receives the wheel)
DEFAULT = "default"  # tfwizard's own base interpreter creates the venv

VERSION_TIMEOUT = 10.0  # s
_VERSION_SCRIPT = "import sys; print('%d.%d' % sys.version_info[:2])"


@dataclass(frozen=True)
class PythonAgreement:
    """The wheel's Python and the interpreter Install will use (its version when known)."""

    wheel: str  # "3.11"
    interpreter: Path
    how: str  # EXISTING_VENV, CHOSEN or DEFAULT
    version: str | None  # "3.12"; None when the interpreter could not be asked

    @property
    def agrees(self) -> bool:
        """True unless the interpreter is known to run another Python than the wheel's."""
        return self.version is None or self.version == self.wheel


def install_interpreter(recipe: Recipe) -> tuple[Path, str]:
    """The interpreter Install will use for `recipe`, and how it was chosen."""
    venv = recipe.resolve_path("install.venv")
    if venv is not None and venv_python(venv).exists():
        return venv_python(venv), EXISTING_VENV
    python = recipe.resolve_path("install.python")
    if python is not None:
        return python, CHOSEN
    return base_python(InstallTarget(Path())), DEFAULT


def interpreter_version(python: Path) -> str | None:
    """`python`'s major.minor: tfwizard's own without a process, others asked once (cached
    while the file is unchanged); None when it cannot be run."""
    own = {getattr(sys, "_base_executable", ""), sys.executable}
    if str(python) in own:
        return f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        stamp = os.stat(python).st_mtime_ns if python.is_absolute() else 0
    except OSError:
        return None
    return _asked_version(str(python), stamp)


@lru_cache(maxsize=32)
def _asked_version(python: str, _stamp: int) -> str | None:
    try:
        done = subprocess.run([python, "-c", _VERSION_SCRIPT], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT, env=target_env(), check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if done.returncode == 0 and lines else None


def python_agreement(recipe: Recipe, kb: KnowledgeBase) -> PythonAgreement | None:
    """The wheel's Python against Install's interpreter; None when the release is unknown."""
    release = kb.release(recipe.tensorflow.version or "master")
    if release is None:
        return None
    python, how = install_interpreter(recipe)
    return PythonAgreement(recipe_python(recipe, release), python, how,
                           interpreter_version(python))
