"""A small painted chart of actions done over time: a build that stalls shows as a flat
line, at a glance, hours into the build."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from tfwizard.core.vocab import duration_text

from ..i18n import tr

#: points kept; older ones are thinned so hours of progress stay cheap to paint
MAX_POINTS = 600


class ActionsChart(QWidget):
    """(seconds since start, actions done) points, drawn as a line over the total."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("actions-chart")
        self.points: list[tuple[float, int]] = []
        self.total = 0
        self.setMinimumHeight(60)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip(tr("Actions done over time: a flat line is a stalled build"))

    def sizeHint(self) -> QSize:
        """Qt: a strip as wide as the page, 70 px high."""
        return QSize(400, 70)

    def clear(self) -> None:
        """Forget every point (a new build)."""
        self.points = []
        self.total = 0
        self.update()

    def add(self, seconds: float, done: int, total: int) -> None:
        """One progress report; the same count as the last point only moves time on."""
        self.total = max(self.total, total, done)
        if self.points and self.points[-1][1] == done and len(self.points) > 1 \
                and self.points[-2][1] == done:
            self.points[-1] = (seconds, done)  # a plateau: stretch it
        else:
            self.points.append((seconds, done))
        if len(self.points) > MAX_POINTS:
            self.points = self.points[::2] + ([self.points[-1]] if len(self.points) % 2 == 0
                                              else [])
        self.update()

    def stalled_for(self) -> float:
        """Seconds since the count last went up (0 with fewer than two points)."""
        if len(self.points) < 2:
            return 0.0
        last_t, last_done = self.points[-1]
        for t, done in reversed(self.points):
            if done != last_done:
                return last_t - t
        return last_t - self.points[0][0]

    def polygon(self, rect: QRectF) -> QPolygonF:
        """The points mapped into `rect` (x: time, y: share of the total)."""
        poly = QPolygonF()
        if not self.points or not self.total:
            return poly
        span = max(self.points[-1][0], 1.0)
        for t, done in self.points:
            x = rect.left() + rect.width() * t / span
            y = rect.bottom() - rect.height() * done / self.total
            poly.append(QPointF(x, y))
        return poly

    def paintEvent(self, event: QPaintEvent) -> None:
        """Qt: the frame, the line, the elapsed time in a corner."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(2, 2, -2, -2)
        pal = self.palette()
        painter.setPen(QPen(pal.mid().color(), 1))
        painter.drawRect(rect)
        inner = rect.adjusted(4, 4, -4, -4)
        painter.setPen(QPen(pal.highlight().color(), 2))
        painter.drawPolyline(self.polygon(inner))
        if self.points:
            painter.setPen(pal.text().color())
            painter.drawText(inner, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                             self.caption())
        painter.end()

    def caption(self) -> str:
        """What the last point says: "13 / 30 actions after 1 min 45 s" (the time the count
        was reached, which is not the build's whole duration)."""
        if not self.points:
            return ""
        t, done = self.points[-1]
        return tr("{done} / {total} actions after {time}").format(
            done=done, total=self.total, time=duration_text(t))
