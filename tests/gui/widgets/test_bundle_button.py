"""The wizard's "Save diagnostics bundle…" buttons and its window icon (offscreen)."""

from __future__ import annotations

import asyncio
import json

import pytest
from PySide6.QtCore import QSize, Qt

from tests.core.building.test_bundle import PROXY_PASSWORD, write_record
from tests.gui.conftest import open_file_dialog, type_file_name
from tests.gui.pages.test_runpages import build_window
from tfwizard.core.building.report.bundle import read_bundle
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 5000


def test_window_icon_comes_from_resources_icons(make_window):
    window = make_window()
    icon = window.windowIcon()
    assert not icon.isNull()
    sizes = icon.availableSizes()
    for size in (48, 128, 256):
        assert QSize(size, size) in sizes
    assert not icon.pixmap(64, 64).isNull()  # the SVG fills sizes between


def test_build_page_saves_a_bundle_of_the_failed_build(qtbot, make_window, tmp_path):
    record = write_record(tmp_path / "data")
    window, _ = build_window(make_window, fail=True)
    page = window.wizard.build
    assert not page.bundle.button.isEnabled()  # no build yet
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None, timeout=WAIT)
    assert not page.bundle.button.isEnabled()  # the fake record folder does not exist
    window.wizard.state.record_dir = str(record)  # as a real build's Artifact("record") sets
    page.bundle.sync()
    assert page.bundle.button.isEnabled()
    out = tmp_path / "saved.tar.gz"
    qtbot.mouseClick(page.bundle.button, Qt.MouseButton.LeftButton)
    dialog = open_file_dialog(qtbot)
    assert dialog.selectedFiles()[0].endswith(f"tfwizard-diagnostics-{record.name}.tar.gz")
    # while the question is open, other tasks still run (no nested event loop; issue 15):
    # the qloop fixture fails on "Cannot enter into task"
    other = asyncio.ensure_future(asyncio.sleep(0.05, result="ran"))
    qtbot.waitUntil(other.done, timeout=WAIT)
    assert other.result() == "ran" and dialog.isVisible()
    type_file_name(dialog, out)
    qtbot.waitUntil(lambda: page.bundle.saved is not None, timeout=WAIT)
    assert page.bundle.saved == out and "secrets masked" in page.bundle.status.text()
    files = read_bundle(out)
    assert "compile-error" in files["diagnosis.txt"]
    # the wizard's build host goes in (no detection from the GUI thread)
    assert json.loads(files["host.json"])["os"]["distro"] is not None
    assert PROXY_PASSWORD.encode() not in out.read_bytes()


def test_verify_page_bundle_carries_the_report_shown(qtbot, make_window, tmp_path):
    from tfwizard.core.verify.job import Check, ProbeRun, VerifyReport

    record = write_record(tmp_path / "data", verify=False)
    window = make_window()
    wizard = window.wizard
    wizard.state.record_dir = str(record)
    wizard.setStartId(int(PageId.VERIFY))
    wizard.restart()
    page = wizard.verify
    assert page.bundle.button.isEnabled()
    probe = ProbeRun("ok", "/v/bin/python", 0, elapsed_s=1.0,
                     data={"tensorflow": {"version": "2.21.0"}})
    page.report = VerifyReport("/v/bin/python", "cpu", "option", probe,
                               [Check("tensorflow imports", True)])
    out = tmp_path / "verify-bundle.zip"
    import asyncio

    task = asyncio.ensure_future(page.bundle.save(out))
    qtbot.waitUntil(task.done, timeout=WAIT)
    files = read_bundle(out)
    assert json.loads(files["verify.json"])["python"] == "/v/bin/python"
    wizard.setStartId(int(PageId.WELCOME))
