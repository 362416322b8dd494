"""The Build page says the ETA and the duration once each (the real fixture build's
screenshot showed "ETA: …" beside the phase and again under the chart, and after the end
the duration beside the title and "Took …" under the chart)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWizard

from .test_runpages import WAIT, build_window

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def _shown(page) -> list[str]:
    return [label.text() for label in page.findChildren(QLabel)
            if label.isVisibleTo(page) and label.text()]


def test_eta_once_while_running(qtbot, make_window):
    window, made = build_window(make_window, wait_for_cancel=True)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    try:
        qtbot.waitUntil(lambda: page.progress.value() == 5, timeout=WAIT)
        texts = _shown(page)
        assert sum("2 min 05 s" in t for t in texts) == 1, texts
        assert any(t.startswith("Elapsed: ") for t in texts), texts
        # and no Back while it runs (UX review, Build: "Back is enabled during a build")
        assert not window.wizard.button(QWizard.WizardButton.BackButton).isEnabled()
    finally:
        qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not page.running, timeout=WAIT)
    assert window.wizard.button(QWizard.WizardButton.BackButton).isEnabled()


def test_duration_once_after_the_end(qtbot, make_window):
    window, made = build_window(make_window)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None and not page.running, timeout=WAIT)
    texts = _shown(page)
    assert sum("12 s" in t for t in texts) == 1, texts
    assert "Took 12 s" in texts, texts
    wheel = window.wizard.state.wheel
    assert sum(wheel in t for t in texts) == 1, texts  # "Wheel: …" with Open folder
    assert "Record: /tmp/fake-record" in texts, texts


def test_the_chart_caption_is_the_last_point():
    from tfwizard.gui.widgets.rate_chart import ActionsChart

    chart = ActionsChart()
    assert chart.caption() == ""
    chart.add(12.0, 4, 30)
    chart.add(230.0, 30, 30)
    assert chart.caption() == "30 / 30 actions after 3 min 50 s"
