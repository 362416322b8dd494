"""Subcommands beyond detect/recipe: check, plan, build, diagnose, install, verify."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add the commands to the `tfwizard` parser's subparsers."""
