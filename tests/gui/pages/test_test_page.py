"""The Test page against the real engine and the fixture workspace's tests (issue 23): live
counts while `bazel test` runs, the tree by package with coloured status, duration and
attempts, a failing test's own test.log on a click, "Run again" with only the failed test,
"Copy PR summary" naming every test and its result, Cancel, and an empty targets field
running the tests that depend on an edited file (the workspace is a git checkout).

Tests are slowed down with Bazel's own `--run_under` (a `sleep` before the test binary).
"""

from __future__ import annotations

import subprocess
import uuid

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from tests import world
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe
from tfwizard.core.testloop.job import RecipeTestJob
from tfwizard.gui.pages import PageId
from tfwizard.gui.pages.test import COL_ATTEMPTS, COL_DURATION, COL_STATUS, COLOURS

pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.qt_log_ignore("This plugin does not support")]

PASSING = "//tensorflow/core:reduction_ops_test"
FLAKY = "//tensorflow/core:random_uniform_op_test"
FAILING = "//tensorflow/python/kernel_tests:matmul_op_test"


@pytest.fixture(scope="module")
def fixture_recipe(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("testpage")
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    workspace = world.copy_workspace(base)
    (workspace / ".gitignore").write_text("/bazel-*\n.tf_configure.bazelrc\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "fixture"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                        *args], cwd=workspace, check=True, capture_output=True)
    path = world.fixture_recipe(base / "r.toml", workspace=workspace, prefix=prefix,
                                bazel_flags=[f"--test_env=TFW_FIXTURE_FAIL={FAILING}"])
    yield path
    client = docker.from_env(timeout=300)
    plan = make_plan(load_recipe(path), recipe_dir=path.parent)
    world.remove_workspace(client, warm.workspace_for(plan, str(path.resolve())))
    for vol in client.volumes.list(filters={"label": LABEL}):
        if vol.name.startswith(prefix):
            vol.remove(force=True)
    client.close()


def _page(make_window, fixture_recipe, tmp_path, sleep_s: int):
    recipe = load_recipe(fixture_recipe)
    window = make_window(recipe=recipe)
    wizard = window.wizard
    wizard.setStartId(int(PageId.TEST))
    wizard.restart()
    page = wizard.test
    assert wizard.currentPage() is page
    started: list[list[str]] = []
    run_under = f"--run_under=/bin/sh -c 'sleep {sleep_s}; exec \"$0\" \"$@\"'"

    def factory(state, targets):
        started.append(list(targets))
        return RecipeTestJob(state.recipe, str(fixture_recipe.resolve()), targets,
                             record_dir=tmp_path / "tests" / f"run{len(started)}",
                             flags=[run_under])

    page.factory = factory
    return page, started


def test_live_tree_log_rerun_and_summary(qtbot, make_window, fixture_recipe, tmp_path):
    page, started = _page(make_window, fixture_recipe, tmp_path, sleep_s=3)
    page.targets_edit.setText(f"{PASSING} {FLAKY} {FAILING}")
    seen: list[str] = []
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.running, timeout=5000)
    assert not page.isComplete() and page.cancel_button.isEnabled()
    while page.running:  # what the page says while Bazel runs
        seen.append(page.status_label.text())
        qtbot.wait(100)
        assert len(seen) < 6000, "the run did not end"
    assert any(text.startswith("0 of 3 tests") for text in seen), set(seen)
    assert page.result is not None and page.result.status == "failed"
    assert page.isComplete()
    # the tree: packages, then their tests, status coloured, duration and attempts
    assert {page.tree.topLevelItem(i).text(0) for i in range(page.tree.topLevelItemCount())
            } == {"//tensorflow/core", "//tensorflow/python/kernel_tests"}
    failing, flaky, passing = (page.item_for(x) for x in (FAILING, FLAKY, PASSING))
    assert failing.text(0) == "matmul_op_test" and failing.text(COL_STATUS) == "FAILED"
    assert failing.foreground(COL_STATUS).color().name() == COLOURS["FAILED"]
    assert passing.foreground(COL_STATUS).color().name() == COLOURS["PASSED"]
    assert flaky.text(COL_STATUS) == "FLAKY" and flaky.text(COL_ATTEMPTS) == "2"
    assert failing.text(COL_DURATION).endswith(" s")
    # a click on the failing test shows its own test.log, not Bazel's whole log
    page.tree.itemClicked.emit(failing, 0)
    own = page.test_log.toPlainText()
    assert "AssertionError" in own and PASSING not in own
    page.tree.itemClicked.emit(passing, 0)
    assert "only a failing test's own log is kept" in page.test_log.toPlainText()
    # the PR summary names every test with its result
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    summary = QGuiApplication.clipboard().text()
    assert summary == page.summary
    for label, status in ((PASSING, "PASSED"), (FLAKY, "FLAKY"), (FAILING, "FAILED")):
        line = next(ln for ln in summary.splitlines() if f"`{label}`" in ln)
        assert status in line, line
    # Run again: only the failed test
    assert page.rerun_button.isEnabled()
    qtbot.mouseClick(page.rerun_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(started) == 2 and not page.running, timeout=600000)
    assert started[-1] == [FAILING]
    assert [t.label for t in page.result.run.tests] == [FAILING]
    assert page.item_for(PASSING) is None and page.item_for(FAILING) is not None


def test_cancel_stops_the_run(qtbot, make_window, fixture_recipe, tmp_path):
    page, _started = _page(make_window, fixture_recipe, tmp_path, sleep_s=120)
    page.targets_edit.setText(PASSING)
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.status_label.text().startswith("0 of 1 tests"),
                    timeout=600000)
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running, timeout=20000)
    assert page.status_label.text() == "Cancelled"
    assert page.result is not None and page.result.status == "cancelled"
    assert page.run_button.isEnabled() and not page.rerun_button.isEnabled()


def test_empty_targets_run_the_tests_of_the_change(qtbot, make_window, fixture_recipe,
                                                    tmp_path):
    edited = fixture_recipe.parent / "tf_workspace/tensorflow/core/kernels/reduce_sum_op.cc"
    edited.write_text(edited.read_text() + "// a change\n")
    try:
        page, started = _page(make_window, fixture_recipe, tmp_path, sleep_s=0)
        page.targets_edit.setText("")
        qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(started) and not page.running, timeout=600000)
        assert started == [[]]
        # the two tests that depend on the file; its benchmark test is left out by its tag
        assert page.result is not None
        assert {t.label for t in page.result.run.tests} == {
            PASSING, "//tensorflow/python/kernel_tests:reduction_ops_test"}
        qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
        assert "tensorflow/core/kernels/reduce_sum_op.cc" in page.summary
    finally:
        subprocess.run(["git", "checkout", "--", "."], cwd=edited.parents[3], check=True)
