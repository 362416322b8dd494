"""The step bar: a left sidebar of the wizard's eleven steps, marking the current one, those
done and those skipped (a CPU build skips the GPU step)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QFont, QPalette
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from ..i18n import tr

#: what each row can be
CURRENT, DONE, SKIPPED, AHEAD = "current", "done", "skipped", "ahead"


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
    """The eleven steps as a list the person reads (not clickable: Back and Next move)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("step-bar")
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.states: list[str] = []
        for number, name in enumerate(step_names(), start=1):
            self.addItem(QListWidgetItem(f"{number}. {name}"))
        self.setFixedWidth(self.sizeHintForColumn(0) + 48)

    def show_steps(self, current: int, visited: list[int]) -> None:
        """Mark the rows for the page `current` after visiting `visited` (page ids)."""
        self.states = step_states(current, visited, self.count())
        words = {DONE: tr("done"), SKIPPED: tr("skipped"), CURRENT: tr("current step")}
        names = step_names()
        for i, state in enumerate(self.states):
            item = self.item(i)
            text = f"{i + 1}. {names[i]}"
            item.setText(f"{text} ({words[SKIPPED]})" if state == SKIPPED
                         else f"✓ {text}" if state == DONE else text)
            item.setToolTip(words.get(state, ""))
            font = QFont(self.font())
            font.setBold(state == CURRENT)
            # no italic for skipped: the word and the grey say it, and CJK has no italic
            item.setFont(font)
            role = QPalette.ColorRole.PlaceholderText if state in (SKIPPED, AHEAD) \
                else QPalette.ColorRole.Text
            item.setForeground(QBrush(self.palette().color(role)))
