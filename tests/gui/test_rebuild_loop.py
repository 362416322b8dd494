"""Issue 17's done-when, the GUI part: the researcher's loop from the pages against the real
engine. The Build page's Rebuild builds the TF-shaped fixture in its warm container, the
Install page puts it into a new venv ([and-cuda] from an offline folder), the Verify page's
panel passes; then one C++ file of the source folder is saved, "Rebuild on save" rebuilds
incrementally in the same container, and "Reinstall and verify" replaces only the wheel
and verifies again, where the edited library answers.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests import world
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.main_window import CLOSE_CANCEL
from tfwizard.gui.pages import PageId
from tfwizard.gui.pages.rebuild import warm_build_job

from .conftest import host

pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.qt_log_ignore("This plugin does not support")]

BUILD_MS = 540_000
INSTALL_MS = 180_000
VERIFY_MS = 180_000


@pytest.fixture
def engine():
    """The Docker client; the warm workspaces and cache volumes this test made are removed."""
    world.require_docker()
    world.ensure_images()
    import docker

    client = docker.from_env(timeout=300)
    made: list = []  # (workspace, volume prefix)
    yield client, made
    for space, prefix in made:
        world.remove_workspace(client, space)
        for vol in client.volumes.list(filters={"label": LABEL}):
            if vol.name.startswith(prefix):
                vol.remove(force=True)
    client.close()


def _version_of_library(python: Path) -> str:
    """What the installed fixture's C++ library says its version is (c_api.cc)."""
    return subprocess.run(
        [str(python), "-c", "from tensorflow._lib import lib; print(lib.tfw_version().decode())"],
        capture_output=True, text=True, check=True, timeout=120).stdout.strip()


def _rows(verify) -> dict[str, str]:
    return {row.key: row.status for row in verify.panel.rows}


def _wait_build(qtbot, page, count: int, bar) -> None:
    from pytestqt.exceptions import TimeoutError as QtTimeout

    try:
        qtbot.waitUntil(lambda: bar.rebuilds == count and page.result is not None
                        and not page.running, timeout=BUILD_MS)
    except QtTimeout:
        page.log.flush_all()
        raise AssertionError(page.phase_label.text() + "\n"
                             + page.log.text.toPlainText()[-3000:]) from None
    assert page.result.status == "succeeded", (page.result.message + "\n"
                                                + page.log.text.toPlainText()[-3000:])


