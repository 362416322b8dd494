"""GUI test fixtures: offscreen Qt, a qasync loop per test, host profiles from tests/data."""

from __future__ import annotations

import asyncio
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

HOSTS = Path(__file__).resolve().parent.parent / "data" / "hosts"


@pytest.fixture
def qloop(qapp):
    """A qasync loop marked running, so @asyncSlot handlers run while qtbot waits.

    Anything the loop logs (an exception in a callback or a task nobody awaited, such as
    qasync's "Cannot enter into task" when a coroutine runs a nested event loop) fails the
    test at teardown, as qasync's own tests do. The running-loop mark is removed
    afterwards: other tests call asyncio.run().
    """
    import qasync

    loop = qasync.QEventLoop(qapp, already_running=True)
    logged: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: logged.append(context))
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        asyncio.events._set_running_loop(None)
        # loop.stop() would call QApplication.exit(), which ends the next test's waits;
        # clear qasync's running flag instead so close() frees the executor and timers
        loop._QEventLoop__is_running = False
        loop.close()
        asyncio.set_event_loop(None)
    if logged:
        pytest.fail("the event loop logged: " + "; ".join(
            f"{c.get('message', '')} {c.get('exception')!r}" for c in logged))


def host(name: str):
    from tfwizard.core.host import HostProfile

    return HostProfile.load(HOSTS / f"{name}.json")


@pytest.fixture
def ada_host():
    return host("ada-8.9-driver550")


@pytest.fixture
def make_window(qtbot, qloop):
    """MainWindow factory: hosts injected, never real detection, shown offscreen."""
    from tfwizard.gui.main_window import MainWindow

    windows = []  # qtbot keeps weak references only; the test holds the wizard

    def make(**kwargs):
        kwargs.setdefault("host", host("ada-8.9-driver550"))
        # closing drops unsaved changes without the question (its own test asks it)
        kwargs.setdefault("ask_save", lambda: "discard")
        window = MainWindow(**kwargs)
        windows.append(window)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window, timeout=5000)
        return window

    yield make
    for window in windows:
        window.close()
        window.deleteLater()  # destroyed before the test's event loop closes
    run_deferred_deletes()


def run_deferred_deletes() -> None:
    """Destroy the widgets whose deleteLater() is pending, now. pytest-qt closes a test's
    widgets and calls deleteLater() in its teardown, but no event loop ran the deletion
    afterwards: every GUI test's window lived on, with its timers and file watchers, into
    the tests after it (a closed window is only hidden; the lambdas and bound methods its
    signals hold keep it, a cycle through C++ that Python's collector cannot see)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture(autouse=True)
def _no_widget_outlives_its_test():
    """After pytest-qt has closed a test's widgets and asked for their deletion."""
    yield
    run_deferred_deletes()


def open_file_dialog(qtbot, timeout: int = 5000):
    """The file dialog a page opened and awaits (window-modal, never exec()'d)."""
    from PySide6.QtWidgets import QApplication, QFileDialog

    found: list = []

    def visible() -> bool:
        found[:] = [w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QFileDialog) and w.isVisible()]
        return bool(found)

    qtbot.waitUntil(visible, timeout=timeout)
    return found[0]


def type_file_name(dialog, path) -> None:
    """Type a file name into the dialog, as a user would, and accept it."""
    from PySide6.QtWidgets import QLineEdit

    dialog.findChild(QLineEdit, "fileNameEdit").setText(str(path))
    dialog.accept()
