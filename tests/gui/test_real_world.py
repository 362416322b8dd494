"""The Build, Install and Verify pages against the real world (issue 7).

No fake event sources here: the Build page runs the core's BuildRunner on the TF-shaped
fixture workspace in the offline Bazel test image on the real Docker engine, the Install
page runs pip into a fresh venv (the [and-cuda] extra resolved offline from a folder), and
the Verify page probes the installed fixture and the real tensorflow-cpu in <repo>/.venv-tf.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from tests import world
from tfwizard.core.building.run.events import LogLines, PhaseChanged
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe
from tfwizard.gui import jobs
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.main_window import CLOSE_CANCEL
from tfwizard.gui.pages import PageId

from .conftest import host, open_file_dialog, type_file_name

pytestmark = [pytest.mark.slow, pytest.mark.qt_log_ignore("This plugin does not support")]

BUILD_TIMEOUT_MS = 300_000
INSTALL_TIMEOUT_MS = 180_000
VERIFY_TIMEOUT_MS = 180_000


def _write_recipe(path: Path, *, workspace: Path, prefix: str,
                  bazel_flags: tuple[str, ...] = (), install: str = "") -> Path:
    return world.fixture_recipe(path, workspace=workspace, prefix=prefix, name="gui-fixture",
                                bazel_flags=bazel_flags, extra=install)


@pytest.fixture(scope="module")
def docker_world(tmp_path_factory):
    """Docker and the test images, a cache-volume prefix of our own, removed at the end."""
    world.require_docker()
    world.ensure_images()
    import docker

    client = docker.from_env(timeout=120)
    ns = SimpleNamespace(prefix=f"tfwizard-test-{uuid.uuid4().hex[:8]}", client=client,
                         base=tmp_path_factory.mktemp("gui-real"))
    yield ns
    world.remove_prefixed_volumes(client, ns.prefix)  # the warm workspaces Start made too
    client.close()


def _leftovers(client, build_id: str) -> list:
    flt = {"label": f"{LABEL}.build={build_id}"}
    return client.containers.list(all=True, filters=flt) + client.volumes.list(filters=flt)


def _real_build_window(make_window, recipe_path: Path):
    """The wizard on the Build page with the real build job (recorded for its build id)."""
    started: list = []

    def factory(state):
        # cold: these tests hold that a build and a cancel leave no container or volume;
        # Start's warm default has its own test (test_warm_start.py)
        job = jobs.default_build_job(state, warm=False)
        started.append(job)
        return job

    window = make_window(recipe=load_recipe(recipe_path), host=host("no-gpu-server"),
                         jobs=Jobs(build=factory), ask_close=lambda: CLOSE_CANCEL)
    assert window.wizard.go_to(PageId.BUILD) == PageId.BUILD
    page = window.wizard.build
    seen: list = []  # (event, phase label text after it)
    show = page.show_event

    def recording(event):
        show(event)
        seen.append((event, page.phase_label.text()))

    page.show_event = recording
    return window, page, started, seen


@pytest.mark.docker
def test_build_install_verify_the_fixture_from_the_pages(qtbot, make_window, docker_world,
                                                         tmp_path, monkeypatch):
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the fixture wheel is cp311")
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    # a CPU recipe installs no [and-cuda] unless it says so: this one does, so that pip
    # resolves the extra from the offline folder
    recipe = _write_recipe(tmp_path / "fixture.toml", workspace=world.copy_workspace(tmp_path),
                           prefix=docker_world.prefix,
                           install='[install]\nextras = ["and-cuda"]\n')
    window, page, started, seen = _real_build_window(make_window, recipe)
    wizard = window.wizard

    # -- Build ------------------------------------------------------------------------------
    t0 = time.monotonic()
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None and not page.running,
                    timeout=BUILD_TIMEOUT_MS)
    build_s = time.monotonic() - t0
    result = page.result
    assert result.status == "succeeded", result.message + "\n" + page.log.text.toPlainText()
    assert page.phase_label.text() == "Build succeeded"
    assert page.progress.maximum() == result.actions > 1
    assert page.progress.value() == page.progress.maximum()
    # the last phase shown before "Build succeeded" is the runner's last one: the wheel copy
    phases = [text for _, text in seen if text.startswith("Phase: ")]
    # a late Progress event may relabel it "Phase: package" after the copy step's label
    assert phases[0] == "Phase: prepare" and phases[-1].startswith("Phase: package"), phases
    assert [e.phase for e, _ in seen if isinstance(e, PhaseChanged)][-1] == "package"
    assert any(line.startswith("INFO: Build completed successfully")
               for line in page.log.text.toPlainText().splitlines())
    wheel = Path(wizard.state.wheel or "")
    assert wheel.is_file() and wheel.name.startswith("tensorflow_cpu-") and wheel.suffix == ".whl"
    assert _leftovers(docker_world.client, started[0].build_id) == []

    # -- Install: a new venv, [and-cuda] from an offline folder ------------------------------
    links = tmp_path / "links"
    world.build_cuda_stub_wheel(links)
    venv = tmp_path / "venv"
    wizard.next()
    assert wizard.currentId() == PageId.TEST  # optional: Next goes on without running tests
    wizard.next()
    assert wizard.currentId() == PageId.INSTALL
    install = wizard.install
    assert install.wheel_edit.text() == str(wheel)
    assert "and-cuda" in wizard.state.recipe.install.extras
    install.venv_edit.clear()
    qtbot.keyClicks(install.venv_edit, str(venv))
    qtbot.keyClicks(install.links_edit, str(links))
    assert wizard.state.install_find_links == str(links)
    t0 = time.monotonic()
    qtbot.mouseClick(install.install_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: install.result is not None and not install.running,
                    timeout=INSTALL_TIMEOUT_MS)
    install_s = time.monotonic() - t0
    assert install.result.ok, install.status.text() + "\n" + install.log.text.toPlainText()
    python = venv / "bin" / "python"
    assert wizard.state.installed_python == str(python)
    freeze = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True,
                            text=True, check=True, timeout=120).stdout
    assert "tfwizard-fixture-cuda-stub==1.0" in freeze  # [and-cuda] resolved offline

    # -- Verify: the report of that venv ----------------------------------------------------
    version = subprocess.run([str(python), "-c", "import tensorflow as t; print(t.__version__)"],
                             capture_output=True, text=True, check=True,
                             timeout=120).stdout.strip()
    wizard.next()
    assert wizard.currentId() == PageId.VERIFY
    verify = wizard.verify
    assert verify.python_edit.text() == str(python)
    qtbot.mouseClick(verify.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: verify.report is not None, timeout=VERIFY_TIMEOUT_MS)
    text = verify.report_view.toPlainText()
    assert f"TensorFlow     {version}" in text, text
    assert "Devices        /physical_device:CPU:0" in text, text
    assert "reduce_sum     /device:CPU:0: ok" in text
    # said once, by the panel's verdict (the status beside the buttons stays empty)
    assert verify.status.text() == "", text
    assert verify.panel.verdict.text().startswith(f"TensorFlow {version} works here: every "
                                                  "check passed"), text
    print(f"build {build_s:.0f} s, install {install_s:.0f} s")


@pytest.mark.docker
def test_cancel_from_the_build_page_stops_and_leaves_nothing(qtbot, make_window, docker_world,
                                                             tmp_path, monkeypatch):
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    recipe = _write_recipe(tmp_path / "sleep.toml", workspace=world.copy_workspace(tmp_path),
                           prefix=docker_world.prefix,
                           bazel_flags=("--action_env=TFW_FIXTURE_SLEEP=30",))
    window, page, started, seen = _real_build_window(make_window, recipe)

    def first_action_line() -> bool:
        return any(isinstance(e, LogLines) and any(line.startswith("[") for line in e.lines)
                   for e, _ in seen)

    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.running or page.result is not None, timeout=10_000)
    qtbot.waitUntil(lambda: first_action_line() or not page.running, timeout=BUILD_TIMEOUT_MS)
    assert page.running, page.result_label.text()
    assert page.cancel_button.isEnabled()
    t0 = time.monotonic()
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.phase_label.text() == "Build cancelled", timeout=10_000)
    took = time.monotonic() - t0
    assert took < 10
    qtbot.waitUntil(lambda: not page.running, timeout=10_000)
    assert page.result.status == "cancelled" and page.result.wheel is None
    assert window.wizard.state.wheel is None
    assert _leftovers(docker_world.client, started[0].build_id) == []
    print(f"cancelled in {took:.1f} s")


def test_verify_page_reports_the_real_tensorflow_cpu(qtbot, make_window, tf_python):
    version = subprocess.run(
        [str(tf_python), "-c", "import importlib.metadata as m; print(m.version('tensorflow-cpu'))"],
        capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    wizard.setStartId(int(PageId.VERIFY))
    wizard.restart()
    try:
        page = wizard.verify
        page.python_edit.setText(str(tf_python))
        t0 = time.monotonic()
        qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.report is not None, timeout=VERIFY_TIMEOUT_MS)
        took = time.monotonic() - t0
        text = page.report_view.toPlainText()
        assert f"TensorFlow     {version}" in text, text
        assert "Devices        /physical_device:CPU:0" in text, text
        assert "reduce_sum     /device:CPU:0: ok" in text, text
        assert page.status.text() == "" and "every check passed" in page.panel.verdict.text(), \
            text
        print(f"verified tensorflow-cpu {version} in {took:.1f} s")
    finally:
        wizard.setStartId(int(PageId.WELCOME))


@pytest.mark.docker
def test_in_chinese_a_failed_fixture_build_gives_a_bundle(qtbot, make_window, docker_world,
                                                          tmp_path, monkeypatch):
    """Issue 10's done-when, the GUI part: the wizard switched to Chinese from its Language
    menu, a real fixture build that fails to compile, the diagnosis shown in Chinese, and
    the diagnostics bundle saved from the Build page's button."""
    import json

    from tests.i18n_scan import unmarked
    from tfwizard.core import i18n
    from tfwizard.core.building.report.bundle import read_bundle
    from tfwizard.gui import i18n as gui_i18n

    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("TFWIZARD_LANG")  # the menu decides, as a user would
    monkeypatch.setattr(gui_i18n, "save_language", lambda code: None)  # keep user settings
    recipe = _write_recipe(tmp_path / "break.toml", workspace=world.copy_workspace(tmp_path),
                           prefix=docker_world.prefix,
                           bazel_flags=("--copt=-DTFW_FIXTURE_BREAK",))
    first = make_window(recipe=load_recipe(recipe), host=host("no-gpu-server"),
                        jobs=Jobs(build=jobs.default_build_job), ask_close=lambda: CLOSE_CANCEL)
    try:
        first.language_actions["zh_CN"].trigger()
        assert i18n.language() == "zh_CN"
        wizard = first.wizard
        assert wizard.go_to(PageId.BUILD) == PageId.BUILD
        page = wizard.build
        assert page.start_button.text() != "Start build"
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.result is not None and not page.running,
                        timeout=BUILD_TIMEOUT_MS)
        assert page.result.status == "failed"
        assert page.phase_label.text() == "构建失败"
        rows = {row.finding.id: row for row in page.diagnoses}
        assert "compile-error" in rows, list(rows)
        shown = rows["compile-error"].findChildren(type(page.phase_label))
        text = "\n".join(label.text() for label in shown)
        assert "原因" in text and "下一步" in text, text
        assert sum("\u4e00" <= ch <= "\u9fff" for ch in text) > 20, text  # Chinese, not English
        # only the generic compile-error: the compiler's own line to read, not recognised
        assert page.unrecognised is not None
        assert page.unrecognised.heading.text().startswith("未识别")
        assert "error: 'MatMulKernel' was not declared" in page.unrecognised.text.text()

        out = tmp_path / "诊断.tar.gz"
        qtbot.mouseClick(page.bundle.button, Qt.MouseButton.LeftButton)
        type_file_name(open_file_dialog(qtbot), out)
        qtbot.waitUntil(lambda: page.bundle.saved is not None, timeout=60_000)
        assert "已保存" in page.bundle.status.text() or str(out) in page.bundle.status.text()
        files = read_bundle(out)
        assert "compile-error" in files["diagnosis.txt"] and "原因" in files["diagnosis.txt"]
        assert "compile-error: A C++ file failed to compile" in files["diagnosis.en.txt"]
        assert "matmul_op.cc" in files["log-tail.txt"]
        assert json.loads(files["host.json"])["os"]["system"] == "linux"
        # and nothing on the page is left in English prose (Bazel's own text aside)
        from tests.gui.pages.test_i18n_pages import visible_texts

        bazel_says = page.action_label.text()
        # the unrecognised card quotes the log and makes a query of its words: log text
        card = page.unrecognised
        quoted = {line for line in card.text.text().splitlines() if line.startswith("> ")}
        bad = [line for t in visible_texts(page) if t != bazel_says
               for line in unmarked(t, allow=(card.unknown.query,)) if line not in quoted]
        assert not bad, bad
    finally:
        gui_i18n.install("en")
