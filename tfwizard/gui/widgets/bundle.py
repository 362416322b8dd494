"""The "Save diagnostics bundle…" button and its status line, over the core's bundle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)
from qasync import asyncSlot

from tfwizard.core.errors import TfWizardError

from ..dialogs import save_file_name
from ..i18n import tr
from ..state import WizardState


class BundleSaver(QWidget):
    """"Save diagnostics bundle…": the core's bundle of the last build record, secrets masked.

    A button and a status label; enabled once the state names a build record folder.
    """

    def __init__(self, state: WizardState, parent: QWidget, name: str,
                 reports: Callable[[], dict[str, Any]] | None = None) -> None:
        super().__init__(parent)
        self.state = state
        #: () -> {"verify.json": ...} for reports the record does not keep
        self.reports: Callable[[], dict[str, Any]] = reports or dict
        self.saved: Path | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.button = QPushButton(tr("Save diagnostics bundle…"), self)
        self.button.setObjectName(name)
        self.button.setToolTip(tr("One archive with the recipe, plan, host, log tail, failed "
                                  "actions, diagnosis and reports, to attach to a question or "
                                  "a bug report. Secrets are masked."))
        self.button.clicked.connect(self.choose_and_save)
        row.addWidget(self.button)
        self.status = QLabel("", self)
        self.status.setObjectName(f"{name}-status")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.status, 1)
        self.sync()

    def record(self) -> Path | None:
        """The build record folder to bundle, or None while there is none."""
        folder = self.state.record_dir
        return Path(folder) if folder and Path(folder).is_dir() else None

    def sync(self) -> None:
        """Enable the button while there is a record to bundle."""
        self.button.setEnabled(self.record() is not None)

    @asyncSlot()
    async def choose_and_save(self) -> None:
        """Ask where to save the bundle, then save it."""
        record = self.record()
        if record is None:
            return
        from tfwizard.core.building.report.bundle import default_bundle_name

        # awaited, not exec()'d: this runs in a task (a rebuild may be running meanwhile)
        path = await save_file_name(
            self, tr("Save diagnostics bundle"),
            str(Path.home() / default_bundle_name(record.name)), tr("Archives (*.tar.gz *.zip)"))
        if path:
            await self.save(Path(path))

    async def save(self, path: Path) -> None:
        """Write the bundle in a thread (diagnosing a long log takes a moment)."""
        record = self.record()
        if record is None:
            self.status.setText(tr("No build record to bundle yet."))
            return
        from tfwizard.core.building.report.bundle import make_bundle

        self.button.setEnabled(False)
        self.status.setText(tr("Saving…"))
        loop = asyncio.get_running_loop()
        try:
            bundle = await loop.run_in_executor(
                None, lambda: make_bundle(record, path, host=self.state.build_host,
                                          reports=self.reports()))
        except (TfWizardError, OSError) as exc:
            self.status.setText(tr("Could not save the bundle: {error}").format(error=exc))
            return
        finally:
            self.sync()
        self.saved = bundle.path
        self.status.setText(tr("Saved {path} ({size} KiB, secrets masked).").format(
            path=bundle.path, size=f"{bundle.size / 1024:.0f}"))
