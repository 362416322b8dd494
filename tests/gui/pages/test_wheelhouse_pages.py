"""The team's wheelhouse in the wizard, against a real folder wheelhouse: Welcome's advice
names the wheel there that serves this machine, the Build page publishes a build's wheel
into it ("Publish to wheelhouse"), the Install page installs its best wheel into a venv
("Install from the team's wheelhouse")."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from tests.core.wheelhouse import kit
from tests.gui.conftest import host
from tfwizard.core.building.run.events import Artifact, BuildResult, Finished
from tfwizard.core.wheelhouse.publish import publish
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
WHEEL = "tensorflow_cpu-2.21.0+cpu-cp311-cp311-linux_x86_64.whl"


def _cpu_build(tmp_path):
    """A CPU build record of TensorFlow 2.21.0 for Python 3.11 and the wheel it made."""
    wheel = kit.tf_wheel(tmp_path / "out")
    record = kit.build_record(tmp_path / "data", kit.recipe_file(tmp_path / "cpu.toml"), wheel)
    return record, wheel


@pytest.fixture
def house(tmp_path, monkeypatch):
    """An empty folder wheelhouse, named by TFWIZARD_WHEELHOUSE (as a team sets it)."""
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    monkeypatch.setenv("TFWIZARD_WHEELHOUSE", str(folder))
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    return folder


def test_the_build_page_publishes_the_wheel_it_made(qtbot, make_window, house, tmp_path):
    record, wheel = _cpu_build(tmp_path)

    class Build:
        def __init__(self, state):
            pass

        def cancel(self):
            pass

        async def events(self):
            yield Artifact("record", str(record))
            yield Artifact("wheel", str(wheel))
            yield Finished(BuildResult(record.name, "succeeded", str(record), wheel=str(wheel),
                                       message="wheel: ok"))

    window = make_window(jobs=Jobs(build=Build), host=host("no-gpu-server"))
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    assert not page.publish.isVisible()
    with qtbot.waitSignal(page.buildFinished, timeout=5000):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    assert page.publish.isVisible() and page.publish.button.text() == "Publish to wheelhouse"
    qtbot.mouseClick(page.publish.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Published" in page.publish.status.text()
                    or "Not published" in page.publish.status.text(), timeout=60000)
    assert f"Published {WHEEL}" in page.publish.status.text(), page.publish.status.text()
    assert (house / "tensorflow-cpu" / WHEEL).is_file()
    assert (record / "publish.json").is_file()


def test_the_build_page_offers_no_publish_without_a_wheelhouse_or_a_wheel(
        qtbot, make_window, house, monkeypatch):
    window = make_window(host=host("no-gpu-server"))
    row = window.wizard.build.publish
    row.offer(SimpleNamespace(ok=False, wheel="", record_dir="/r"))
    assert row.isHidden()
    monkeypatch.delenv("TFWIZARD_WHEELHOUSE")
    row.offer(SimpleNamespace(ok=True, wheel="/r/t.whl", record_dir="/r"))
    assert row.isHidden()


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the wheel is cp311")
def test_welcome_names_the_wheel_and_install_installs_it(qtbot, make_window, house, tmp_path):
    record, _wheel = _cpu_build(tmp_path)
    publish(str(record), str(house), {"HOME": str(tmp_path)}, tmp_path)
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    wizard.state.update({"backend.kind": "cpu", "python.version": "3.11"})
    box = wizard.welcome.advice
    qtbot.waitUntil(lambda: "serves" in box.house.text(), timeout=30000)
    assert f"The wheelhouse has a wheel that serves this machine: {WHEEL}" in box.house.text()
    assert "tfwizard install --wheelhouse" in box.house.text()

    venv = tmp_path / "venv"
    wizard.state.update({"install.venv": str(venv)})
    wizard.setStartId(int(PageId.INSTALL))
    wizard.restart()
    page = wizard.install
    assert page.house_edit.text() == str(house)  # the wheelhouse the environment names
    assert page.house_button.text() == "Install from the team's wheelhouse"
    qtbot.mouseClick(page.house_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None and not page.running, timeout=240000)
    assert page.result.ok, page.log.text.toPlainText()[-3000:]
    assert "RECORD and provenance checked" in page.log.text.toPlainText()
    show = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "tensorflow-cpu"],
                          capture_output=True, text=True, check=True).stdout
    assert "Version: 2.21.0+cpu" in show
    assert list((tmp_path / "data" / "installs").glob("*.json"))  # with its provenance
    wizard.setStartId(int(PageId.WELCOME))


def test_welcome_says_why_no_wheel_serves(qtbot, make_window, house, tmp_path):
    record, _wheel = _cpu_build(tmp_path)
    publish(str(record), str(house), {"HOME": str(tmp_path)}, tmp_path)
    window = make_window(host=host("no-gpu-server"))
    window.wizard.state.update({"backend.kind": "cpu", "python.version": "3.12"})
    box = window.wizard.welcome.advice
    qtbot.waitUntil(lambda: "No wheel of the wheelhouse serves" in box.house.text(), timeout=30000)
    assert WHEEL in box.house.text() and "cp311" in box.house.text()


def test_welcome_reads_the_wheelhouse_again_only_when_the_question_changes(
        qtbot, make_window, house, tmp_path, monkeypatch):
    from tfwizard.gui.widgets import wheelhouse

    record, _wheel = _cpu_build(tmp_path)
    publish(str(record), str(house), {"HOME": str(tmp_path)}, tmp_path)
    asked = []
    real = wheelhouse.advice_text
    monkeypatch.setattr(wheelhouse, "advice_text", lambda state: asked.append(1) or real(state))
    window = make_window(host=host("no-gpu-server"))
    state = window.wizard.state
    state.update({"backend.kind": "cpu", "python.version": "3.11"})
    box = window.wizard.welcome.advice
    qtbot.waitUntil(lambda: "serves this machine" in box.house.text(), timeout=30000)
    before = len(asked)
    for jobs in (2, 3, 4):  # edits that do not change the question
        state.update({"build.jobs": jobs})
    qtbot.wait(300)
    assert len(asked) == before and "serves this machine" in box.house.text()
    state.update({"python.version": "3.12"})  # another question: read again
    qtbot.waitUntil(lambda: "No wheel of the wheelhouse serves" in box.house.text(),
                    timeout=30000)
    assert len(asked) == before + 1
