"""What a failed build's log points at: its first error line, and the source files its
lines name (`tensorflow/core/kernels/foo.cc:12:3: error: ...`), clickable."""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QMouseEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextEdit

from .logview import LogView

#: a source path with an extension compilers and Bazel name, and an optional :line
FILE_REF = re.compile(
    r"(?P<path>(?:[\w.+-]+/)*[\w.+-]+\.(?:cc|cpp|cu|c|h|hpp|inc|py|bzl|bazel|proto|S))"
    r"(?::(?P<line>\d+))?(?::\d+)?")
#: what counts as an error line: a compiler's "error:", Bazel's "ERROR:"
ERROR_LINE = re.compile(r"(?:^|\W)(?:ERROR:|error:|FAILED:)")


def file_refs(text: str) -> list[tuple[int, int, str, int]]:
    """(start, end, path, line) of every file a log line names (line 0 when none)."""
    return [(m.start(), m.end(), m.group("path"), int(m.group("line") or 0))
            for m in FILE_REF.finditer(text)]


class LogLinks(QObject):
    """Makes a LogView's error lines findable and the files its lines name clickable."""

    #: a file named in a log line was clicked: (path as the log wrote it, line or 0)
    fileClicked = Signal(str, int)

    def __init__(self, view: LogView) -> None:
        super().__init__(view)
        self.view = view
        view.text.viewport().installEventFilter(self)
        view.text.viewport().setMouseTracking(True)

    def first_error_block(self) -> int | None:
        """The number of the first shown line that is an error, or None."""
        block = self.view.text.document().firstBlock()
        while block.isValid():
            if ERROR_LINE.search(block.text()):
                return block.blockNumber()
            block = block.next()
        return None

    def scroll_to_first_error(self) -> bool:
        """Put the first error line in view, selected, and underline the files error lines
        name; False when the shown lines hold no error."""
        number = self.first_error_block()
        if number is None:
            return False
        doc = self.view.text.document()
        block = doc.findBlockByNumber(number)
        # selected from its end back to its start: the cursor (which the view scrolls to)
        # sits at the line's start, so the line is read from its first character
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock,
                            QTextCursor.MoveMode.KeepAnchor)
        self.view.text.setTextCursor(cursor)
        self.view.text.centerCursor()
        self.view.text.horizontalScrollBar().setValue(0)
        self._underline_refs()
        return True

    def _underline_refs(self) -> None:
        fmt = QTextCharFormat()
        fmt.setFontUnderline(True)
        fmt.setForeground(self.view.palette().link())
        marks = []
        block = self.view.text.document().firstBlock()
        while block.isValid():
            text = block.text()
            if ERROR_LINE.search(text):
                for start, end, _path, _line in file_refs(text):
                    sel = QTextEdit.ExtraSelection()
                    cur = QTextCursor(block)
                    cur.setPosition(block.position() + start)
                    cur.setPosition(block.position() + end, QTextCursor.MoveMode.KeepAnchor)
                    sel.cursor = cur
                    sel.format = fmt
                    marks.append(sel)
            block = block.next()
        self.view.text.setExtraSelections(marks)

    def ref_at(self, block_number: int, column: int) -> tuple[str, int] | None:
        """The file a shown line names at `column`, or None."""
        block = self.view.text.document().findBlockByNumber(block_number)
        for start, end, path, line in file_refs(block.text()):
            if start <= column <= end:
                return path, line
        return None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Qt: a click (not a selection) on a file name emits fileClicked."""
        if event.type() == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent) \
                and event.button() == Qt.MouseButton.LeftButton:
            text = self.view.text
            if not text.textCursor().hasSelection():
                cursor = text.cursorForPosition(event.position().toPoint())
                ref = self.ref_at(cursor.blockNumber(), cursor.positionInBlock())
                if ref is not None:
                    self.fileClicked.emit(*ref)
        return False