def test_edit_rebuild_reinstall_verify_from_the_pages(qtbot, make_window, engine, tmp_path,
                                                      monkeypatch):
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the fixture wheel is cp311")
    client, made = engine
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    source = world.copy_workspace(tmp_path)
    recipe = world.fixture_recipe(tmp_path / "loop.toml", workspace=source, prefix=prefix,
                                  name="gui-loop",  # a CPU recipe that asks for the extra
                                  extra='[install]\nextras = ["and-cuda"]\n')
    window = make_window(recipe=load_recipe(recipe), host=host("no-gpu-server"), jobs=Jobs(),
                         ask_close=lambda: CLOSE_CANCEL)
    wizard = window.wizard
    assert wizard.go_to(PageId.BUILD) == PageId.BUILD
    page, bar = wizard.build, wizard.build.rebuilder
    assert bar.factory is warm_build_job and bar.cold_reason() is None
    started: list = []

    def recording(state):
        job = warm_build_job(state)
        started.append(job)
        return job

    bar.factory = recording
    assert bar.rebuild_button.isEnabled(), (bar.rebuild_button.toolTip(), page.running)

    # -- the first build: Rebuild, in a new warm container --------------------------------
    t0 = time.monotonic()
    qtbot.mouseClick(bar.rebuild_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(started) == 1 or bool(page.result_label.text()),
                    timeout=10_000)
    assert len(started) == 1, page.result_label.text()
    made.append((started[0].workspace, prefix))
    _wait_build(qtbot, page, 1, bar)
    first_s = time.monotonic() - t0
    first = page.result
    container = client.containers.get(started[0].workspace.container_name)
    assert container.status == "running"  # kept for the next build
    assert "started (idle timeout" in page.log.text.toPlainText()
    assert bar.reinstall_button.isEnabled()

    # -- Install into a new venv, then Verify: the panel passes ------------------------------
    links = tmp_path / "links"
    world.build_cuda_stub_wheel(links)
    venv = tmp_path / "venv"
    wizard.next()
    assert wizard.currentId() == PageId.TEST  # optional: Next goes on without running tests
    wizard.next()
    assert wizard.currentId() == PageId.INSTALL
    install = wizard.install
    install.venv_edit.clear()
    qtbot.keyClicks(install.venv_edit, str(venv))
    qtbot.keyClicks(install.links_edit, str(links))
    qtbot.mouseClick(install.install_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: install.result is not None and not install.running,
                    timeout=INSTALL_MS)
    assert install.result.ok, install.log.text.toPlainText()
    python = venv / "bin" / "python"
    assert _version_of_library(python) == "2.18.0-tfwizard-fixture"
    wizard.next()
    verify = wizard.verify
    qtbot.mouseClick(verify.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: verify.report is not None and not verify.running,
                    timeout=VERIFY_MS)
    report1 = verify.report
    rows = _rows(verify)
    assert verify.panel.verdict.text().startswith("TensorFlow 2.18.0 works here: every check passed"), rows
    assert rows["import"] == "pass" and "fail" not in rows.values(), rows
    assert any(key.startswith("op:") and "CPU" in key for key in rows), rows

    # -- edit one C++ file with Rebuild on save on: an incremental rebuild ---------------------
    wizard.back()
    wizard.back()
    wizard.back()  # Verify -> Install -> Test -> Build
    assert wizard.currentPage() is page
    bar.watcher._timer.setInterval(1000)
    bar.on_save.setChecked(True)
    marker = f"2.18.0-edited-{uuid.uuid4().hex[:6]}"
    c_api = source / "tensorflow" / "core" / "c" / "c_api.cc"
    text = c_api.read_text("utf-8")
    assert "return TFW_VERSION_STRING;" in text
    t0 = time.monotonic()
    c_api.write_text(text.replace("return TFW_VERSION_STRING;", f'return "{marker}";'),
                     "utf-8")
    qtbot.waitUntil(lambda: len(started) == 2, timeout=15_000)  # the watcher started it
    _wait_build(qtbot, page, 2, bar)
    rebuild_s = time.monotonic() - t0
    second = page.result
    log = page.log.text.toPlainText()
    assert "reused (Bazel server and caches warm)" in log, log[-3000:]
    assert client.containers.get(started[1].workspace.container_name).id == container.id
    assert second.actions is not None and first.actions is not None
    assert second.actions < first.actions, (first.actions, second.actions)
    assert second.wheel != first.wheel and Path(second.wheel or "").is_file()

    # the build's own symlinks and configure's output in the folder started nothing more
    qtbot.wait(2500)
    assert len(started) == 2
    bar.on_save.setChecked(False)

    # -- Reinstall and verify: only the wheel, then the panel again ------------------------
    t0 = time.monotonic()
    qtbot.mouseClick(bar.reinstall_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: verify.report is not report1 and verify.report is not None
                    and not verify.running, timeout=INSTALL_MS + VERIFY_MS)
    loop_s = time.monotonic() - t0
    assert wizard.currentPage() is verify
    assert install.result.ok, install.log.text.toPlainText()
    install_log = install.log.text.toPlainText()
    assert "reinstalling only the TensorFlow wheel" in install_log, install_log
    pip_line = [ln for ln in install_log.splitlines() if ln.startswith("pip install ")]
    assert pip_line and pip_line[0].endswith(".whl"), install_log[:2000]  # no [and-cuda]
    assert _version_of_library(python) == marker  # the edited library is the installed one
    rows = _rows(verify)
    assert verify.panel.verdict.text().startswith("TensorFlow 2.18.0 works here: every check passed"), rows
    assert "fail" not in rows.values(), rows
    assert bar.status.text() == verify.panel.verdict.text()  # the verdict, said on Build too
    print(f"first build {first_s:.0f} s ({first.actions} actions), rebuild on save "
          f"{rebuild_s:.1f} s ({second.actions} actions), reinstall and verify {loop_s:.1f} s")
