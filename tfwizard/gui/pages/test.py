"""The Test page (after Build): `bazel test` in the recipe's warm build container, live, as a
tree of tests by package with coloured status, duration and attempts; clicking a test shows
its own test.log; "Run again" re-runs only the failed tests; "Copy PR summary" puts the
run's Markdown summary (core/testloop/summary.py) on the clipboard."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
)
from qasync import asyncSlot

from tfwizard.core.errors import TfWizardError

from ..consent import confirm_secrets
from ..i18n import tr
from ..state import WizardState
from ..widgets.logview import LogView
from .base import RecipePage, split_words

if TYPE_CHECKING:
    from tfwizard.core.testloop.job import RecipeTestJob

#: (state, targets) -> a test job
TestFactory = Callable[[WizardState, Sequence[str]], "RecipeTestJob"]
#: status -> colour of its text in the tree
COLOURS = {"PASSED": "#1b7f3b", "FLAKY": "#b36b00", "FAILED": "#b00020",
           "TIMEOUT": "#b00020", "INCOMPLETE": "#b00020"}
#: the tree's columns
COL_NAME, COL_STATUS, COL_DURATION, COL_ATTEMPTS = range(4)


def default_test_job(state: WizardState, targets: Sequence[str]) -> RecipeTestJob:
    """A RecipeTestJob for the state's recipe, its record in <data>/tests/<id>."""
    from tfwizard.core.building.run.record import new_build_id
    from tfwizard.core.paths import data_dir
    from tfwizard.core.testloop.job import RecipeTestJob

    recipe = state.recipe
    recipe_id = str(recipe.path.resolve()) if recipe.path else f"gui:{recipe.name}"
    return RecipeTestJob(recipe, recipe_id, targets,
                         record_dir=data_dir() / "tests" / new_build_id())


