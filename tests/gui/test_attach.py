"""The startup hook that offers to re-attach to a running build (offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from tfwizard.gui import attach
from tfwizard.gui.jobs import Jobs
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


def _run(qtbot, coro):
    """Run a coroutine on the test's qasync loop until it ends; its result."""
    import asyncio

    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=5000)
    return task.result()


def test_no_running_build_asks_nothing(make_window, qtbot):
    window = make_window()
    assert _run(qtbot, attach.offer_attach(window, [])) is None


def test_ignore_leaves_the_wizard_alone(make_window, qtbot):
    window = make_window()
    factory = window.wizard.build.factory
    seen = _click_later("ignore")
    assert _run(qtbot, attach.offer_attach(window, ["20990101-000000-abcdef"])) is None
    assert seen and "20990101-000000-abcdef" in seen[0]
    assert window.wizard.build.factory is factory


def test_attach_opens_the_build_page_following_that_build(make_window, monkeypatch, qtbot):
    from tfwizard.core.building.run import runner

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
    chosen = _run(qtbot, attach.offer_attach(window, ["20990101-000000-abcdef",
                                                      "20980101-000000-000000"]))
    assert seen and chosen == "20990101-000000-abcdef"
    assert window.wizard.currentId() == PageId.BUILD
    # the page makes the job off the GUI thread: let that followed build end before close
    qtbot.waitUntil(lambda: not window.wizard.build.running, timeout=5000)
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


def test_attach_question_while_detection_finishes(qtbot, make_window):
    """The review's Appendix A.1: the question was asked with exec() inside the startup
    coroutine; when detection finished meanwhile, qasync raised "Cannot enter into task"
    and the Welcome page stayed "detecting" forever. The qloop fixture fails on what the
    loop logs."""
    import asyncio
    import time

    from .conftest import host

    laptop = host("laptop-rtx3060-550")
    window = make_window(host=host("ada-8.9-driver550"),
                         jobs=Jobs(detect=lambda: (time.sleep(0.3), laptop)[1]))
    seen: list[str] = []

    def click_ignore():  # after detection has finished, as a user would answer
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QMessageBox) and w.objectName() == "attach-box" and w.isVisible():
                seen.append(w.text())
                next(b for b in w.buttons() if b.objectName() == "ignore").click()
                return
        QTimer.singleShot(20, click_ignore)

    QTimer.singleShot(1500, click_ignore)

    async def main():
        window.wizard.welcome.refresh()  # as gui/app.py starts it
        return await attach.check_at_start(window, find=lambda: ["20990101-000000-abcdef"])

    task = asyncio.ensure_future(main())
    qtbot.waitUntil(task.done, timeout=10000)
    assert task.result() is None and seen
    qtbot.waitUntil(lambda: not window.wizard.welcome.detecting, timeout=5000)
    assert window.wizard.state.build_host is laptop
