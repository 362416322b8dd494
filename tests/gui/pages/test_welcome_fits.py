"""Welcome at 1024x700 (issue 19, item 1): the tallest Welcome (Docker down, a target
machine imported: two host tables) scrolls instead of squeezing its wrapped rows, keeps
no stale checklist rows, and the window stays 1024x700."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from tests.gui.clipping_probe import clipped_texts

from ..conftest import HOSTS
from .test_welcome_readiness import without_docker

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_tallest_welcome_scrolls_without_clipping(qtbot, make_window):
    window = make_window(host=without_docker("ada-8.9-driver550"))
    window.resize(1024, 700)
    welcome = window.wizard.welcome
    assert welcome.import_target(str(HOSTS / "h100-driver560.json"))
    welcome.state.update({"build.jobs": 3})  # re-renders the checklist once more
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1024, 700)
    assert window.wizard.geometry().bottom() + 1 <= 700
    assert clipped_texts(window) == [], clipped_texts(window)
    # every row was drawn once: the rows of earlier renders are gone, not hidden under
    rows = [w for w in welcome.findChildren(QLabel, "readiness-docker") if w.isVisibleTo(welcome)]
    assert len(rows) == 1
    # too tall for the window: the form scrolls (a squeezed form would not need to)
    area = welcome.findChild(type(welcome.content.parentWidget().parentWidget()), "page-scroll")
    assert area is not None and area.verticalScrollBar().maximum() > 0
    row = rows[0]
    assert row.height() >= row.heightForWidth(row.width())
