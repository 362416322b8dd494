"""The Install page's [and-cuda] box follows the recipe's backend, live: ticked for CUDA,
unticked for CPU, whichever page or fix changed the backend; a CUDA recipe without it
shows `check`'s warning on the page, and its fix ticks the box (UX review 4, finding 1)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from tfwizard.core.recipe import AND_CUDA
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 5000


def _goto(wizard, page_id: PageId):
    wizard.setStartId(int(page_id))
    wizard.restart()
    return wizard.currentPage()


def _click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def test_the_box_follows_the_backend_page(qtbot, make_window):
    window = make_window()
    wizard = window.wizard
    try:
        backend = _goto(wizard, PageId.BACKEND)
        _click(qtbot, backend.radios["cpu"])
        assert wizard.state.recipe.backend.kind == "cpu"
        assert wizard.state.recipe.install.extras == []
        install = _goto(wizard, PageId.INSTALL)
        assert not install.and_cuda.isChecked()
        assert install.findings.row("AND_CUDA_MISSING") is None

        backend = _goto(wizard, PageId.BACKEND)
        _click(qtbot, backend.radios["cuda"])
        assert wizard.state.recipe.install.extras == [AND_CUDA]
        install = _goto(wizard, PageId.INSTALL)
        assert install.and_cuda.isChecked() and install.and_cuda.isEnabled()
    finally:
        wizard.setStartId(int(PageId.WELCOME))


def test_the_box_follows_a_backend_change_while_the_page_is_shown(qtbot, make_window):
    window = make_window()
    wizard = window.wizard
    try:
        wizard.state.update({"backend.kind": "cuda"})
        install = _goto(wizard, PageId.INSTALL)
        assert install.and_cuda.isChecked()
        wizard.state.update({"backend.kind": "cpu"})  # e.g. a finding's "Build for CPU"
        qtbot.waitUntil(lambda: not install.and_cuda.isChecked(), timeout=WAIT)
        assert not install.and_cuda.isEnabled()  # nothing to choose for a CPU wheel
        wizard.state.update({"backend.kind": "cuda"})
        qtbot.waitUntil(install.and_cuda.isChecked, timeout=WAIT)
    finally:
        wizard.setStartId(int(PageId.WELCOME))


def test_unticking_it_on_cuda_warns_and_the_fix_ticks_it_again(qtbot, make_window):
    window = make_window()
    wizard = window.wizard
    try:
        wizard.state.update({"backend.kind": "cuda"})
        install = _goto(wizard, PageId.INSTALL)
        _click(qtbot, install.and_cuda)
        assert wizard.state.recipe.install.extras == []
        qtbot.waitUntil(lambda: install.findings.row("AND_CUDA_MISSING") is not None,
                        timeout=WAIT)
        row = install.findings.row("AND_CUDA_MISSING")
        assert row.finding.severity == "warning" and row.fix_button is not None
        _click(qtbot, row.fix_button)
        qtbot.waitUntil(install.and_cuda.isChecked, timeout=WAIT)
        assert wizard.state.recipe.install.extras == [AND_CUDA]
        qtbot.waitUntil(lambda: install.findings.row("AND_CUDA_MISSING") is None,
                        timeout=WAIT)
    finally:
        wizard.setStartId(int(PageId.WELCOME))
