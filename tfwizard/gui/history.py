"""Build history: past builds from their records (status, duration, wheel, cache), with
their log, diagnosis and bundle a click away, re-attach to a running one, delete one."""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from qasync import asyncSlot

from tfwizard.core.building.report import history
from tfwizard.core.building.report.bundle import make_bundle
from tfwizard.core.building.run.record import record_stopped_message
from tfwizard.core.diagnosis.build import diagnose_file, recognised, unrecognised_event
from tfwizard.core.diagnosis.text import diagnosis_block, unrecognised_block
from tfwizard.core.errors import TfWizardError
from tfwizard.core.vocab import duration_text, status_word

from .dialogs import ask
from .i18n import tr
from .viewers import open_folder, show_text_file

COLUMNS = ("id", "status", "duration", "release", "wheel", "cache")


def _started_text(summary: history.BuildSummary) -> str:
    if summary.started is None:
        return summary.build_id
    return datetime.datetime.fromtimestamp(summary.started).strftime("%Y-%m-%d %H:%M")


async def _confirm(parent: QWidget, text: str) -> bool:
    box = QMessageBox(QMessageBox.Icon.Question, tr("Delete build"), text,
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.setObjectName("confirm-delete")
    return await ask(box) == QMessageBox.StandardButton.Yes


class HistoryDialog(QDialog):
    """The table of build records, newest first, and what to do with the selected one."""

    def __init__(self, parent: QWidget | None = None, *,
                 attach: Callable[[str], None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("history")
        self.setWindowTitle(tr("Build history"))
        self.attach_to = attach
        #: asks before deleting; tests replace it
        self.confirm: Callable[[QWidget, str], Awaitable[bool]] = _confirm
        self.opened: list[str] = []  # what was handed to the desktop
        self.builds: list[history.BuildSummary] = []
        layout = QVBoxLayout(self)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("history-table")
        self.table.setHorizontalHeaderLabels([
            tr("Started"), tr("Status"), tr("Duration"), tr("TensorFlow"), tr("Wheel"),
            tr("Cache")])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._selected)
        layout.addWidget(self.table, 2)
        self.detail = QPlainTextEdit(self)
        self.detail.setObjectName("history-detail")
        self.detail.setReadOnly(True)
        layout.addWidget(self.detail, 1)
        self.status = QLabel("", self)
        self.status.setObjectName("history-status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        row = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for name, text, slot in (
                ("log", tr("Open log"), self.open_log),
                ("diagnosis", tr("Diagnosis"), self.show_diagnosis),
                ("bundle", tr("Save bundle"), self.save_bundle),
                ("attach", tr("Attach"), self.attach),
                ("delete", tr("Delete…"), self.delete)):
            button = QPushButton(text, self)
            button.setObjectName(f"history-{name}")
            button.clicked.connect(slot)
            row.addWidget(button)
            self.buttons[name] = button
        row.addStretch(1)
        close = QPushButton(tr("Close"), self)
        close.clicked.connect(self.accept)
        row.addWidget(close)
        layout.addLayout(row)
        self.resize(900, 500)
        self.reload()

    # -- the table --------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the records again."""
        try:
            self.builds = history.history()
        except OSError as exc:
            self.builds = []
            self.status.setText(str(exc))
        self.table.setRowCount(len(self.builds))
        for row, b in enumerate(self.builds):
            cells = (_started_text(b), status_word(b.status),
                     duration_text(b.elapsed_s) if b.elapsed_s is not None else "",
                     b.release, Path(b.wheel).name if b.wheel else "", b.cache_text)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(b.wheel or "" if col == 4 else text)
                self.table.setItem(row, col, item)
        if self.builds:
            self.table.selectRow(0)
        else:
            self.detail.setPlainText(tr("No builds yet."))
        self._selected()

    def selected(self) -> history.BuildSummary | None:
        """The build of the selected row, or None."""
        rows = self.table.selectionModel().selectedRows()
        return self.builds[rows[0].row()] if rows else None

    def _selected(self) -> None:
        b = self.selected()
        for button in self.buttons.values():
            button.setEnabled(b is not None)
        if b is None:
            return
        self.buttons["attach"].setEnabled(b.attachable and self.attach_to is not None)
        self.buttons["delete"].setEnabled(not b.running)
        self.buttons["log"].setEnabled((b.path / "log.txt").is_file())
        lines = [tr("Build {id}: {status}").format(id=b.build_id, status=status_word(b.status)),
                 b.message, tr("Record: {path}").format(path=b.path)]
        if b.wheel:
            lines.append(tr("Wheel: {path}").format(path=b.wheel))
        if b.cache_text:
            lines.append(b.cache_text)
        self.detail.setPlainText("\n".join(line for line in lines if line))

    # -- actions ----------------------------------------------------------------------------
    def open_log(self) -> None:
        """The selected build's whole log in the desktop's viewer."""
        b = self.selected()
        if b is not None:
            self._open(b.path / "log.txt")

    def show_diagnosis(self) -> None:
        """Diagnose the selected build's log again and show it below the table."""
        b = self.selected()
        if b is None:
            return
        try:
            found = diagnose_file(b.path)
            stopped = record_stopped_message(b.path)  # tfwizard's message explains it
            unknown = (unrecognised_event(b.path / "log.txt")
                       if b.status in ("failed", "error") and not recognised(found)
                       and not stopped else None)
        except (OSError, TfWizardError) as exc:
            self.detail.setPlainText(str(exc))
            return
        lines = [tr("tfwizard stopped this build before Bazel ran:"), stopped, ""] \
            if stopped else []
        lines += [line for d in found for line in [*diagnosis_block(d), ""]]
        if unknown is not None:  # no known cause: the log's own root-cause lines
            lines += unrecognised_block(unknown)
        self.detail.setPlainText("\n".join(lines) if lines
                                 else tr("No known failure found in the log."))

    def save_bundle(self) -> None:
        """Write the selected build's diagnostics bundle into its record folder, then show
        the folder."""
        b = self.selected()
        if b is None:
            return
        try:
            made = make_bundle(b.path, b.path)
        except (OSError, TfWizardError) as exc:
            self.status.setText(str(exc))
            return
        self.status.setText(tr("Bundle saved: {path}").format(path=made.path))
        self._open(b.path)

    def attach(self) -> None:
        """Follow the selected running build on the Build page."""
        b = self.selected()
        if b is not None and b.attachable and self.attach_to is not None:
            self.accept()
            self.attach_to(b.build_id)

    @asyncSlot()
    async def delete(self) -> None:
        """Delete the selected build's record, after asking."""
        b = self.selected()
        if b is None:
            return
        if not await self.confirm(self, tr("Delete the record of build {id} (its log, plan "
                                           "and result; a wheel inside it too)?").format(
                                               id=b.build_id)):
            return
        try:
            history.delete_build(b)
        except TfWizardError as exc:
            self.status.setText(str(exc))
            return
        self.status.setText(tr("Deleted build {id}.").format(id=b.build_id))
        self.reload()

    def _open(self, path: Path) -> None:
        """A log in the app's viewer, a folder in the file manager (or where it is)."""
        self.opened.append(str(path))
        if path.is_file():
            show_text_file(self, path)
        else:
            open_folder(self, path)
