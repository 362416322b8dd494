"""Quitting while the window is still starting (detection and the "running builds?" check
under way) exits 0 without a traceback (issue 19, item 10)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from .conftest import HOSTS

SCRIPT = textwrap.dedent("""
    import asyncio, sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from tfwizard.core.host import HostProfile
    from tfwizard.gui import app, attach
    from tfwizard.gui.jobs import Jobs

    host = HostProfile.load(sys.argv[1])

    async def slow_check(window, find=None):  # the Docker engine answers slowly
        await asyncio.sleep(5)

    def slow_detect():
        time.sleep(1)
        return host

    def quit_now():
        for widget in QApplication.topLevelWidgets():
            if widget.objectName() == "main-window" or widget.inherits("QMainWindow"):
                widget.close()

    qapp = QApplication(sys.argv[:1])
    attach.check_at_start = slow_check
    QTimer.singleShot(300, quit_now)  # Ctrl+Q a moment after start
    sys.exit(app.run_gui(["tfwizard-gui"], jobs=Jobs(detect=slow_detect),
                         remember=False))
""")


def test_quit_during_start_up_prints_no_traceback(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(HOSTS / "ada-8.9-driver550.json")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
