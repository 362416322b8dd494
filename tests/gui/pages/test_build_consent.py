"""Start asks before a build sends an environment variable the user has not allowed
(core/consent.py): Cancel starts nothing, "Always allow" keeps the pair in the user's
consent file, "Allow until the wizard closes" only in this process."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from tfwizard.core import consent

from .test_runpages import WAIT, build_window

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def consent_box(qtbot) -> QMessageBox:
    found: list = []

    def shown() -> bool:
        found[:] = [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.objectName() == "secret-consent"
                    and w.isVisible()]
        return bool(found)

    qtbot.waitUntil(shown, timeout=WAIT)
    return found[0]


def wizard_at(make_window, page_id):
    """The page `page_id` of a new window whose recipe sends ${TFWT_GUI_KEY} to a cache."""
    window = make_window()
    window.wizard.state.update({"remote.cache": "grpcs://cache.example:443",
                                "remote.headers": ["x-api-key=${TFWT_GUI_KEY}"]})
    window.wizard.setStartId(int(page_id))
    window.wizard.restart()
    return window.wizard.page(int(page_id))


def button(box: QMessageBox, text: str):
    return next(b for b in box.buttons() if b.text() == text)


def test_start_asks_and_cancel_starts_nothing_always_allow_keeps_it(qtbot, make_window,
                                                                    monkeypatch, tmp_path):
    monkeypatch.setenv(consent.CONFIG_DIR_ENV, str(tmp_path / "config"))
    monkeypatch.setenv("TFWT_GUI_KEY", "gui-secret-value")
    monkeypatch.delenv(consent.CONSENT_ENV, raising=False)
    window, made = build_window(make_window)
    window.wizard.state.update({"remote.cache": "grpcs://cache.example:443",
                                "remote.headers": ["x-api-key=${TFWT_GUI_KEY}"]})
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    box = consent_box(qtbot)
    assert "${TFWT_GUI_KEY} (remote.headers) is sent to cache.example" in box.text()
    assert "gui-secret-value" not in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(50)
    assert made == [] and not page.running
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    box = consent_box(qtbot)
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        button(box, "Always allow").click()
    assert len(made) == 1
    assert consent.stored() == [("TFWT_GUI_KEY", "cache.example")]
    assert consent.CONSENT_ENV not in os.environ


def test_allow_until_the_wizard_closes_is_not_written(qtbot, make_window, monkeypatch,
                                                      tmp_path):
    monkeypatch.setenv(consent.CONFIG_DIR_ENV, str(tmp_path / "config"))
    monkeypatch.setenv("TFWT_GUI_KEY", "gui-secret-value")
    monkeypatch.delenv(consent.CONSENT_ENV, raising=False)
    window, made = build_window(make_window)
    window.wizard.state.update({"remote.cache": "grpcs://cache.example:443",
                                "remote.headers": ["x-api-key=${TFWT_GUI_KEY}"]})
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    box = consent_box(qtbot)
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        button(box, "Allow until the wizard closes").click()
    assert len(made) == 1 and consent.stored() == []
    assert os.environ[consent.CONSENT_ENV] == "TFWT_GUI_KEY@cache.example"


def test_review_lists_the_variable_and_its_host(make_window):
    from tfwizard.gui.pages import PageId

    page = wizard_at(make_window, PageId.REVIEW)
    rows = [r.finding for r in page.findings.rows if r.finding.code == "SECRET_REFERENCE"]
    assert len(rows) == 1 and "cache.example" in rows[0].message
    assert "${TFWT_GUI_KEY}" in rows[0].message
