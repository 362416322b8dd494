"""The startup hook that offers to re-attach to a running build (offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from tfwizard.gui import attach
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def _click_later(name: str) -> list[str]:
    seen: list[str] = []

    def click():
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QMessageBox) and w.objectName() == "attach-box" and w.isVisible():
                seen.append(w.text())
                next(b for b in w.buttons() if b.objectName() == name).click()
                return
        QTimer.singleShot(20, click)

    QTimer.singleShot(0, click)
    return seen


def test_no_running_build_asks_nothing(make_window):
    window = make_window()
    assert attach.offer_attach(window, []) is None


def test_ignore_leaves_the_wizard_alone(make_window):
    window = make_window()
    factory = window.wizard.build.factory
    seen = _click_later("ignore")
    assert attach.offer_attach(window, ["20990101-000000-abcdef"]) is None
    assert seen and "20990101-000000-abcdef" in seen[0]
    assert window.wizard.build.factory is factory


def test_attach_opens_the_build_page_following_that_build(make_window, monkeypatch):
    from tfwizard.core import runner

    calls = []

    class FakeJob:
        async def events(self):
            return
            yield

        def cancel(self):
            pass

    monkeypatch.setattr(runner.BuildRunner, "attach",
                        classmethod(lambda cls, build_id=None, **kw: calls.append(build_id)
                                    or FakeJob()))
    window = make_window()
    seen = _click_later("attach")
    chosen = attach.offer_attach(window, ["20990101-000000-abcdef", "20980101-000000-000000"])
    assert seen and chosen == "20990101-000000-abcdef"
    assert window.wizard.currentId() == PageId.BUILD
    window.wizard.build.factory(window.wizard.state)
    assert calls[-1] == "20990101-000000-abcdef"


def test_check_at_start_runs_the_finder_off_the_loop_then_asks(make_window, qtbot):
    import asyncio
    import threading

    window = make_window()
    where = []

    def find():
        where.append(threading.current_thread() is threading.main_thread())
        return ["20990101-000000-abcdef"]

    seen = _click_later("ignore")
    task = asyncio.ensure_future(attach.check_at_start(window, find=find))
    qtbot.waitUntil(task.done, timeout=5000)
    assert task.result() is None and where == [False] and seen
