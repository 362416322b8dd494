"""The Help menu: the user guide, and where to read it when this installation lacks it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QDesktopServices
from PySide6.QtWidgets import QMainWindow, QMessageBox

from .i18n import tr


def guide_path() -> Path | None:
    """docs/guide.md of the source tree this tfwizard runs from; None when installed without
    it (a wheel ships the package only)."""
    path = Path(__file__).resolve().parents[2] / "docs" / "guide.md"
    return path if path.is_file() else None


def open_guide(window: QMainWindow) -> QUrl | None:
    """Open the user guide with the desktop's viewer; the URL opened, or None (then a box
    says where the guide is)."""
    path = guide_path()
    if path is not None:
        url = QUrl.fromLocalFile(str(path))
        if QDesktopServices.openUrl(url):
            return url
    box = QMessageBox(QMessageBox.Icon.Information, tr("User guide"),
                      tr("The user guide is docs/guide.md in tfwizard's source; `tfwizard "
                         "--help` lists the commands, and each page's subtitle says what it "
                         "asks."), QMessageBox.StandardButton.Ok, window)
    box.setObjectName("guide-box")
    box.open()
    return None


def add_help_menu(window: QMainWindow) -> QAction:
    """Add Help > User guide (F1) to the window's menu bar; returns the action."""
    menu = window.menuBar().addMenu(tr("&Help"))
    menu.setObjectName("help-menu")
    action = QAction(tr("&User guide"), window)
    action.setObjectName("user-guide")
    action.setShortcut("F1")
    action.triggered.connect(lambda: open_guide(window))
    menu.addAction(action)
    return action
