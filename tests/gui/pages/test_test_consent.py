"""The Test page asks before `bazel test` sends an environment variable the user has not
allowed, as Start on the Build page does: Cancel runs nothing, an allow runs the tests."""

from __future__ import annotations

import pytest

from tfwizard.core import consent
from tfwizard.core.errors import UsageError
from tfwizard.gui.pages import PageId

from .test_build_consent import button, consent_box, wizard_at

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_the_test_page_asks_before_sending_a_variable(qtbot, make_window, monkeypatch,
                                                      tmp_path):
    monkeypatch.setenv(consent.CONFIG_DIR_ENV, str(tmp_path / "config"))
    monkeypatch.setenv("TFWT_GUI_KEY", "gui-secret-value")
    monkeypatch.delenv(consent.CONSENT_ENV, raising=False)
    page = wizard_at(make_window, PageId.TEST)
    asked: list[list[str]] = []

    def factory(state, targets):
        # the engine is not this test's: the page shows the error the job factory raises
        asked.append(list(targets))
        raise UsageError("no engine in this test")

    page.factory = factory
    page.start(["//t:a"])
    box = consent_box(qtbot)
    assert "${TFWT_GUI_KEY} (remote.headers) is sent to cache.example" in box.text()
    box.button(box.StandardButton.Cancel).click()
    qtbot.wait(50)
    assert asked == [] and not page.running
    page.start(["//t:a"])
    button(consent_box(qtbot), "Allow until the wizard closes").click()
    qtbot.waitUntil(lambda: asked == [["//t:a"]] and not page.running, timeout=5000)
    assert page.status_label.text() == "no engine in this test"
