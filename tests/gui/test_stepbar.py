"""The step bar, the Help menu and Cancel (issue 19, item 2)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QWizard

from tfwizard.gui.pages import PageId
from tfwizard.gui.widgets.stepbar import AHEAD, CURRENT, DONE, SKIPPED

from .conftest import host

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_steps_follow_the_wizard_and_mark_skipped(qtbot, make_window):
    window = make_window(host=host("no-gpu-server"))  # a CPU build: no GPU step
    wizard = window.wizard
    bar = wizard.step_bar
    assert bar.count() == len(PageId) and bar.isVisibleTo(wizard)
    assert bar.states[0] == CURRENT and set(bar.states[1:]) == {AHEAD}
    assert wizard.state.recipe.backend.kind == "cpu"
    assert wizard.go_to(PageId.REVIEW) == PageId.REVIEW
    assert bar.states[PageId.REVIEW] == CURRENT
    assert bar.states[PageId.COMPUTE] == SKIPPED
    assert "(skipped)" in bar.item(PageId.COMPUTE).text()
    assert bar.states[PageId.SOURCE] == DONE
    assert bar.states[PageId.BUILD] == AHEAD
    wizard.back()
    assert bar.states[PageId.OPTIONS] == CURRENT and bar.states[PageId.REVIEW] == AHEAD


class _Viewer(QObject):
    """Stands in for the desktop's document viewer (none in CI): records what it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def show(self, url: QUrl) -> None:
        self.urls.append(url)


def test_help_menu_opens_the_user_guide(qtbot, make_window):
    window = make_window()
    viewer = _Viewer()
    QDesktopServices.setUrlHandler("file", viewer, "show")
    try:
        window.guide_action.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert len(viewer.urls) == 1
    assert viewer.urls[0].toLocalFile().endswith("docs/guide.md")
    assert window.guide_action.shortcut().toString() == "F1"


def test_cancel_closes_the_window(qtbot, make_window):
    window = make_window()
    cancel = window.wizard.button(QWizard.WizardButton.CancelButton)
    assert cancel.isVisible() and cancel.text() == "Cancel"
    cancel.click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
