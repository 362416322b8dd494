"""A build said in plain words (the Review page, the Build page before the start), and a
"Details" section that folds what only some people read (the TOML, the commands).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tfwizard.core.building.report.cost import BuildCost, SummaryLine

from ..i18n import tr
from .richtext import code_html


class PlainSummary(QWidget):
    """Label: text rows (versions, GPUs, time, sizes, wheel, record, steps), then the
    estimate's assumptions in a smaller font."""

    def __init__(self, parent: QWidget | None, name: str) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.form = QFormLayout()
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        outer.addLayout(self.form)
        self.assumptions = QLabel("", self)
        self.assumptions.setObjectName(f"{name}-assumptions")
        self.assumptions.setWordWrap(True)
        self.assumptions.setTextFormat(Qt.TextFormat.PlainText)
        self.assumptions.setStyleSheet("color: palette(mid);")
        outer.addWidget(self.assumptions)
        self.values: dict[str, QLabel] = {}

    def show_lines(self, lines: Sequence[SummaryLine], cost: BuildCost | None) -> None:
        """Replace the rows with `lines` and the assumptions with the cost's."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.values = {}
        for line in lines:
            value = QLabel(code_html(line.text), self)  # `commands` as code
            value.setObjectName(f"summary-{line.key}")
            value.setWordWrap(True)
            value.setTextFormat(Qt.TextFormat.RichText)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.form.addRow(line.label + ":", value)
            self.values[line.key] = value
        self.assumptions.setText(
            tr("Assumptions: {list}").format(list="; ".join(cost.assumptions))
            if cost is not None else "")

    def show_message(self, text: str) -> None:
        """No summary (no plan yet): one line saying why."""
        self.show_lines([SummaryLine("none", tr("Plan"), text)], None)


class Details(QWidget):
    """A folded section: a "Details" toggle over a body widget, closed at first."""

    def __init__(self, parent: QWidget | None, title: str, name: str) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName(f"{name}-toggle")
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self.set_open)
        layout.addWidget(self.toggle)
        self.body = QWidget(self)
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.body, 1)
        self.body.setVisible(False)

    @property
    def is_open(self) -> bool:
        """Whether the body shows."""
        return self.toggle.isChecked()

    def set_open(self, open_: bool) -> None:
        """Show or fold the body."""
        if self.toggle.isChecked() != open_:
            self.toggle.setChecked(open_)
            return
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.body.setVisible(open_)
