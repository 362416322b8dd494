"""The step bar: a left sidebar of the wizard's eleven steps, marking the current one, those
done and those skipped (a CPU build skips the GPU step); a step reached before is a link
back (or on) to its page."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from ..i18n import tr

#: what each row can be
CURRENT, DONE, SKIPPED, AHEAD = "current", "done", "skipped", "ahead"
#: the marks before a row's name (the word is in its tooltip: the bar stays narrow)
MARKS = {DONE: "✓ ", SKIPPED: "– ", CURRENT: "", AHEAD: ""}


def step_names() -> list[str]:
    """The steps' short names, in page order, in the current language."""
    return [tr("Welcome"), tr("Source"), tr("Backend"), tr("Toolchain"), tr("GPUs"),
            tr("Options"), tr("Review"), tr("Build"), tr("Test"), tr("Install"), tr("Verify")]


def step_states(current: int, visited: list[int], count: int) -> list[str]:
    """Each step's state: visited steps before the current one are done, steps before it
    that were never visited were skipped, the rest are ahead."""
    seen = set(visited)
    return [CURRENT if i == current else DONE if i < current and i in seen
            else SKIPPED if i < current else AHEAD for i in range(count)]


class StepBar(QListWidget):
    """The eleven steps; a click on one reached before goes there (Back and Next move too)."""

    #: a reached step's page id was clicked
    stepClicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("step-bar")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.states: list[str] = []
        self.reached: set[int] = set()
        for number, name in enumerate(step_names(), start=1):
            self.addItem(QListWidgetItem(f"{MARKS[DONE]}{number}. {name}"))
        self.itemClicked.connect(self._clicked)
        self._fit_width()

    def _fit_width(self) -> None:
        """As wide as the longest row with its mark, in the current language and font."""
        bold = QFont(self.font())
        bold.setBold(True)
        metrics = QFontMetrics(bold)  # the current step is bold: the widest a row gets
        widest = max(metrics.horizontalAdvance(f"{MARKS[DONE]}{i + 1}. {name}")
                     for i, name in enumerate(step_names()))
        self.setFixedWidth(widest + 2 * self.frameWidth() + 24)

    def show_steps(self, current: int, visited: list[int],
                   reached: Iterable[int] = ()) -> None:
        """Mark the rows for the page `current` after visiting `visited` (page ids);
        `reached`: every page shown since the start (those rows are links)."""
        self.states = step_states(current, visited, self.count())
        self.reached = set(reached) | set(visited)
        words = {DONE: tr("done"), SKIPPED: tr("skipped"), CURRENT: tr("current step")}
        names = step_names()
        for i, state in enumerate(self.states):
            item = self.item(i)
            item.setText(f"{MARKS[state]}{i + 1}. {names[i]}")
            tip = words.get(state, "")
            if i in self.reached and i != current:
                tip = tr("{state}: click to go there").format(state=tip) if tip else \
                    tr("Click to go there")
            item.setToolTip(tip)
            font = QFont(self.font())
            font.setBold(state == CURRENT)
            font.setUnderline(i in self.reached and i != current)
            # no italic for skipped: the mark and the grey say it, and CJK has no italic
            item.setFont(font)
            role = QPalette.ColorRole.PlaceholderText if state in (SKIPPED, AHEAD) \
                and i not in self.reached else QPalette.ColorRole.Text
            item.setForeground(QBrush(self.palette().color(role)))
        self._fit_width()

    def _clicked(self, item: QListWidgetItem) -> None:
        row = self.row(item)
        if row in self.reached:
            self.stepClicked.emit(row)
