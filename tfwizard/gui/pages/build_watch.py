"""What the Build page adds for a build watched for hours: the steps and the estimated cost
before the start, elapsed time and a live chart of actions while it runs, a desktop
notification at the end, and after it the wheel with "Open folder", or the first error in
view with the files the log names clickable."""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.events import BuildResult, Progress
from tfwizard.core.errors import TfWizardError
from tfwizard.core.vocab import build_title, duration_text

from ..i18n import tr
from ..state import WizardState
from ..viewers import open_folder, show_text_file
from ..widgets.logrefs import LogLinks
from ..widgets.logview import LogView
from ..widgets.notify import notify
from ..widgets.rate_chart import ActionsChart
from ..widgets.summary import PlainSummary
from .review import plan_summary

#: the summary lines the Build page shows before the start
BEFORE_KEYS = ("steps", "time", "size", "wheel")


class BuildWatch(QWidget):
    """The Build page's before/while/after parts; the page forwards its events here."""

    def __init__(self, state: WizardState, parent: QWidget, log: LogView) -> None:
        super().__init__(parent)
        self.state = state
        self.log = log
        self.links = LogLinks(log)
        self.links.fileClicked.connect(self.open_file)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.before = PlainSummary(self, "build-before")
        layout.addWidget(self.before)
        self.chart = ActionsChart(self)
        self.chart.setVisible(False)
        layout.addWidget(self.chart)
        self.elapsed_label = QLabel("", self)
        self.elapsed_label.setObjectName("elapsed")
        layout.addWidget(self.elapsed_label)
        row = QHBoxLayout()
        self.wheel_label = QLabel("", self)
        self.wheel_label.setObjectName("wheel-path")
        self.wheel_label.setWordWrap(True)
        row.addWidget(self.wheel_label, 1)
        self.open_folder = QPushButton(tr("Open folder"), self)
        self.open_folder.setObjectName("open-wheel-folder")
        self.open_folder.clicked.connect(self.open_wheel_folder)
        self.open_folder.setVisible(False)
        row.addWidget(self.open_folder)
        layout.addLayout(row)
        self.started_at: float | None = None
        self.wheel: str | None = None
        self.notified: tuple[str, str] | None = None  # the last notification's title, text
        self.opened: list[str] = []  # what was handed to the desktop (files, folders)
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self.show_elapsed)

    # -- before ---------------------------------------------------------------------------
    def show_plan(self) -> None:
        """The steps and the estimated cost of the build the recipe makes now."""
        s = self.state
        if s.build_host is None:
            self.before.show_message(tr("The build machine is not known yet: no estimate."))
            return
        try:
            plan = make_plan(s.recipe, build_host=s.build_host, target_host=s.target_host,
                             kb=s.kb, recipe_dir=s.recipe.path.parent if s.recipe.path else None)
            cost, lines = plan_summary(s, plan)
        except TfWizardError as exc:
            self.before.show_message(exc.message)
            return
        self.before.show_lines([ln for ln in lines if ln.key in BEFORE_KEYS], cost)

    # -- while ----------------------------------------------------------------------------
    def started(self) -> None:
        """A build began: the chart and the clock start from zero."""
        self.started_at = time.monotonic()
        self.wheel = None
        self.chart.clear()
        self.chart.setVisible(True)
        self.before.setVisible(False)
        self.wheel_label.setText("")
        self.open_folder.setVisible(False)
        self.log.text.setExtraSelections([])
        self._tick.start()
        self.show_elapsed()

    def elapsed(self) -> float:
        """Seconds since the build began (0 before)."""
        return time.monotonic() - self.started_at if self.started_at is not None else 0.0

    def progress(self, event: Progress) -> None:
        """One progress report: a chart point."""
        if event.total:
            self.chart.add(self.elapsed(), event.done or 0, event.total)
        self.show_elapsed()

    def show_elapsed(self) -> None:
        """"Elapsed: 1 h 27 min" (the ETA is beside the phase, above)."""
        text = tr("Elapsed: {time}").format(time=duration_text(self.elapsed()))
        stalled = self.chart.stalled_for()
        if stalled >= 600:
            text += " · " + tr("no action finished for {time}").format(
                time=duration_text(stalled))
        self.elapsed_label.setText(text)

    # -- after ----------------------------------------------------------------------------
    def finished(self, result: BuildResult | None) -> None:
        """The build ended: stop the clock, say how, notify, show the wheel or the error."""
        self._tick.stop()
        self.show_elapsed()
        if result is None:
            return
        if len(self.chart.points) < 2:  # ended before Bazel counted actions: no chart
            self.chart.setVisible(False)
        took = duration_text(result.elapsed_s or self.elapsed())
        self.elapsed_label.setText(tr("Took {time}").format(time=took))
        if result.ok and result.wheel:
            self.wheel = result.wheel
            self.wheel_label.setText(tr("Wheel: {path}").format(path=result.wheel))
            self.open_folder.setVisible(True)
        elif result.status in ("failed", "error"):
            self.log.flush_all()
            self.links.scroll_to_first_error()
        title = build_title(result.status)
        self.notified = (title, result.message or took)
        notify(self.window(), title, self.notified[1], ok=result.ok)

    def open_wheel_folder(self) -> None:
        """Open the wheel's folder in the desktop's file manager."""
        if self.wheel:
            self._open(Path(self.wheel).parent)

    def open_file(self, path: str, line: int) -> None:
        """A file a log line names: opened when it is on this machine (the recipe's source
        folder), else the log's search finds its lines."""
        source = self.state.recipe.resolve_path("tensorflow.source_dir")
        for base in ([Path(source)] if source else []):
            candidate = base / path
            if candidate.is_file():
                self._open(candidate)
                return
        self.log.search.setText(path)
        self.log.find_next()

    def _open(self, path: Path) -> None:
        """A file in the app's viewer, a folder in the file manager (or where it is)."""
        self.opened.append(str(path))
        if path.is_file():
            show_text_file(self, path)
        else:
            open_folder(self, path)
