"""The Install page's status: a failure in the error colour, and no stale progress text
from the last run when a new one starts (UX review, Install)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt

from tfwizard.core.install.job import InstallFinished, InstallProgress, InstallResult
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WHEEL = "/w/tensorflow-2.21.0-cp311-cp311-linux_x86_64.whl"


def test_a_failed_install_is_red_and_the_next_run_starts_clean(qtbot, make_window):
    gate = {"second": None}

    class FakeInstall:
        def __init__(self, state, wheel):
            self.wheel, self.result = wheel, None

        async def events(self):
            if gate["second"] is not None:  # the second run: hold before any progress
                await gate["second"].wait()
            yield InstallProgress("resolve", collected=1, downloaded=0)
            self.result = InstallResult("failed", "/v/bin/python", self.wheel, self.wheel,
                                        exit_code=1, message="pip exited with status 1.")
            yield InstallFinished(self.result)

        def cancel(self):
            pass

    window = make_window(jobs=Jobs(install=FakeInstall))
    wizard = window.wizard
    wizard.state.wheel = WHEEL
    wizard.setStartId(int(PageId.INSTALL))
    wizard.restart()
    page = wizard.install
    try:
        qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.result is not None and not page.running, timeout=5000)
        assert page.status.text() == "pip exited with status 1."
        assert page.status.property("error") is True and "#b00020" in page.status.styleSheet()
        assert "resolve" in page.progress.format()
        gate["second"] = asyncio.Event()
        page.result = None
        qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.running, timeout=5000)
        assert page.progress.format() == ""  # not the last run's "[resolve] …"
        assert page.status.property("error") is False and page.status.styleSheet() == ""
        gate["second"].set()
        qtbot.waitUntil(lambda: page.result is not None and not page.running, timeout=5000)
    finally:
        wizard.setStartId(int(PageId.WELCOME))
        if gate["second"] is not None:
            gate["second"].set()
