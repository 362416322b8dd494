"""Rebuild on save over a tree larger than the watcher takes (issue 17: a whole TensorFlow
checkout is ~30,000 files, the cap 8000): every folder and the files under tensorflow/ come
first, the count left out is kept, and the Build page warns (status line and tooltip, in
English and in Simplified Chinese)."""

from __future__ import annotations

import pytest

from tfwizard.gui import i18n as gui_i18n
from tfwizard.gui.widgets.source_watch import SourceWatcher

from . import test_rebuild

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
fixture_window = test_rebuild.fixture_window  # the wizard on the Build page, fake builds


def _tree(root, folders: int, files: int) -> None:
    """Folders aaa/, tensorflow/ (with `folders` sub-folders each) of `files` files."""
    for top in ("aaa", "tensorflow", "third_party"):
        for n in range(folders):
            sub = root / top / f"d{n}"
            sub.mkdir(parents=True)
            for m in range(files):
                (sub / f"f{m}.cc").write_text("int x;\n")


def test_at_the_cap_folders_and_tensorflow_files_come_first_and_the_rest_is_counted(
        qtbot, tmp_path):
    src = tmp_path / "src"
    _tree(src, folders=10, files=20)  # 1 + 3 + 30 folders, 600 files
    watch = SourceWatcher(max_paths=300)
    assert watch.start(src) == 300
    assert watch.skipped == 634 - 300
    fs = watch._fs
    assert fs is not None
    dirs, files = set(fs.directories()), set(fs.files())
    assert len(dirs) == 34  # every folder: a save by rename is seen anywhere
    under = {f for f in files if "/tensorflow/" in f}
    assert len(under) == 200 and len(files) == 300 - 34
    assert not any("/third_party/" in f for f in files)  # tree order after tensorflow/
    watch.stop()
    assert watch.skipped == 0 and watch.start(src) == 300  # counted again from scratch
    watch.stop()
    small = SourceWatcher()
    assert small.start(src) == 634 and small.skipped == 0
    small.stop()


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_build_page_warns_how_many_paths_were_left_out(qtbot, fixture_window, lang):
    window, _made, workspace = fixture_window
    bar = window.wizard.build.rebuilder
    bar.on_save.setChecked(True)  # the fixture workspace fits: no warning
    total = bar.watcher.watched
    assert total > 50 and bar.watcher.skipped == 0 and bar.status.toolTip() == ""
    bar.on_save.setChecked(False)
    gui_i18n.install(lang)
    try:
        bar.watcher.max_paths = 40
        bar.on_save.setChecked(True)
        skipped = total - 40
        assert bar.watcher.skipped == skipped
        text, tip = bar.status.text(), bar.status.toolTip()
        assert str(workspace) in text and f"{skipped}" in text and f" {total} " in text
        assert "8000" not in text and "40" in text
        assert "tensorflow/" in tip and f"{skipped}" in tip
        if lang == "zh_CN":
            assert "未监视" in text and "重新构建" in tip
        else:
            assert f"{skipped} left out (at most 40 are watched)" in text
            assert "smaller checkout" in tip and "Rebuild" in tip
        bar.on_save.setChecked(False)
        bar.watcher.max_paths = 8000
        bar.on_save.setChecked(True)
        assert bar.status.toolTip() == "" and bar.watcher.skipped == 0
    finally:
        gui_i18n.install("en")
        bar.on_save.setChecked(False)
