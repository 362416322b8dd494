"""The Build page's Rebuild, Rebuild on save and Reinstall and verify (issue 17), without
Docker: the watcher over a real folder on this disk, the builds from FakeBuild.
tests/gui/test_rebuild_loop.py runs the same loop for real."""

from __future__ import annotations

import os
import uuid

import pytest
from PySide6.QtCore import Qt

from tests import world
from tfwizard.core.recipe import load_recipe
from tfwizard.gui import jobs
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.main_window import CLOSE_CANCEL
from tfwizard.gui.pages import PageId
from tfwizard.gui.pages.rebuild import warm_build_job
from tfwizard.gui.widgets.source_watch import SourceWatcher, ignored

from ..conftest import host
from .test_runpages import FakeBuild

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 5000


def _quiet(qtbot, seconds: float) -> None:
    """Let the event loop run for `seconds` (changes that must not signal)."""
    qtbot.wait(int(seconds * 1000))


def test_ignored_names():
    assert all(ignored(n) for n in ("bazel-out", "bazel-bin", "bazel-tf_workspace", ".git",
                                    "matmul_op.cc~", ".matmul_op.cc.swp", ".#matmul_op.cc",
                                    "#matmul_op.cc#", "4913", ".tf_configure.bazelrc",
                                    "__pycache__"))
    assert not any(ignored(n) for n in ("matmul_op.cc", "BUILD", ".bazelrc", "configure.py",
                                        "bazel.rc", "WORKSPACE"))


def test_the_watcher_signals_once_per_save_and_not_for_build_or_editor_files(qtbot, tmp_path):
    src = tmp_path / "src"
    (src / "tensorflow" / "core").mkdir(parents=True)
    kernel = src / "tensorflow" / "core" / "kernel.cc"
    kernel.write_text("int f() { return 1; }\n")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    watch = SourceWatcher(debounce_ms=300)
    saved: list[str] = []
    watch.saved.connect(saved.append)
    assert watch.start(src) == 4  # src, tensorflow, core, kernel.cc (.git not)

    # three quick writes: one signal, naming the file
    for n in range(3):
        kernel.write_text(f"int f() {{ return {n}; }}\n")
        qtbot.wait(50)
    qtbot.waitUntil(lambda: len(saved) == 1, timeout=WAIT)
    _quiet(qtbot, 0.8)
    assert saved == [str(kernel)]

    # what a build and an editor write on their own: nothing
    os.symlink("/nonexistent/bazel-out", src / "bazel-out")
    (src / "tensorflow" / "core" / ".kernel.cc.swp").write_text("swap")
    (src / "tensorflow" / "core" / "kernel.cc~").write_text("backup")
    (src / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    (src / ".tf_configure.bazelrc").write_text("build --action_env=X=1\n")
    _quiet(qtbot, 1.2)
    assert saved == [str(kernel)]

    # a save by rename (write elsewhere, move over): seen, and the new file is watched
    tmp = src / "tensorflow" / "core" / "kernel.cc.tmp"
    tmp.write_text("int f() { return 7; }\n")
    os.replace(tmp, kernel)
    qtbot.waitUntil(lambda: len(saved) == 2, timeout=WAIT)
    _quiet(qtbot, 0.5)
    kernel.write_text("int f() { return 8; }\n")
    qtbot.waitUntil(lambda: len(saved) == 3, timeout=WAIT)

    # a new file in a new folder is a change too
    (src / "tensorflow" / "new").mkdir()
    qtbot.waitUntil(lambda: len(saved) == 4, timeout=WAIT)
    watch.stop()
    kernel.write_text("int f() { return 9; }\n")
    _quiet(qtbot, 0.8)
    assert len(saved) == 4 and not watch.active


@pytest.fixture
def fixture_window(make_window, tmp_path):
    """The wizard on the Build page for the fixture recipe (a source folder), fake builds."""
    made: list[FakeBuild] = []

    def factory(state):
        job = FakeBuild(state)
        made.append(job)
        return job

    workspace = world.copy_workspace(tmp_path)
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=workspace,
                                  prefix=f"tfwizard-test-{uuid.uuid4().hex[:8]}")
    window = make_window(recipe=load_recipe(recipe), host=host("no-gpu-server"),
                         jobs=Jobs(build=factory), ask_close=lambda: CLOSE_CANCEL)
    assert window.wizard.go_to(PageId.BUILD) == PageId.BUILD
    return window, made, workspace


