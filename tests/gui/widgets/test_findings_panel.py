"""The findings panel: causes first, notes folded, the banner never repeats a row (issue 19)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_cc35_panel_orders_folds_and_fixes_without_conflict(qtbot, make_window):
    wizard = make_window().wizard
    wizard.state.update({"cuda.compute_capabilities": ["3.5"]})
    wizard.go_to(PageId.COMPUTE)
    panel = wizard.compute.findings
    codes = panel.codes()
    errors = [r.finding for r in panel.rows if r.finding.severity == "error"]
    assert codes.index("CC_DROPPED_BY_CUDA") < codes.index("PTX_DRIVER")
    assert all(e.message not in panel.summary.text() for e in errors)
    notes = [r for r in panel.rows if r.finding.severity == "info"]
    assert all(not r.isVisible() for r in notes)
    if notes:
        assert panel.notes_toggle.isVisible() and "▸" in panel.notes_toggle.text()
        qtbot.mouseClick(panel.notes_toggle, Qt.MouseButton.LeftButton)
        assert all(r.isVisible() for r in notes)
    add = next(r for r in panel.rows if r.fix_button is not None
               and r.fix_button.text() == "Add sm_89")
    qtbot.mouseClick(add.fix_button, Qt.MouseButton.LeftButton)
    assert wizard.state.recipe.cuda.compute_capabilities == ["sm_89"]
    assert not panel.errors()
