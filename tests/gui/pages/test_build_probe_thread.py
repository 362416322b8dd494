"""A remote build asks its image for its Bazel and digests (a short container) before the
runner exists; the Build page does that off the GUI thread, so the window keeps answering.

The probe is replaced by name with a slow one (no engine needed): the real factory
(jobs.default_build_job) runs with a recipe that names an executor."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import Qt, QTimer

from tfwizard.core.docker import imagefacts
from tfwizard.core.errors import TfWizardError
from tfwizard.gui.jobs import Jobs, default_build_job
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

PROBE_S = 1.5


def test_the_image_probe_runs_off_the_gui_thread(qtbot, make_window, monkeypatch):
    gui_thread = threading.get_ident()
    probed: list[int] = []

    def slow_probe(image, env, *, user=None):  # the real one starts a short container
        probed.append(threading.get_ident())
        time.sleep(PROBE_S)
        raise TfWizardError(f"probe of {image} failed on purpose")

    monkeypatch.setattr(imagefacts, "read_image_facts", slow_probe)
    window = make_window(jobs=Jobs(build=default_build_job))
    window.wizard.state.update({"remote.executor": "grpc://127.0.0.1:50051"})
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(50)
    started = time.monotonic()
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.phase_label.text() == "Could not start", timeout=10000)
    timer.stop()
    assert probed and probed[0] != gui_thread
    during = [t for t in ticks if started < t < started + PROBE_S]
    # a frozen loop ticks at most once after the probe; a free one ~30 times in 1.5 s
    assert len(during) >= 10, len(during)
    gaps = [b - a for a, b in zip(during, during[1:], strict=False)]
    assert max(gaps) < 0.5, max(gaps)
    assert "failed on purpose" in page.result_label.text()
    assert not page.running and page.start_button.isEnabled()


def test_cancel_while_the_image_is_probed_starts_no_build(qtbot, make_window, monkeypatch):
    made: list[object] = []

    class Job:
        def __init__(self, state):
            time.sleep(0.8)
            made.append(self)

        def cancel(self):  # pragma: no cover - the page never reaches it
            raise AssertionError("a job that never started is not cancelled")

        async def events(self):  # pragma: no cover - must not run
            raise AssertionError("the build started after Cancel")
            yield

    window = make_window(jobs=Jobs(build=Job))
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.running, timeout=2000)
    page.cancel()
    qtbot.waitUntil(lambda: not page.running, timeout=5000)
    assert made and page.phase_label.text() == "Cancelled"
    assert page.job is None
