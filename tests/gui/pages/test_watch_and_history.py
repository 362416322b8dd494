"""Issue 19 items 3, 8, 9: Review in plain words, a build watched for hours, build history.

Records are written by the record code the runner uses, with real fixture-build logs."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QDesktopServices

from tests.core.building.test_history import plan_of, write_record
from tfwizard.core.building.run.events import Artifact, BuildResult, Finished, LogLines, Progress
from tfwizard.core.building.run.record import read_log
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
WAIT = 5000


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path))
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()))
    return tmp_path


def test_review_speaks_first_and_folds_the_toml(qtbot, make_window, data_dir):
    window = make_window()
    window.wizard.go_to(PageId.REVIEW)
    review = window.wizard.review
    values = {k: v.text() for k, v in review.summary.values.items()}
    assert values["versions"].startswith("TensorFlow ")
    assert "UNVERIFIED estimate" in values["time"]
    assert "GiB download" in values["size"]
    assert str(data_dir / "builds") in values["record"]
    assert "Assumptions:" in review.summary.assumptions.text()
    assert not review.toml_view.isVisible()  # under Details, folded
    qtbot.mouseClick(review.details.toggle, Qt.MouseButton.LeftButton)
    assert review.toml_view.isVisible() and "[tensorflow]" in review.toml_view.toPlainText()


class ScriptedBuild:
    """The events of a real fixture build's log, replayed (no Docker)."""

    def __init__(self, log: str, result: BuildResult) -> None:
        self.log, self.result = log, result

    def cancel(self) -> None:
        pass

    async def events(self):
        yield Artifact("record", self.result.record_dir)
        lines = tuple(text for _ch, text in read_log(self.log))
        yield LogLines("stdout", lines, 1)
        for done in (10, 40, 70):
            yield Progress("compile", done=done, total=100, eta_s=5230.0,
                           message="Compiling tensorflow/core/kernels/matmul_op.cc")
        yield Finished(self.result)


def run_scripted(qtbot, make_window, job):
    window = make_window(jobs=Jobs(build=lambda _state: job))
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    assert page.watch.before.values["steps"].text().startswith("prepare the image")
    assert "time" in page.watch.before.values  # the cost, before the start
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running, timeout=WAIT)
    return window, page


def test_a_failed_build_shows_its_first_error_and_clickable_files(qtbot, make_window,
                                                                   data_dir):
    _kb, _host, plan = plan_of("tf221-cpu-portable.toml")
    rec = write_record(data_dir / "x", "20260101-100000-aaaaaa", plan, status="failed",
                       log="fixture-break.log.txt", elapsed_s=5230)
    result = BuildResult(rec.build_id, "failed", str(rec.path), message="step build exited "
                         "with 1", elapsed_s=5230, actions=100)
    window, page = run_scripted(qtbot, make_window, ScriptedBuild(rec.log_path, result))
    watch = page.watch
    assert page.action_label.text() == ""  # no stale "Compiling …" line
    assert watch.elapsed_label.text() == "Took 1 h 27 min"
    assert [p[1] for p in watch.chart.points] == [10, 40, 70]
    assert page.progress.text().startswith("70 %")
    cursor = page.log.text.textCursor()
    assert "ERROR:" in cursor.block().text() and cursor.hasSelection()
    assert watch.notified is not None and watch.notified[0] == "Build failed"
    # the file a compiler error names is clickable: the log search goes to it
    block = page.log.text.document().findBlockByNumber(cursor.blockNumber())
    ref = watch.links.ref_at(block.blockNumber(), block.text().index("matmul_op.cc"))
    assert ref == ("tensorflow/core/kernels/matmul_op.cc", 0)
    with qtbot.waitSignal(watch.links.fileClicked, timeout=WAIT) as sig:
        rect = page.log.text.cursorRect(_cursor_at(page, block, "matmul_op.cc"))
        qtbot.mouseClick(page.log.text.viewport(), Qt.MouseButton.LeftButton,
                         pos=rect.center())
    assert sig.args[0].endswith("matmul_op.cc")
    assert page.log.search.text() == sig.args[0]


