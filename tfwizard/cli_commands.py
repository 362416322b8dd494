"""Subcommands beyond detect/recipe: check, plan, build, diagnose, install, verify, bundle,
install-desktop-entry."""

from __future__ import annotations

import importlib
from typing import Any

#: modules that each define register(subparsers); imported when the parser is built
_COMMAND_MODULES = ("tfwizard.cli_check", "tfwizard.cli_build", "tfwizard.cli_install",
                    "tfwizard.cli_bundle", "tfwizard.cli_desktop", "tfwizard.cli_fetch",
                    "tfwizard.cli_clean")


def register(sub: Any) -> None:
    """Add the commands to the `tfwizard` parser's subparsers."""
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue  # not written yet in this checkout
        module.register(sub)