class TestPage(RecipePage):
    """Test: run the change's tests, see each one's result and log, copy a PR summary."""

    keys = None
    show_findings = False

    testsFinished = Signal(object)  # the TestJobResult, or None

    def __init__(self, state: WizardState, factory: TestFactory | None = None) -> None:
        super().__init__(state, tr("Test"), tr("Run TensorFlow's tests of your change with "
                                               "bazel test, in the build's warm container "
                                               "(optional: Next skips it)."))
        self.factory = factory or default_test_job
        self.job: RecipeTestJob | None = None
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.summary = ""
        row = QHBoxLayout()
        self.targets_edit = QLineEdit(self.content)
        self.targets_edit.setObjectName("test-targets")
        self.targets_edit.setPlaceholderText(tr("test targets, e.g. //tensorflow/core:all; "
                                                 "empty: the tests your change affects"))
        row.addWidget(self.targets_edit, 1)
        self.run_button = self._button(tr("Run tests"), "run-tests", self.run_tests, row)
        self.cancel_button = self._button(tr("Cancel"), "cancel-tests", self.cancel, row)
        self.rerun_button = self._button(tr("Run again (failed only)"), "rerun-failed",
                                         self.rerun_failed, row)
        self.copy_button = self._button(tr("Copy PR summary"), "copy-summary",
                                        self.copy_summary, row)
        self.body.addLayout(row)
        self.status_label = QLabel(tr("Not started"), self.content)
        self.status_label.setObjectName("test-status")
        self.body.addWidget(self.status_label)
        self.progress = QProgressBar(self.content)
        self.progress.setObjectName("test-progress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.body.addWidget(self.progress)
        split = QSplitter(Qt.Orientation.Vertical, self.content)
        self.tree = QTreeWidget(split)
        self.tree.setObjectName("test-tree")
        self.tree.setHeaderLabels([tr("Test"), tr("Status"), tr("Duration"), tr("Attempts")])
        self.tree.itemClicked.connect(self.show_test_log)
        self.rows: dict[str, QTreeWidgetItem] = {}  # by test label
        self.packages: dict[str, QTreeWidgetItem] = {}  # by package
        self.test_log = QPlainTextEdit(split)
        self.test_log.setObjectName("test-log")
        self.test_log.setReadOnly(True)
        self.log = LogView(split)
        self.body.addWidget(split, 1)
        self._set_buttons(False)

    def _button(self, text: str, name: str, slot: Any, row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text, self.content)
        button.setObjectName(name)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    @property
    def running(self) -> bool:
        """A test run is under way."""
        return self.task is not None and not self.task.done()

    def isComplete(self) -> bool:
        """Qt: Next whenever no run is under way (testing is optional)."""
        return not self.running

    def _set_buttons(self, running: bool) -> None:
        failed = bool(self.result is not None and self.result.run.failed)
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.rerun_button.setEnabled(not running and failed)
        self.copy_button.setEnabled(not running and self.result is not None)

    # -- running -------------------------------------------------------------------------
    def run_tests(self) -> None:
        """Run the targets in the field (empty: the tests of the change)."""
        self.start(split_words(self.targets_edit.text()))

    def rerun_failed(self) -> None:
        """Run only the tests that did not pass last time."""
        if self.result is not None and self.result.run.failed:
            self.start([t.label for t in self.result.run.failed])

    @asyncSlot()
    async def start(self, targets: Sequence[str]) -> None:
        """Run `targets` and show the events until the run ends."""
        if self.running:
            return
        # `bazel test` sends the recipe's ${VAR} headers as a build does: the same question
        if not await confirm_secrets(self, self.state.recipe):
            return
        self.task = asyncio.current_task()
        self.result, self.summary = None, ""
        self.tree.clear()
        self.rows.clear()
        self.packages.clear()
        self.test_log.clear()
        self.log.clear()
        self.progress.setRange(0, 0)
        self.status_label.setText(tr("Starting…"))
        self._set_buttons(True)
        self.completeChanged.emit()
        try:
            self.job = self.factory(self.state, targets)
            async for event in self.job.events():
                self.show_event(event)
        except TfWizardError as exc:
            self.status_label.setText(str(exc))
        finally:
            self.log.flush_all()
            self.task = None
            if self.result is None:
                self.progress.setRange(0, 1)
                if self.job is not None and self.job.cancelled:
                    self.status_label.setText(tr("Cancelled"))
                elif self.job is not None and not self.job.targets:
                    self.status_label.setText(tr("No test depends on the change."))
            self._set_buttons(False)
            self.completeChanged.emit()
            self.testsFinished.emit(self.result)

    def cancel(self) -> None:
        """Stop the run (Bazel's server stays up)."""
        if self.job is not None and self.running:
            self.status_label.setText(tr("Cancelling…"))
            self.cancel_button.setEnabled(False)
            self.job.cancel()

    # -- events -> widgets ---------------------------------------------------------------
    def show_event(self, event: Any) -> None:
        """Show one event of the test job."""
        if event.type == "log":
            self.log.append_lines(event.lines)
        elif event.type == "test-progress":
            if event.total:
                self.progress.setRange(0, event.total)
                self.progress.setValue(event.done)
            self.status_label.setText(tr(
                "{done} of {total} tests: {passed} passed, {failed} failed, {flaky} flaky, "
                "{cached} cached, {left} left").format(
                done=event.done, total=event.total, passed=event.passed, failed=event.failed,
                flaky=event.flaky, cached=event.cached, left=event.left))
            self.show_tests(event.tests)
        elif event.type == "finished":
            self.result = event.result
            run = event.result.run
            self.show_tests(run.tests)
            self.progress.setRange(0, max(1, len(run.tests)))
            self.progress.setValue(len(run.tests))
            passed = len(run.tests) - len(run.failed)
            self.status_label.setText(
                tr("Cancelled") if run.cancelled else
                tr("{passed} of {total} tests passed; Bazel: {exit}").format(
                    passed=passed, total=len(run.tests), exit=run.exit_name or run.exit_code))

    def item_for(self, label: str) -> QTreeWidgetItem | None:
        """The tree's row of a test label, if shown."""
        return self.rows.get(label)

    def show_tests(self, tests: Sequence[Any]) -> None:
        """Rows for these tests under their packages (made or updated)."""
        for test in tests:
            item = self.rows.get(test.label)
            if item is None:
                pkg, _sep, name = test.label.partition(":")
                top = self.packages.get(pkg)
                if top is None:
                    top = self.packages[pkg] = QTreeWidgetItem(self.tree, [pkg])
                    top.setExpanded(True)
                item = self.rows[test.label] = QTreeWidgetItem(top, [name])
            item.setData(COL_NAME, Qt.ItemDataRole.UserRole, test.label)
            cached = tr(" (cached)") if test.cached else ""
            item.setText(COL_STATUS, test.status + cached)
            item.setText(COL_DURATION, tr("{seconds:.1f} s").format(seconds=test.duration_s))
            item.setText(COL_ATTEMPTS, str(test.attempts))
            item.setForeground(COL_STATUS, QBrush(QColor(COLOURS.get(test.status, "#666666"))))
        self.tree.resizeColumnToContents(COL_NAME)

    def log_path(self, label: str) -> Path | None:
        """Where the record keeps this test's own test.log (failing tests), or None."""
        if self.result is None or self.result.run.record_dir is None:
            return None
        test = next((t for t in self.result.run.tests if t.label == label), None)
        if test is None:
            return None
        path = Path(self.result.run.record_dir) / "tests" / test.folder() / "test.log"
        return path if path.is_file() else None

    def show_test_log(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        """A test's own test.log below the tree (a passing test's is not kept)."""
        label = item.data(COL_NAME, Qt.ItemDataRole.UserRole)
        if not label:
            return
        path = self.log_path(label)
        if path is None:
            self.test_log.setPlainText(tr("{label}: only a failing test's own log is kept; "
                                          "this one passed or has not finished.").format(
                label=label))
            return
        self.test_log.setPlainText(path.read_text("utf-8", "replace"))

    # -- summary -------------------------------------------------------------------------
    def copy_summary(self) -> None:
        """The run's PR summary (Markdown) onto the clipboard."""
        from tfwizard.core.testloop.summary import markdown_summary

        if self.result is None:
            return
        recipe = self.state.recipe
        path = str(recipe.path) if recipe.path else recipe.name
        run = self.result.run
        commands = [f"tfwizard test {path} " + " ".join(
            a for a in run.argv[run.argv.index("--") + 1:])] if "--" in run.argv else []
        self.summary = markdown_summary(
            run, recipe_path=path, recipe=recipe,
            diffstat=self.job.diffstat if self.job is not None else "",
            ref=recipe.tensorflow.ref, commands=commands)
        QGuiApplication.clipboard().setText(self.summary)
        self.status_label.setText(tr("The PR summary is on the clipboard."))
