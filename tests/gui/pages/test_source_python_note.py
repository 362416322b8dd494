"""The Source page names the interpreter Install will use and warns, before the build,
when the wheel's Python differs from it (issue 19, item 5). Real interpreters of this
machine: tfwizard's own, /usr/bin/python3 asked in a process, and a venv made from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfwizard.core.install.python import (
    CHOSEN,
    DEFAULT,
    EXISTING_VENV,
    install_interpreter,
    interpreter_version,
)
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
OWN = f"{sys.version_info.major}.{sys.version_info.minor}"


def other_minor() -> str:
    """A Python the release supports that is not tfwizard's own."""
    return "3.10" if OWN != "3.10" else "3.11"


def source_page(make_window):
    window = make_window()
    assert window.wizard.go_to(PageId.SOURCE) == PageId.SOURCE
    return window.wizard, window.wizard.page(int(PageId.SOURCE))


def test_default_interpreter_is_named_and_agrees(make_window):
    wizard, page = source_page(make_window)
    wizard.state.update({"python.version": OWN})
    note = page.python_note
    assert note.isVisibleTo(page) and not note.mismatch
    python, how = install_interpreter(wizard.state.recipe)
    assert how == DEFAULT
    assert str(python) in note.label.text() and f"Python {OWN}" in note.label.text()
    assert not note.use_button.isVisibleTo(page)


def test_other_wheel_python_warns_and_one_click_aligns(make_window):
    wizard, page = source_page(make_window)
    wizard.state.update({"python.version": other_minor()})  # e.g. the wizard's own fix
    note = page.python_note
    assert note.mismatch
    text = note.label.text()
    assert f"Python {other_minor()}" in text and f"Python {OWN}" in text
    assert f"cp{other_minor().replace('.', '')}" in text
    assert note.use_button.isVisibleTo(page)
    assert note.use_button.text() == f"Use Python {OWN}"
    note.use_button.click()
    assert wizard.state.recipe.python.version == OWN
    assert not note.mismatch


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no system Python")
def test_chosen_interpreter_is_asked_for_its_version(make_window):
    done = subprocess.run(["/usr/bin/python3", "-c",
                           "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=True)
    system = done.stdout.strip()
    assert interpreter_version(Path("/usr/bin/python3")) == system
    wizard, page = source_page(make_window)
    wizard.state.update({"install.python": "/usr/bin/python3", "python.version": system})
    assert install_interpreter(wizard.state.recipe)[1] == CHOSEN
    assert "/usr/bin/python3" in page.python_note.label.text()
    assert not page.python_note.mismatch
    assert interpreter_version(Path("/nowhere/python")) is None


def test_existing_venv_is_what_install_uses(make_window, tmp_path):
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wizard, page = source_page(make_window)
    wizard.state.update({"install.venv": str(venv), "python.version": other_minor()})
    python, how = install_interpreter(wizard.state.recipe)
    assert how == EXISTING_VENV and python == venv / "bin" / "python"
    assert str(python) in page.python_note.label.text()
    assert page.python_note.mismatch


def test_no_note_when_another_machine_installs(make_window):
    from ..conftest import HOSTS

    wizard, page = source_page(make_window)
    wizard.welcome.import_target(str(HOSTS / "h100-driver560.json"))
    wizard.state.update({"python.version": other_minor()})
    assert not page.python_note.isVisibleTo(page)


def test_a_checkouts_lock_files_say_its_pythons(make_window, tmp_path):
    """A researcher's branch of 2.18 with a lock file for Python 3.13, which the table's
    2.18 lacks: the Python list follows the checkout's requirements_lock_3_*.txt."""
    from tests import world

    src = world.copy_workspace(tmp_path)
    for minor in (11, 13):
        (src / f"requirements_lock_3_{minor}.txt").write_text("numpy==2.1.0\n")
    wizard, page = source_page(make_window)
    wizard.state.update({"tensorflow.version": "2.18.0", "tensorflow.ref": "",
                         "tensorflow.source_dir": str(src)})
    combo = page.python_combo
    texts = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
    assert "supported by this checkout" in texts["3.13"], texts
    assert "supported by this checkout" in texts["3.11"], texts
    assert "supported by" not in texts["3.10"]  # the table's 2.18 has it, the checkout not
    wizard.state.update({"tensorflow.source_dir": ""})  # a release again: the table's list
    texts = {combo.itemData(i): combo.itemText(i) for i in range(combo.count())}
    assert "supported by 2.18.0" in texts["3.10"], texts
