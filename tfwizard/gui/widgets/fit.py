"""A column of word-wrapped rows that a scroll area never squeezes.

Why rows got cut off: a QScrollArea with widgetResizable(True) gives its widget the
viewport's height, bounded below by the widget's minimum size; a layout's minimum (and a
QLabel's with word wrap) ignores height-for-width, so a wrapped label two or three lines
tall at the visible width gets the height of one. Asking the layout for its height at the
current width and making that the minimum keeps every line whole; the scroll area then
scrolls instead of squeezing.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QFrame, QScrollArea, QWidget


class FitColumn(QWidget):
    """A widget whose minimum height follows its layout's height for its width."""

    def event(self, event: QEvent) -> bool:
        """Qt: a row changed (text, rows added or hidden): refit after the layout did."""
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return handled

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Qt: the width changed; ask for the height the wrapped rows need at it."""
        super().resizeEvent(event)
        self.fit()

    def fit(self) -> None:
        """Set the minimum height to what the rows need at the current width."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
            need = layout.heightForWidth(self.width())
            if need > 0 and need != self.minimumHeight():
                self.setMinimumHeight(need)


def fit_scroll(parent: QWidget, name: str) -> tuple[QScrollArea, FitColumn]:
    """A frameless vertical scroll area around a new FitColumn (lay out the column)."""
    area = QScrollArea(parent)
    area.setObjectName(name)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    column = FitColumn(area)
    area.setWidget(column)
    return area, column
