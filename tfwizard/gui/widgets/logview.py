"""A log view that stays responsive under a build printing thousands of lines a second.

Lines go into a buffer (from any thread: appending takes a lock and touches no Qt
object); a timer on the GUI thread flushes the buffer every ~75 ms as one cursor insert.
The document keeps at most `max_blocks` lines (the full log lives on disk, behind
"Open full log"), and the view follows the end only while the user is already there.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QFont, QFontDatabase, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..i18n import tr

FLUSH_INTERVAL_MS = 50
MAX_BLOCKS = 5000
#: lines inserted per flush; a bigger backlog is drained over the next ticks, so one
#: flush never holds the event loop for long. Once the view is full, each inserted line
#: also trims one from the top, which costs ~17 us a line: 250 lines stay under ~5 ms.
LINES_PER_FLUSH = 250


class LogView(QWidget):
    """Batched, bounded, follow-the-end log view with search and "Open full log"."""

    #: emitted (queued) from whichever thread first fills an empty buffer
    _pending = Signal()

    def __init__(self, parent: QWidget | None = None, *, max_blocks: int = MAX_BLOCKS,
                 interval_ms: int = FLUSH_INTERVAL_MS) -> None:
        super().__init__(parent)
        self.max_blocks = max_blocks
        self._lock = threading.Lock()
        self._buffer: deque[str] = deque()
        self._signalled = False
        self.lines_received = 0
        self.lines_dropped = 0  # fell out of the view before being shown (still on disk)
        self._full_log: Path | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.search = QLineEdit(self)
        self.search.setObjectName("log-search")
        self.search.setPlaceholderText(tr("Search the log (Enter: next match)"))
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.find_next)
        bar.addWidget(self.search, 1)
        self.search_status = QLabel(self)
        bar.addWidget(self.search_status)
        self.open_full = QPushButton(tr("Open full log"), self)
        self.open_full.setObjectName("open-full-log")
        self.open_full.setEnabled(False)
        self.open_full.setToolTip(tr("The view keeps the last lines; the whole log is on disk"))
        self.open_full.clicked.connect(self.open_full_log)
        bar.addWidget(self.open_full)
        layout.addLayout(bar)

        self.text = QPlainTextEdit(self)
        self.text.setObjectName("log-text")
        self.text.setReadOnly(True)
        self.text.setUndoRedoEnabled(False)
        # wrapping re-lays out every line on resize; a build log is read line by line
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setMaximumBlockCount(max_blocks)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        layout.addWidget(self.text, 1)

        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.flush)
        self._pending.connect(self._start_timer)

    # -- feeding (any thread) ---------------------------------------------------------------
    def append_lines(self, lines: Iterable[str]) -> None:
        """Queue lines for display; safe to call from any thread."""
        with self._lock:
            before = len(self._buffer)
            self._buffer.extend(lines)
            added = len(self._buffer) - before
            self.lines_received += added
            # lines beyond what the view keeps would be trimmed right after insertion
            overflow = len(self._buffer) - self.max_blocks
            if overflow > 0:
                for _ in range(overflow):
                    self._buffer.popleft()
                self.lines_dropped += overflow
            signal = not self._signalled and added > 0
            if signal:
                self._signalled = True
        if signal:
            self._pending.emit()

    def append_line(self, line: str) -> None:
        """Queue one line for display; safe to call from any thread."""
        self.append_lines((line,))

    def _start_timer(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    # -- flushing (GUI thread) --------------------------------------------------------------
    def pending(self) -> int:
        """How many lines wait for the next flush."""
        with self._lock:
            return len(self._buffer)

    def flush(self) -> None:
        """Insert up to LINES_PER_FLUSH buffered lines as one edit."""
        with self._lock:
            count = min(len(self._buffer), LINES_PER_FLUSH)
            batch = [self._buffer.popleft() for _ in range(count)]
            if not self._buffer:
                self._signalled = False
                self._timer.stop()
        if not batch:
            return
        bar = self.text.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 2
        doc = self.text.document()
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        empty = doc.isEmpty()
        cursor.beginEditBlock()
        cursor.insertText(("" if empty else "\n") + "\n".join(batch))
        cursor.endEditBlock()
        if at_bottom:
            bar.setValue(bar.maximum())

    def flush_all(self) -> None:
        """Drain the whole buffer now (tests, and the end of a build)."""
        while self.pending():
            self.flush()

    def clear(self) -> None:
        """Drop the shown and the queued lines."""
        with self._lock:
            self._buffer.clear()
            self._signalled = False
            self.lines_received = 0
            self.lines_dropped = 0
        self._timer.stop()
        self.text.clear()

    def block_count(self) -> int:
        """Lines shown now."""
        return self.text.document().blockCount()

    def is_at_bottom(self) -> bool:
        """The view is scrolled to its end (new lines keep it there)."""
        bar = self.text.verticalScrollBar()
        return bar.value() >= bar.maximum() - 2

    # -- search and the full log -------------------------------------------------------------
    def find_next(self) -> bool:
        """Find the search text after the cursor (wrapping); says when it is not there."""
        needle = self.search.text()
        if not needle:
            self.search_status.setText("")
            return False
        found = self.text.find(needle)
        if not found:  # wrap around to the top
            self.text.moveCursor(QTextCursor.MoveOperation.Start)
            found = self.text.find(needle)
        if not found and not self.text.find(needle, QTextDocument.FindFlag.FindBackward):
            self.search_status.setText(tr("not found in the shown lines"))
            return False
        self.search_status.setText("")
        return True

    def set_full_log(self, path: str | Path | None) -> None:
        """The file with the whole log (None: none); enables "Open full log"."""
        self._full_log = Path(path) if path else None
        self.open_full.setEnabled(self._full_log is not None)
        if self._full_log is not None:
            self.open_full.setToolTip(
                tr("Open {path} (every line of the build)").format(path=self._full_log))

    @property
    def full_log(self) -> Path | None:
        """The file with the whole log, or None."""
        return self._full_log

    def open_full_log(self) -> None:
        """Show the whole log in a viewer window (no desktop launcher needed)."""
        if self._full_log is not None:
            from ..viewers import show_text_file

            show_text_file(self, self._full_log, tr("Build log"))
