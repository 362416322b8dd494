"""The wording lists written from the tools' message formats: the later corpus rounds'
(`roundN_wordings`, `round10_runtime_wordings`) and the source-mined ones (`sourced_*`),
found by their names, so a new round's module is run by the wording tests without an edit
there. A module with `BUILD` also has `NOT_BUILD` and `BUILD_NEAR_MISSES`."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

_NAMES = sorted(info.name for info in pkgutil.iter_modules([str(Path(__file__).parent)]))
MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"{__package__}.{name}") for name in _NAMES
    if name.startswith(("round", "sourced_")))
#: the modules with build lines (BUILD, NOT_BUILD, BUILD_NEAR_MISSES)
BUILD_LISTS = tuple(m for m in MODULES if hasattr(m, "BUILD"))
#: the modules with a program's output (RUNTIME: (lines, the id diagnosed first))
RUNTIME_LISTS = tuple(m for m in MODULES if hasattr(m, "RUNTIME"))
