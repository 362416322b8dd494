"""The log view: batched appends, bounded memory, follow-the-end only at the end."""

from __future__ import annotations

import threading

import pytest

from tfwizard.gui.widgets.logview import LINES_PER_FLUSH, LogView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 10000


def make(qtbot, **kw):
    view = LogView(**kw)
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view, timeout=WAIT)
    return view


def test_100k_lines_are_batched_and_bounded(qtbot):
    view = make(qtbot, max_blocks=5000)
    flushes = []
    view.text.document().contentsChange.connect(lambda *a: flushes.append(1))
    for i in range(100_000):
        view.append_line(f"line {i}")
    assert view.block_count() <= 1  # nothing inserted yet: it waits for the timer
    qtbot.waitUntil(lambda: view.pending() == 0, timeout=WAIT)
    assert view.block_count() <= 5000
    assert view.text.toPlainText().endswith("line 99999")
    assert view.lines_received == 100_000
    # a few inserts, not one per line: the buffer keeps what the view can show, and each
    # flush inserts a bounded batch
    assert len(flushes) <= 5000 // LINES_PER_FLUSH + 2


def test_lines_from_another_thread(qtbot):
    view = make(qtbot)

    def feed():
        for i in range(20):
            view.append_lines(f"t{i}-{j}" for j in range(1000))

    thread = threading.Thread(target=feed)
    thread.start()
    thread.join(timeout=10)
    qtbot.waitUntil(lambda: view.pending() == 0 and "t19-999" in view.text.toPlainText(),
                    timeout=WAIT)


def test_follows_the_end_only_when_the_user_is_there(qtbot):
    view = make(qtbot)
    bar = view.text.verticalScrollBar()
    view.append_lines(f"a{i}" for i in range(500))
    view.flush_all()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    view.append_lines(f"b{i}" for i in range(100))
    view.flush_all()
    assert bar.value() == bar.maximum()  # still following
    bar.setValue(10)  # the user scrolls up to read
    view.append_lines(f"c{i}" for i in range(100))
    view.flush_all()
    assert bar.value() == 10 and bar.maximum() > 10  # left where they are
    bar.setValue(bar.maximum())  # back to the end: following again
    view.append_lines(f"d{i}" for i in range(100))
    view.flush_all()
    assert bar.value() == bar.maximum()


def test_search_and_full_log(qtbot, tmp_path):
    view = make(qtbot)
    view.append_lines(["alpha", "ERROR: something broke", "omega"])
    view.flush_all()
    qtbot.keyClicks(view.search, "something broke")
    assert view.find_next()
    assert view.text.textCursor().selectedText() == "something broke"
    view.search.setText("not there")
    assert not view.find_next()
    assert "not found" in view.search_status.text()
    assert not view.open_full.isEnabled()
    view.set_full_log(tmp_path / "log.txt")
    assert view.open_full.isEnabled()
