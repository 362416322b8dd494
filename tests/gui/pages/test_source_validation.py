"""The Source page marks a missing checkout folder on the field while typing (issue 19)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_source_page_marks_a_missing_folder(qtbot, make_window, tmp_path):
    from tfwizard.gui.pages import PageId

    window = make_window()
    wizard = window.wizard
    wizard.go_to(PageId.SOURCE)
    page = wizard.source
    page.checkout_radio.setChecked(True)
    qtbot.keyClicks(page.dir_edit, str(tmp_path / "nowhere"))
    assert "PATH_MISSING" in page.findings.codes()
    assert page.dir_edit.property("invalid") is True
    assert not page.isComplete()  # Next stays disabled while typing, not only after a click
