"""The Qt binding itself: what the wizard relies on and one binding release broke."""

from __future__ import annotations

import sys

import pytest


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")
def test_void_calls_keep_the_reference_to_none(qapp):
    """PySide6 6.12.0 lost a reference to None on every call of a void method; before
    Python 3.12 the GUI then aborts ("deallocating None") after a few thousand calls.
    pyproject.toml keeps that release out."""
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    before = sys.getrefcount(None)
    for _ in range(1000):
        label.setText("x")
        label.setWordWrap(True)
    assert sys.getrefcount(None) - before > -100


def test_a_closed_window_is_destroyed_after_its_test(qloop):
    """The suite's teardown (conftest.run_deferred_deletes) destroys a closed window: a
    window that lived on kept its timers and watchers running into later tests, and every
    GUI test left one behind."""
    import gc
    import weakref

    import shiboken6

    from tests.gui.conftest import host, run_deferred_deletes
    from tfwizard.gui.main_window import MainWindow

    window = MainWindow(host=host("ada-8.9-driver550"), ask_save=lambda: "discard")
    page = weakref.ref(window.wizard.welcome)
    window.close()
    window.deleteLater()
    assert shiboken6.isValid(window)
    run_deferred_deletes()
    assert not shiboken6.isValid(window)
    del window
    gc.collect()
    assert page() is None  # the Python side went with it: nothing holds the wizard's pages
