"""The step bar, the Help menu and Cancel (issue 19, item 2)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget, QWizard

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
    assert bar.item(PageId.COMPUTE).toolTip() == "skipped"
    assert bar.horizontalScrollBar().maximum() == 0  # no row is wider than the bar
    assert bar.states[PageId.SOURCE] == DONE
    assert bar.states[PageId.BUILD] == AHEAD
    wizard.back()
    assert bar.states[PageId.OPTIONS] == CURRENT and bar.states[PageId.REVIEW] == AHEAD


def test_help_shows_the_guide_in_the_app_and_about(qtbot, make_window):
    """No desktop viewer is needed: the guide shipped with tfwizard opens in the app."""
    from PySide6.QtWidgets import QApplication, QMessageBox, QTextBrowser

    from tfwizard import __version__

    window = make_window()
    assert window.guide_action.shortcut().toString() == "F1"
    window.guide_action.trigger()
    viewer = window.findChild(QWidget, "guide-viewer")
    assert viewer is not None and viewer.isVisible()
    text = viewer.findChild(QTextBrowser, "guide-text").toPlainText()
    assert "The wizard, page by page" in text and "tfwizard check" in text
    about = next(a for a in window.menuBar().findChild(QWidget, "help-menu").actions()
                 if a.objectName() == "about")
    about.trigger()
    box = window.findChild(QMessageBox, "about-box")
    assert box is not None and __version__ in box.text() and "Build records" in box.text()
    box.close()
    viewer.close()
    QApplication.processEvents()


def test_cancel_closes_the_window(qtbot, make_window):
    window = make_window()
    cancel = window.wizard.button(QWizard.WizardButton.CancelButton)
    assert cancel.isVisible() and cancel.text() == "Cancel"
    cancel.click()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5000)
