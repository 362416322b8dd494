"""`tfwizard-gui`: the desktop wizard; without a display it prints help and the host."""

from __future__ import annotations

import os
import sys


def has_display(env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if env is None else env
    if env.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal", "vnc"):
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def run() -> None:
    """GUI entry point."""
    if not has_display():
        from tfwizard.cli import main

        print("tfwizard-gui: no display found (DISPLAY / WAYLAND_DISPLAY unset); "
              "here is the command-line tool instead.\n")
        main(["--help"])
        print()
        main(["detect"])
        sys.exit(0)
    from .main_window import run_gui

    sys.exit(run_gui())
