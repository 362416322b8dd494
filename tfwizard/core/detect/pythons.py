"""Python interpreters a wheel could be built for: this one and any the user named."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Iterable

from ..host import PythonInterpreter
from .process import Runner, safe_run

PYTHON_TIMEOUT = 10.0
_PROBE = (
    "import sys,json;print(json.dumps({'version':'%d.%d.%d'%tuple(sys.version_info[:3]),"
    "'venv':sys.prefix!=getattr(sys,'base_prefix',sys.prefix),'executable':sys.executable}))"
)


def current_python() -> PythonInterpreter:
    """The interpreter running tfwizard, as a PythonInterpreter."""
    return PythonInterpreter(
        path=sys.executable,
        version=platform.python_version(),
        is_venv=sys.prefix != sys.base_prefix,
        is_current=True,
    )


def probe_pythons(
    *, extra: Iterable[str | os.PathLike[str]], run: Runner
) -> list[PythonInterpreter]:
    """This interpreter, then each of ``extra`` that runs; broken or missing ones are skipped."""
    found = [current_python()]
    seen = {os.path.abspath(found[0].path)}
    for candidate in extra:
        interpreter = _ask(os.fspath(candidate), run)
        if interpreter is None or os.path.abspath(interpreter.path) in seen:
            continue
        seen.add(os.path.abspath(interpreter.path))
        found.append(interpreter)
    return found


def _ask(path: str, run: Runner) -> PythonInterpreter | None:
    rc, out, _err = safe_run(run, [path, "-c", _PROBE], PYTHON_TIMEOUT)
    if rc != 0:
        return None
    try:
        data = json.loads(out.strip().splitlines()[-1])
        version, venv, executable = data["version"], data["venv"], data["executable"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(version, str) or not isinstance(venv, bool):
        return None
    # the interpreter's own sys.executable is absolute; keep what the user typed otherwise
    path = executable if isinstance(executable, str) and executable else path
    return PythonInterpreter(path=path, version=version, is_venv=venv)
