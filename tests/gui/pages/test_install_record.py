"""The wizard keeps its install of this session's wheel in the build's record
(install.json, pip's argv with it), through the session, as `tfwizard build --install`
does. A real venv, real pip, a small wheel made on the spot (offline: --no-index)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from tfwizard.gui.pages import PageId

from ...core.install.test_install import make_wheel
from ..conftest import host

pytestmark = [pytest.mark.slow, pytest.mark.qt_log_ignore("This plugin does not support")]


def test_the_install_of_the_built_wheel_goes_into_its_record(qtbot, make_window, tmp_path):
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    state = wizard.state
    wheel = make_wheel(tmp_path / "wheels", "tinypkg")
    record = tmp_path / "record"
    record.mkdir()
    state.update({"install.venv": str(tmp_path / "venv"), "install.extras": []})
    state.record_dir, state.wheel = str(record), str(wheel)  # as a finished build leaves them
    state.install_find_links = str(tmp_path / "wheels")  # offline: pip's --no-index
    wizard.setStartId(int(PageId.INSTALL))
    wizard.restart()
    page = wizard.currentPage()
    page.wheel_edit.setText(str(wheel))
    qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None and not page.running, timeout=180_000)
    assert page.result.ok, page.result.message
    kept = json.loads((record / "install.json").read_text("utf-8"))
    assert kept["status"] == "installed" and kept["wheel"] == str(wheel)
    assert kept["argv"][1:4] == ["-m", "pip", "install"] and "--no-index" in kept["argv"]


def test_the_verification_is_judged_here_and_kept_in_the_record(qtbot, make_window, tmp_path):
    import sys

    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    state = wizard.state
    state.target_host = host("ada-8.9-driver550")  # the wheel is for another machine
    record = tmp_path / "record"
    record.mkdir()
    # the build's wheel went into this interpreter (as the Install page records it)
    (record / "install.json").write_text(json.dumps({"python": sys.executable}), "utf-8")
    state.record_dir = str(record)
    wizard.setStartId(int(PageId.VERIFY))
    wizard.restart()
    page = wizard.currentPage()
    page.python_edit.setText(sys.executable)  # tfwizard's own: no TensorFlow in it
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.report is not None and not page.running, timeout=180_000)
    # the probe ran here, so this machine (the build host), not the target, is the judge
    assert page.job.host is state.build_host
    kept = json.loads((record / "verify.json").read_text("utf-8"))
    assert kept["ok"] is False and kept["python"] == sys.executable


def test_another_interpreter_is_verified_without_the_build(qtbot, make_window, tmp_path):
    """An interpreter the build's wheel did not go into is verified on its own: not held
    against the build's wheel, and its report stays out of the build's record."""
    import sys

    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    state = wizard.state
    record = tmp_path / "record"
    record.mkdir()
    (record / "install.json").write_text(json.dumps({"python": str(tmp_path / "venv" / "bin"
                                                                   / "python")}), "utf-8")
    state.record_dir = str(record)
    wizard.setStartId(int(PageId.VERIFY))
    wizard.restart()
    page = wizard.currentPage()
    page.python_edit.setText(sys.executable)
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.report is not None and not page.running, timeout=180_000)
    assert page.job.expected is None
    assert not (record / "verify.json").exists()
