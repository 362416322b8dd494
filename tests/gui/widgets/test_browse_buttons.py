"""Every path field has a Browse… button (issue 19, item 6), and choosing in its dialog
writes the field and the recipe.

The fields that hold no path are listed by name: a new QLineEdit must either be one of
them or get a `browse-<name>` button, so a path field added later without one fails here.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLineEdit, QPushButton

from tfwizard.gui.pages import PageId

from ..conftest import open_file_dialog, type_file_name

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

#: fields that hold no path: names, versions, flags, a URL, header names, log search
NOT_PATHS = {"recipe-name", "test-targets", "git-ref", "rocm-version", "rocm-targets", "gcc-version",
             "opt-flags", "image", "bazel-flags", "log-search", "remote-executor",
             "remote-instance", "remote-exec-properties",
             # URLs and host names (a file:// git mirror is typed as a URL)
             "git-url", "http-proxy", "https-proxy", "no-proxy", "remote-cache", "index-url",
             "trusted-host",
             # a package index URL, or a shared folder typed as a path (a team's index)
             "wheelhouse-url"}
#: the path fields, by recipe key where they have one (HOST_PATH_KEYS the GUI shows)
PATHS = {"source-dir": "tensorflow.source_dir", "output-dir": "output.dir",
         "venv": "install.venv", "install-python": "install.python", "wheel": None,
         "offline-packages": None, "verify-python": None}


def line_edits(window) -> dict[str, QLineEdit]:
    found = {}
    for page_id in PageId:
        page = window.wizard.page(int(page_id))
        for edit in page.findChildren(QLineEdit):
            name = edit.objectName()
            if not name or name.startswith("remote-header-") or name.startswith("qt_"):
                continue  # spin boxes' and combo boxes' own editors; the remote headers
            found[name] = edit
    return found


def test_every_path_field_has_a_browse_button(make_window):
    window = make_window()
    edits = line_edits(window)
    assert set(PATHS) <= set(edits)  # the fields this test knows are all still there
    unknown = set(edits) - NOT_PATHS - set(PATHS)
    assert not unknown, f"new fields: list them in NOT_PATHS or give them Browse: {unknown}"
    for name, edit in edits.items():
        button = edit.parentWidget().findChild(QPushButton, f"browse-{name}")
        if name in PATHS:
            assert button is not None, name
            assert button.text() == "Browse…"
        else:
            assert button is None, name


@pytest.mark.parametrize(("page", "name", "folder"), [
    (PageId.OPTIONS, "output-dir", True), (PageId.INSTALL, "install-python", False),
    (PageId.SOURCE, "source-dir", True), (PageId.VERIFY, "verify-python", False)])
def test_browse_fills_the_field_and_the_recipe(qtbot, make_window, tmp_path, page, name,
                                               folder):
    window = make_window()
    wizard = window.wizard
    edit = line_edits(window)[name]
    if name == "source-dir":
        wizard.page(int(PageId.SOURCE)).checkout_radio.setChecked(True)
    chosen = tmp_path / "chosen"
    if folder:
        chosen.mkdir()
    else:
        chosen.write_text("#!/bin/sh\n")
    button = edit.parentWidget().findChild(QPushButton, f"browse-{name}")
    assert button.isEnabled()
    button.click()
    dialog = open_file_dialog(qtbot)
    assert dialog.objectName() == "browse-dialog"
    type_file_name(dialog, chosen)
    qtbot.waitUntil(lambda: edit.text() == str(chosen))
    key = PATHS[name]
    if key is not None:
        assert str(wizard.state.recipe.get(key)) == str(chosen)