def _cursor_at(page, block, word):
    from PySide6.QtGui import QTextCursor

    cursor = QTextCursor(block)
    cursor.setPosition(block.position() + block.text().index(word) + 2)
    page.log.text.setTextCursor(cursor)
    page.log.text.ensureCursorVisible()
    return cursor


def test_a_build_that_succeeded_shows_the_wheel_and_opens_its_folder(qtbot, make_window,
                                                                     data_dir):
    _kb, _host, plan = plan_of("tf221-cpu-portable.toml")
    rec = write_record(data_dir / "x", "20260101-100000-aaaaaa", plan, status="succeeded",
                       log="fixture-cold.log.txt", elapsed_s=41230)
    wheel = str(rec.path / "tensorflow-2.21.0-cp312-cp312-linux_x86_64.whl")
    result = BuildResult(rec.build_id, "succeeded", str(rec.path), wheel=wheel,
                         message="wheel: " + wheel, elapsed_s=41230, actions=100)
    window, page = run_scripted(qtbot, make_window, ScriptedBuild(rec.log_path, result))
    watch = page.watch
    assert watch.elapsed_label.text() == "Took 11 h 27 min"
    assert watch.wheel_label.text() == f"Wheel: {wheel}"
    assert watch.open_folder.isVisible()
    qtbot.mouseClick(watch.open_folder, Qt.MouseButton.LeftButton)
    assert watch.opened == [str(rec.path)]


def test_history_lists_records_and_acts_on_them(qtbot, make_window, data_dir):
    _kb, _host, plan = plan_of("tf221-cpu-portable.toml")
    builds = data_dir / "builds"
    write_record(data_dir, "20260101-100000-aaaaaa", plan, status="failed",
                 log="fixture-break.log.txt", elapsed_s=95)
    write_record(data_dir, "20260102-100000-bbbbbb", plan, status="succeeded",
                 log="fixture-cold.log.txt", elapsed_s=7200, wheel="/w/tf-2.21.0.whl")
    write_record(data_dir, "20260103-100000-cccccc", plan, status="running",
                 log="fixture-cold.log.txt")
    window = make_window()
    attached: list[str] = []
    dialog = window.show_history()
    dialog.attach_to = attached.append
    qtbot.addWidget(dialog)
    table = dialog.table
    assert table.rowCount() == 3
    assert [table.item(r, 1).text() for r in range(3)] == ["running", "succeeded", "failed"]
    assert table.item(1, 2).text() == "2 h 00 min" and table.item(1, 4).text() == "tf-2.21.0.whl"
    assert "ran here" in table.item(1, 5).text()
    # the running one: attach, not delete
    table.selectRow(0)
    assert dialog.buttons["attach"].isEnabled() and not dialog.buttons["delete"].isEnabled()
    qtbot.mouseClick(dialog.buttons["attach"], Qt.MouseButton.LeftButton)
    assert attached == ["20260103-100000-cccccc"]
    # the failed one: its diagnosis, its log, its bundle, then delete it
    dialog = window.show_history()
    qtbot.addWidget(dialog)
    dialog.table.selectRow(2)
    qtbot.mouseClick(dialog.buttons["diagnosis"], Qt.MouseButton.LeftButton)
    assert "compile" in dialog.detail.toPlainText().lower()
    qtbot.mouseClick(dialog.buttons["log"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.buttons["bundle"], Qt.MouseButton.LeftButton)
    failed = builds / "20260101-100000-aaaaaa"
    assert dialog.opened == [str(failed / "log.txt"), str(failed)]
    assert list(failed.glob("tfwizard-diagnostics-*.tar.gz"))

    async def yes(_parent, _text):
        return True

    dialog.confirm = yes
    qtbot.mouseClick(dialog.buttons["delete"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=WAIT)
    assert not failed.exists()