def test_rebuild_on_save_starts_one_rebuild_per_save(qtbot, fixture_window):
    window, made, workspace = fixture_window
    bar = window.wizard.build.rebuilder
    bar.watcher._timer.setInterval(300)
    assert bar.rebuild_button.isEnabled() and bar.on_save.isEnabled()
    assert not bar.reinstall_button.isEnabled()  # no wheel yet
    bar.on_save.setChecked(True)
    assert bar.watcher.active and bar.watcher.watched > 50
    assert str(workspace) in bar.status.text()
    kernel = workspace / "tensorflow" / "core" / "kernels" / "matmul_op.cc"
    kernel.write_text(kernel.read_text() + "// edited\n")
    qtbot.waitUntil(lambda: len(made) == 1 and not window.wizard.build.running, timeout=WAIT)
    assert bar.rebuilds == 1
    assert window.wizard.build.result.ok and bar.reinstall_button.isEnabled()
    # Bazel's links in the source folder (a build makes them) start nothing
    os.symlink("/nonexistent", workspace / "bazel-bin")
    _quiet(qtbot, 1.0)
    assert len(made) == 1
    bar.on_save.setChecked(False)
    kernel.write_text(kernel.read_text() + "// again\n")
    _quiet(qtbot, 1.0)
    assert len(made) == 1 and not bar.watcher.active


def test_a_save_during_a_build_rebuilds_after_it(qtbot, fixture_window):
    window, made, workspace = fixture_window
    page = window.wizard.build
    bar = page.rebuilder
    made_slow: list[FakeBuild] = []

    def slow(state):
        job = FakeBuild(state, wait_for_cancel=not made_slow)  # the first one waits
        made_slow.append(job)
        return job

    bar.factory = slow
    qtbot.mouseClick(bar.rebuild_button, Qt.MouseButton.LeftButton)
    # the page runs before its job exists (the plan is made first, in a thread)
    qtbot.waitUntil(lambda: page.running and bool(made_slow), timeout=WAIT)
    assert not bar.rebuild_button.isEnabled()
    bar._saved(str(workspace / "configure.py"))  # as the watcher says it
    bar.on_save.setChecked(True)
    bar._saved(str(workspace / "configure.py"))
    assert bar.pending and "follows" in bar.status.text()
    made_slow[0].cancel()
    qtbot.waitUntil(lambda: len(made_slow) == 2 and not page.running, timeout=WAIT)
    assert page.result.ok and not bar.pending and bar.rebuilds == 2


def test_the_real_rebuild_job_is_the_warm_runner(make_window, tmp_path):
    from tfwizard.core.building.warm.run import WarmRunner

    workspace = world.copy_workspace(tmp_path)
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=workspace, prefix="tfwizard-x")
    window = make_window(recipe=load_recipe(recipe), host=host("no-gpu-server"))
    page = window.wizard.build
    assert page.factory is jobs.default_build_job
    assert page.start_button.isEnabled()
    assert page.rebuilder.factory is warm_build_job
    assert page.rebuilder.cold_reason() is None
    job = page.rebuilder.factory(window.wizard.state)
    assert isinstance(job, WarmRunner)
    assert job.workspace.ref == str(workspace)  # keyed by the source folder
    # the same workspace as `tfwizard build r.toml` (keyed by the recipe file's path)
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.warm import container as warm

    cli_plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    assert warm.workspace_for(cli_plan, str(recipe.resolve())).key == job.workspace.key
    # Start builds warm too, through the same session call as `tfwizard build`
    start = jobs.default_build_job(window.wizard.state)
    assert isinstance(start, WarmRunner) and start.workspace.key == job.workspace.key


def test_without_a_source_folder_rebuild_is_off_and_a_fix_rebuilds_cold(qtbot, make_window):
    from .test_runpages import build_window

    window, made = build_window(make_window, fail=True)
    bar = window.wizard.build.rebuilder
    assert not bar.rebuild_button.isEnabled() and not bar.on_save.isEnabled()
    assert "source_dir" in bar.rebuild_button.toolTip()


def test_apply_fix_and_rebuild_takes_the_rebuild_path(qtbot, fixture_window):
    window, made, workspace = fixture_window
    page = window.wizard.build
    bar = page.rebuilder
    page.factory = lambda state: FakeBuild(state, fail=True, fix={"build.jobs": 1})  # cold
    warm: list[FakeBuild] = []
    bar.factory = lambda state: warm.append(FakeBuild(state)) or warm[-1]
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(page.diagnoses) == 1 and not page.running, timeout=WAIT)
    assert not warm and not bar.reinstall_button.isEnabled()  # failed: nothing to install
    qtbot.mouseClick(page.diagnoses[0].fix_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(warm) == 1 and not page.running, timeout=WAIT)
    assert bar.rebuilds == 1 and page.result.ok
    assert window.wizard.state.recipe.build.jobs == 1  # the fix is in the recipe
    assert bar.reinstall_button.isEnabled()
