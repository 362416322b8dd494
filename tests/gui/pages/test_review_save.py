"""Review's Save button in the main window is the window's Save As (which keeps the recent
recipes and the title): the page asks for it through an attribute the window sets, not by
looking the window's methods up."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_review_save_is_the_windows_save_as(qtbot, make_window, tmp_path):
    window = make_window()
    page = window.wizard.review
    path = tmp_path / "kept.toml"
    window.save_recipe_as = lambda: window.save_to(path)  # no dialog: a path given here
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert path.is_file() and f'name = "{window.wizard.state.recipe.name}"' in path.read_text()
