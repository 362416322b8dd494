""""Start build" after a success asks before building the same recipe again, and only
then (issue 19; UX review, Build page: "one click starts another multi-hour build
without asking")."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from .test_runpages import WAIT, build_window

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def confirm_box(qtbot) -> QMessageBox:
    found: list = []

    def shown() -> bool:
        found[:] = [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.objectName() == "rebuild-confirm"
                    and w.isVisible()]
        return bool(found)

    qtbot.waitUntil(shown, timeout=WAIT)
    return found[0]


def build_once(qtbot, page, made, count):
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running and len(made) == count, timeout=WAIT)


def test_same_recipe_after_success_asks_and_cancel_keeps_the_wheel(qtbot, make_window):
    window, made = build_window(make_window)
    page = window.wizard.build
    assert page.start_button.text() == "Start build"  # the first build: no question
    build_once(qtbot, page, made, 1)
    wheel = window.wizard.state.wheel
    assert page.start_button.text() == "Build again…"
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    box = confirm_box(qtbot)
    assert wheel in box.text() and "12 s" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(50)
    assert len(made) == 1 and not page.running  # nothing started
    assert window.wizard.state.wheel == wheel  # the result stays
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    box = confirm_box(qtbot)
    again = next(b for b in box.buttons() if b.text() == "Build again")
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        again.click()
    qtbot.waitUntil(lambda: len(made) == 2 and not page.running, timeout=WAIT)


def test_changed_recipe_or_failed_build_starts_without_asking(qtbot, make_window):
    window, made = build_window(make_window)
    page = window.wizard.build
    build_once(qtbot, page, made, 1)
    window.wizard.state.update({"build.jobs": 3})  # another recipe: building is the point
    assert page.start_button.text() == "Start build"
    build_once(qtbot, page, made, 2)
    assert page.start_button.text() == "Build again…"


def test_after_a_failure_no_question(qtbot, make_window):
    window, made = build_window(make_window, fail=True)
    page = window.wizard.build
    build_once(qtbot, page, made, 1)
    assert page.start_button.text() == "Start build"
    build_once(qtbot, page, made, 2)
