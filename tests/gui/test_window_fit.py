"""The window fits the screen: on a real X server (Xvfb) of 1024x700 the first window lies
inside the screen, with Next and Cancel on it, on every page; the size and maximised
state the user leaves are kept for the next start (QSettings)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from tfwizard.core import qtlibs

from .conftest import HOSTS

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent("""
    import json, sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QWizard
    from tfwizard.core.host import HostProfile
    from tfwizard.gui.main_window import MainWindow
    from tfwizard.gui.pages import PageId

    app = QApplication(sys.argv[:1])
    window = MainWindow(host=HostProfile.load(sys.argv[1]), ask_save=lambda: "discard")
    window.show_first()
    report = {"pages": {}}

    def rect(r):
        return [r.x(), r.y(), r.width(), r.height()]

    def button(which):
        b = window.wizard.button(which)
        top_left = b.mapToGlobal(b.rect().topLeft())
        return [top_left.x(), top_left.y(), b.width(), b.height()] if b.isVisible() else None

    def measure():
        screen = window.screen()
        report["screen"] = rect(screen.geometry())
        report["available"] = rect(screen.availableGeometry())
        report["frame"] = rect(window.frameGeometry())
        for page_id in PageId:
            window.wizard.setStartId(int(page_id))
            window.wizard.restart()
            for _ in range(5):
                app.processEvents()
            report["pages"][page_id.name] = {
                "frame": rect(window.frameGeometry()),
                "next": button(QWizard.WizardButton.NextButton)
                        or button(QWizard.WizardButton.FinishButton),
                "cancel": button(QWizard.WizardButton.CancelButton)}
        print(json.dumps(report), flush=True)
        window.close()
        app.quit()

    QTimer.singleShot(1500, measure)  # the frame is known once the window is mapped
    app.exec()
""")


def free_display() -> int:
    for number in range(180, 260):
        if not Path(f"/tmp/.X11-unix/X{number}").exists() and \
                not Path(f"/tmp/.X{number}-lock").exists():
            return number
    pytest.skip("no free X display number")


@pytest.fixture(scope="module")
def xvfb_1024x700():
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (tests/run.sh installs it)")
    if not qtlibs.check_platform("xcb").ok:
        pytest.skip("Qt's xcb plugin cannot load here: " + qtlibs.report([
            qtlibs.check_platform("xcb")]))
    number = free_display()
    proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1024x700x24",
                             "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if Path(f"/tmp/.X11-unix/X{number}").exists():
                break
            time.sleep(0.05)
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def inside(inner: list[int], outer: list[int]) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return x >= ox and y >= oy and x + w <= ox + ow and y + h <= oy + oh


def test_first_window_fits_a_1024x700_screen(xvfb_1024x700, tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": xvfb_1024x700,
           "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(HOSTS / "ada-8.9-driver550.json")],
                          env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["screen"] == [0, 0, 1024, 700]
    assert inside(report["frame"], report["available"]), report
    for name, page in report["pages"].items():
        assert inside(page["frame"], report["available"]), (name, page)
        for which in ("next", "cancel"):
            assert page[which] is not None, (name, which)
            assert inside(page[which], page["frame"]), (name, which, page)


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """The app's QSettings in a file of the test's own."""
    from tfwizard.gui import i18n

    path = str(tmp_path / "tfwizard.ini")
    monkeypatch.setattr(i18n, "settings", lambda: QSettings(path, QSettings.Format.IniFormat))
    return path


def test_size_and_maximised_state_are_kept(qtbot, settings):
    from tfwizard.core.host import HostProfile
    from tfwizard.gui.main_window import MainWindow

    host = HostProfile.load(HOSTS / "ada-8.9-driver550.json")
    first = MainWindow(host=host, remember=True)
    qtbot.addWidget(first)
    available = first.screen().availableGeometry()
    assert first.width() <= available.width() and first.height() <= available.height()
    assert not first.maximised
    first.show()
    first.resize(700, 520)
    first.close()
    second = MainWindow(host=host, remember=True)
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (700, 520)
    second.show_first()
    second.showMaximized()
    qtbot.waitUntil(second.isMaximized, timeout=5000)
    second.close()
    third = MainWindow(host=host, remember=True)
    qtbot.addWidget(third)
    assert third.maximised
    third.show_first()
    qtbot.waitUntil(third.isMaximized, timeout=5000)
    third.close()
