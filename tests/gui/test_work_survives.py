"""The user's work survives: a language switch on a finished Build page keeps its log,
result and Back (and no step reads "skipped"); unsaved recipe changes are asked about
before Cancel, Ctrl+Q, the window's close or File > New drop them; `tfwizard-gui RECIPE`
opens the file; the step list goes back (and on) to a page reached before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from tests.gui.pages.test_runpages import WAIT, build_window
from tests.i18n_scan import unmarked
from tfwizard.gui.main_window import DISCARD, KEEP_OPEN, SAVE
from tfwizard.gui.pages import PageId
from tfwizard.gui.retranslate import untranslated
from tfwizard.gui.widgets.stepbar import DONE, SKIPPED

from .conftest import HOSTS
from .pages.test_i18n_pages import visible_texts

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def english():
    from tfwizard.gui import i18n as gui_i18n

    yield
    gui_i18n.install("en")


def test_switching_language_keeps_a_finished_build(qtbot, make_window, english):
    window, _made = build_window(make_window, fail=True)
    wizard = window.wizard
    page = wizard.build
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running, timeout=WAIT)
    assert page.phase_label.text() == "Build failed"
    log = page.log.text.toPlainText()
    back = wizard.button(QWizard.WizardButton.BackButton)
    assert back.isVisible() and back.isEnabled()

    window.language_actions["zh_CN"].trigger()
    assert wizard is window.wizard and wizard.currentId() == PageId.BUILD  # the same pages
    assert page.log.text.toPlainText() == log  # the whole log, not an empty page
    assert page.result is not None and page.diagnoses  # the result and its diagnosis
    assert page.phase_label.text() == "构建失败"
    assert page.title() == "构建" and back.isVisible() and back.isEnabled()
    assert back.text() != "< &Back"
    states = wizard.step_bar.states
    assert SKIPPED not in states and states[PageId.REVIEW] == DONE
    assert untranslated(window) == []  # no text of the catalog left in English
    window.language_actions["en"].trigger()
    assert page.phase_label.text() == "Build failed" and back.text() == "< &Back"
    assert page.log.text.toPlainText() == log

    # every text on screen is put into the language: the pseudo language marks each one
    window.set_language("pseudo")
    texts = [page.title(), page.subTitle(), *visible_texts(window)]
    fake = ("failed", "The compiler ran out of memory", "too many jobs", "use fewer jobs")
    bad = [line for text in texts for line in unmarked(text, allow=fake)]
    assert not bad, bad


def test_unsaved_changes_are_asked_about(qtbot, make_window, tmp_path):
    asked: list[str] = []
    answer = [KEEP_OPEN]

    def ask() -> str:
        asked.append("asked")
        return answer[0]

    window = make_window(ask_save=ask)
    wizard = window.wizard
    window.close()  # nothing changed: no question
    assert not asked and not window.isVisible()
    window.show()
    qtbot.waitExposed(window)
    wizard.state.update({"build.jobs": 3})
    assert window.isWindowModified()
    # the window's close button, Ctrl+Q, Cancel and File > New all ask; Cancel keeps
    quit_action = next(a for a in window.menuBar().actions()[0].menu().actions()
                       if a.text() == "&Quit")
    for n, leave in enumerate((window.close, quit_action.trigger,
                  wizard.button(QWizard.WizardButton.CancelButton).click,
                  window.findChild(type(quit_action), "new-recipe").trigger)):
        leave()
        assert window.isVisible() and wizard.state.recipe.build.jobs == 3, n
    assert len(asked) == 4
    # Save writes the file (a Save-as dialog for a new recipe: given a path here)
    path = tmp_path / "kept.toml"
    window.save_recipe_as = lambda: window.save_to(path)
    answer[0] = SAVE
    window.close()
    assert not window.isVisible() and path.is_file() and "jobs = 3" in path.read_text()
    # Discard drops them, asked once
    window.show()
    qtbot.waitExposed(window)
    wizard.state.update({"build.jobs": 5})
    answer[0] = DISCARD
    asked.clear()
    window.close()
    assert not window.isVisible() and asked == ["asked"]


def test_the_step_list_goes_to_any_page_reached(qtbot, make_window):
    window = make_window()
    wizard = window.wizard
    assert wizard.go_to(PageId.REVIEW) == PageId.REVIEW
    bar = wizard.step_bar
    wizard.state.update({"build.jobs": 3})
    bar.item(int(PageId.SOURCE)).setSelected(False)
    bar.itemClicked.emit(bar.item(int(PageId.SOURCE)))
    assert wizard.currentId() == PageId.SOURCE  # back in one click, not six
    assert wizard.state.recipe.build.jobs == 3
    bar.itemClicked.emit(bar.item(int(PageId.REVIEW)))  # and on again, page by page
    assert wizard.currentId() == PageId.REVIEW
    bar.itemClicked.emit(bar.item(int(PageId.INSTALL)))  # never reached: nothing happens
    assert wizard.currentId() == PageId.REVIEW


SCRIPT = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication
    from tfwizard.core.host import HostProfile
    from tfwizard.gui import app, attach
    from tfwizard.gui.jobs import Jobs

    async def no_check(window, find=None):
        return None

    def report():
        window = next(w for w in QApplication.topLevelWidgets() if w.inherits("QMainWindow"))
        state = window.wizard.state
        print("OPENED", state.recipe.path, window.wizard.currentId(), flush=True)
        window.close()

    qapp = QApplication(sys.argv[:1])
    attach.check_at_start = no_check
    QTimer.singleShot(1500, report)
    host = HostProfile.load(sys.argv[1])
    sys.exit(app.run_gui(["tfwizard-gui", sys.argv[2]], host=host, remember=False))
""")


def test_tfwizard_gui_opens_the_recipe_it_is_given(tmp_path):
    recipe = ROOT / "recipes" / "tf221-cpu-portable.toml"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(HOSTS / "no-gpu-server.json"),
                           os.path.relpath(recipe, tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert f"OPENED {recipe} {int(PageId.REVIEW)}" in proc.stdout, proc.stdout + proc.stderr
