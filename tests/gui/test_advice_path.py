"""The advice on Welcome (host fakes from tests/core/advise_hosts.py, as `tfwizard detect
--json` saved them) and its buttons into Install: the official wheel (a requirement), or
a wheel the person has; and, for real, tensorflow-cpu from an offline folder of wheels
downloaded from PyPI, installed through the page and verified to a passing panel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.gui.conftest import host
from tfwizard.gui.pages import PageId
from tfwizard.gui.widgets.richtext import code_html

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def welcome(make_window, name: str):
    window = make_window(host=host(name))
    return window, window.wizard.welcome


def test_a_machine_the_official_wheel_serves_gets_the_verdict_and_the_button(qtbot,
                                                                             make_window):
    window, page = welcome(make_window, "rtx4090-driver550-py311")
    box = page.advice
    assert box.advice is not None and box.advice.official_serves
    text = box.summary.text()  # the command as code, not in backticks
    assert text.startswith("The official <code>tensorflow[and-cuda]==") and \
        "wheel runs on this machine. Installing it takes minutes; no source build" in text
    assert box.official_button.isVisible()
    qtbot.mouseClick(box.official_button, Qt.MouseButton.LeftButton)
    wizard = window.wizard
    assert wizard.currentId() == int(PageId.INSTALL)
    assert wizard.install.wheel_edit.text() == box.advice.requirement
    wizard.back()  # Back returns to Welcome; Next goes to Source again
    assert wizard.currentId() == int(PageId.WELCOME)
    wizard.next()
    assert wizard.currentId() == int(PageId.SOURCE)


@pytest.mark.parametrize("name, words", [
    ("celeron-j1900-no-avx", "A source build is needed"),
    ("debian13-py313", ""),
])
def test_a_machine_it_does_not_serve_gets_no_install_button(make_window, name, words):
    window, page = welcome(make_window, name)
    box = page.advice
    assert box.advice is not None
    assert box.summary.text() == code_html(box.advice.summary) and words in box.summary.text()
    assert box.official_button.isVisible() == box.advice.official_serves
    if name.startswith("celeron"):
        assert not box.official_button.isVisible()


def test_i_already_have_a_wheel_goes_to_install(qtbot, make_window):
    window, page = welcome(make_window, "no-gpu-server")
    qtbot.mouseClick(page.advice.have_wheel_button, Qt.MouseButton.LeftButton)
    assert window.wizard.currentId() == int(PageId.INSTALL)
    assert window.wizard.install.python_edit.placeholderText()  # who creates the venv


@pytest.mark.slow
def test_the_official_tensorflow_cpu_wheel_installed_and_verified_through_the_gui(
        qtbot, make_window, tmp_path, tf_cpu_folder, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    profile = host("no-gpu-server")  # Python 3.11, as CI's; the advice names a wheel for it
    window = make_window(host=profile)
    wizard = window.wizard
    box = wizard.welcome.advice
    assert box.advice is not None and box.advice.official_serves, box.summary.text()
    (official,) = tf_cpu_folder.glob("tensorflow_cpu-*.whl")
    version = official.name.split("-")[1]
    assert box.advice.requirement.startswith("tensorflow-cpu==")
    qtbot.mouseClick(box.official_button, Qt.MouseButton.LeftButton)
    install = wizard.install
    assert wizard.currentId() == int(PageId.INSTALL)
    # the offline folder holds what PyPI has now, which may be newer than the knowledge base
    install.wheel_edit.setText(f"tensorflow-cpu=={version}")
    install.venv_edit.setText(str(tmp_path / "tf"))
    install.venv_edit.textEdited.emit(str(tmp_path / "tf"))
    install.links_edit.setText(str(tf_cpu_folder))
    install.links_edit.textEdited.emit(str(tf_cpu_folder))
    qtbot.mouseClick(install.install_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: install.result is not None and not install.running, timeout=900000)
    assert install.result.ok, install.status.text()
    wizard.next()
    verify = wizard.verify
    assert wizard.currentId() == int(PageId.VERIFY)
    assert verify.python_edit.text() == install.result.python
    qtbot.mouseClick(verify.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: verify.report is not None and not verify.running, timeout=300000)
    assert verify.report.ok, verify.report_view.toPlainText()[-3000:]
    assert verify.panel.verdict.text().startswith(f"TensorFlow {version} works here")
    wizard.setStartId(int(PageId.WELCOME))
