"""Ordinary file-system failures in the wizard get the CLI's message (the path and the
fix) in a box of their own, never the "unexpected error" dialog with a traceback: saving a
recipe where it cannot be written, and a build whose record cannot be made in the data
folder. The tests run as root, for whom a mode-0500 folder is writable: a file name too
long for the file system is the failure every user gets."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.recipe import load_recipe
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

CPU = Path(__file__).resolve().parents[2] / "recipes" / "tf221-cpu-portable.toml"
LONG = "n" * 300  # over the 255 bytes a name most file systems allow


def _boxes(name: str) -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.objectName() == name and w.isVisible()]


def test_saving_where_the_name_is_too_long_says_so(qtbot, make_window, tmp_path):
    window = make_window()
    path = tmp_path / f"{LONG}.toml"
    assert window.save_to(path) is False
    box = window.findChild(QMessageBox, "error-box")
    assert box is not None and box.isVisible()
    assert f"cannot use {path}: a name in the path is too long" in box.text()
    assert "Use shorter folder and file names" in box.text()
    assert not _boxes("excepthook-box")


def test_a_build_whose_record_cannot_be_made_says_why(qtbot, make_window, tmp_path):
    data = tmp_path / LONG

    def factory(state):
        # the real runner: it makes its record before it asks the engine anything
        return BuildRunner(make_plan(load_recipe(CPU)), data_root=data,
                           env={"DOCKER_HOST": "tcp://127.0.0.1:9"})

    window = make_window(jobs=Jobs(build=factory))
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    with qtbot.waitSignal(page.buildFinished, timeout=10000):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.phase_label.text() == "Failed", page.result_label.text()
    assert f"cannot use {data}" in page.result_label.text()
    assert "a name in the path is too long" in page.result_label.text()
    assert not _boxes("excepthook-box")
