"""The UX review's last defects: after a failed verification Enter does not finish and
"Start over" goes back to Welcome with the recipe; the Source lists say what each release
builds with and which Pythons it supports; the CUDA list marks TensorFlow's default and
what the target's driver runs natively."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWizard

from tests.core.install.test_install import make_wheel
from tests.gui.conftest import host
from tests.gui.pages.test_verify_page import fake_python, open_verify_page
from tfwizard.gui.pages import PageId
from tfwizard.gui.pages.hostview import host_html

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
RECIPES = Path(__file__).resolve().parents[3] / "recipes"


def test_a_failed_verification_is_not_finished_by_enter_and_can_start_over(qtbot, make_window,
                                                                          tmp_path):
    broken = fake_python(tmp_path, "broken", "import sys\nsys.exit(3)")  # a real failing probe
    window, page = open_verify_page(make_window)
    wizard = window.wizard
    recipe = wizard.state.recipe
    page.python_edit.setText(str(broken))
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.report is not None and not page.running, timeout=30000)
    assert page.report.status == "failed"
    assert not wizard.button(QWizard.WizardButton.FinishButton).isDefault()
    assert page.run_button.isDefault()  # Enter runs it again
    qtbot.mouseClick(page.start_over_button, Qt.MouseButton.LeftButton)
    assert wizard.currentId() == int(PageId.WELCOME)
    assert wizard.state.recipe == recipe  # the recipe is kept, to change and build again


def _source_page(make_window, version: str):
    window = make_window()
    wizard = window.wizard
    wizard.state.update({"tensorflow.version": version})
    wizard.go_to(PageId.SOURCE)
    return window, wizard.source


def test_the_release_list_says_what_each_release_builds_with(make_window):
    _window, page = _source_page(make_window, "2.18.0")
    combo = page.version_combo
    texts = [combo.itemText(i) for i in range(combo.count())]
    newest = page.state.kb.latest_release()
    # newest first; a release candidate newer than the newest final is marked as such
    assert texts[0].startswith("2.22.0rc0  (pre-release; CUDA 12.5.1; Python 3.10–3.14)")
    assert texts[1].startswith(f"{newest.version}  (newest; CUDA ")
    assert "2.18.0  (CUDA 12.5.1; Python 3.9–3.12)" in texts
    assert combo.currentData() == "2.18.0" and page.state.recipe.tensorflow.version == "2.18.0"


def test_pythons_the_release_supports_are_said_and_the_others_marked(make_window):
    _window, page = _source_page(make_window, "2.18.0")
    combo = page.python_combo
    text = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
    assert text["3.11"] == "Python 3.11  (supported by 2.18.0)"
    assert text["3.7"].startswith("Python 3.7  ✖ "), text["3.7"]
    assert text["3.13"].startswith("Python 3.13  ✖ "), text["3.13"]
    assert combo.itemData(combo.currentIndex()) == page.state.recipe.python.version


def test_the_cuda_list_marks_the_default_and_the_drivers_range(make_window):
    window = make_window(host=host("ada-8.9-driver550"))  # driver 550: CUDA up to 12.4
    wizard = window.wizard
    wizard.state.update({"tensorflow.version": "2.18.0", "backend.kind": "cuda"})
    wizard.go_to(PageId.TOOLCHAIN)
    combo = wizard.toolchain.cuda_combo
    text = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
    assert text["12.4.1"] == "12.4.1  (the driver runs it natively (up to CUDA 12.4))"
    assert text["12.5.1"].startswith("12.5.1  (TensorFlow's default; newer than the driver's "
                                     "CUDA 12.4: minor-version compatibility only)"), text


def test_install_says_the_download_and_refuses_in_the_wizards_words(qtbot, make_window,
                                                                    tmp_path):
    # a real wheel for another Python, refused by the real installer's tag check
    wheel = make_wheel(tmp_path, "tensorflow", "2.18.0", "cp310-cp310-linux_x86_64")
    window = make_window()
    wizard = window.wizard
    wizard.state.wheel = str(wheel)
    wizard.state.update({"install.python": sys.executable, "install.venv": ""})
    wizard.setStartId(int(PageId.INSTALL))
    wizard.restart()
    page = wizard.install
    try:
        assert page.download.text().startswith("The wheel is here (1 KiB); pip downloads")
        page.links_edit.setText(str(tmp_path))
        assert "nothing is downloaded" in page.download.text()
        page.links_edit.setText("")
        assert page.progress.format() == "pip's progress"
        qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.status.property("error") is True, timeout=30000)
        text = page.status.text()
        assert text.startswith("refusing to install"), (text, page.log.text.toPlainText(), page.result)
        assert "--python" not in text and "--venv" not in text
        assert "Interpreter field" in text
    finally:
        wizard.setStartId(int(PageId.WELCOME))


def test_hermetic_is_explained_where_it_is_said(make_window):
    window = make_window()
    window.wizard.go_to(PageId.BACKEND)
    page = window.wizard.backend
    assert "Hermetic" in page.reasons["cuda"].text()
    for widget in (page.radios["cuda"], page.reasons["cuda"]):
        assert "nothing of CUDA is installed on this machine" in widget.toolTip()


def test_source_titles_speak_of_documents_not_of_the_projects_workshop(make_window):
    kb = make_window().wizard.state.kb
    words = ("golden", "made by the project", "fixture")
    assert [s.title for s in kb.sources.values()
            if any(w in s.title.lower() for w in words)] == []


def test_file_menu_new_recent_and_the_modified_mark(qtbot, make_window, tmp_path):
    window = make_window()
    wizard = window.wizard
    shipped = sorted(RECIPES.glob("*.toml"))[0]
    assert window.open_recipe(shipped)
    assert window.windowTitle() == f"tfwizard: {shipped}[*]" and not window.isWindowModified()
    wizard.state.update({"name": "changed"})
    assert window.isWindowModified()  # "*" in the title while unsaved
    saved = tmp_path / "mine.toml"
    assert window.save_to(saved)
    assert window.windowTitle() == f"tfwizard: {saved}[*]" and not window.isWindowModified()
    assert window.recent.paths[:2] == [str(saved), str(shipped)]
    file_menu = window.menuBar().actions()[0].menu()
    recent = next(a.menu() for a in file_menu.actions() if a.menu() is not None)
    recent.aboutToShow.emit()
    assert [a.text() for a in recent.actions()] == [f"&1 {saved}", f"&2 {shipped}"]
    new = next(a for a in file_menu.actions() if a.objectName() == "new-recipe")
    new.trigger()
    assert wizard.currentId() == int(PageId.WELCOME)
    assert wizard.state.recipe.name != "changed" and wizard.state.recipe.path is None
    assert window.windowTitle() == "tfwizard[*]" and not window.isWindowModified()
    recent.actions()[0].trigger()  # reopen the saved one from the list
    assert wizard.state.recipe.name == "changed"


def test_a_recipe_that_does_not_parse_shows_its_line_and_a_caret(make_window, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[tensorflow\nversion = "2.18.0"\n', encoding="utf-8")
    window = make_window()
    assert not window.open_recipe(bad)
    box = window.findChild(QMessageBox, "error-box")
    assert "line 2" in box.text()
    # the line, then the caret under the column where TOML stopped (end of "[tensorflow")
    assert box.informativeText() == "<pre>2: [tensorflow\n             ^</pre>"
    box.close()


def test_the_welcome_host_table_has_no_faux_italic_and_shares_a_baseline(make_window):
    window = make_window()
    html = host_html(host("ada-8.9-driver550"), window.wizard.state, "This machine")
    assert "<i>" not in html  # Chinese has no italic: Qt slanted it, on another baseline
    assert html.count("<td valign='top'") == 2 * html.count("<tr>")


def test_a_skipped_step_is_not_faux_italic(make_window):
    window = make_window(host=host("no-gpu-server"))  # a CPU build: GPUs is skipped
    wizard = window.wizard
    assert wizard.go_to(PageId.REVIEW) == PageId.REVIEW
    bar = wizard.step_bar
    skipped = bar.item(int(PageId.COMPUTE))
    assert skipped.text().startswith("– ") and skipped.toolTip() == "skipped"
    assert not skipped.font().italic()
