"""Run a helper program (nvidia-smi, rocminfo, another Python) with a timeout, never raising.

Probes take a ``Runner`` so tests can hand them fake programs: either a callable that
returns canned output, or the real runner below with a PATH pointing at fake executables.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence

from ..i18n import _

#: ``run(argv, timeout) -> (returncode, stdout, stderr)``
Runner = Callable[[Sequence[str], float], tuple[int, str, str]]

#: return codes the runner invents, shell-style, for failures that are not the program's
RC_NOT_FOUND = 127
RC_CANNOT_RUN = 126
RC_TIMEOUT = 124


def subprocess_runner(env: Mapping[str, str] | None = None) -> Runner:
    """A Runner that finds ``argv[0]`` on ``env["PATH"]`` and runs it with ``env``."""
    environ = dict(os.environ if env is None else env)

    def run(argv: Sequence[str], timeout: float) -> tuple[int, str, str]:
        if not argv:
            return RC_CANNOT_RUN, "", _("empty command")
        program = shutil.which(argv[0], path=environ.get("PATH", os.defpath))
        if program is None:
            return RC_NOT_FOUND, "", _("{program}: not found on PATH").format(program=argv[0])
        try:
            done = subprocess.run(
                [program, *argv[1:]],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                env=environ,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return RC_TIMEOUT, "", _("{program}: no answer within {seconds:g} s").format(
                program=argv[0], seconds=timeout)
        except OSError as exc:
            return RC_CANNOT_RUN, "", f"{argv[0]}: {exc.strerror or exc}"
        return done.returncode, done.stdout, done.stderr

    return run


def safe_run(run: Runner, argv: Sequence[str], timeout: float) -> tuple[int, str, str]:
    """Call an injected runner, turning anything it raises into a failed result."""
    try:
        return run(argv, timeout)
    except Exception as exc:  # an injected runner is foreign code; detection must go on
        return RC_CANNOT_RUN, "", f"{argv[0] if argv else '?'}: {exc}"
