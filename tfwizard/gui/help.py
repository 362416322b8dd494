"""The Help menu: the user guide read in the app (offline, from the installation), and
the About box (versions, the data folder, where builds are kept)."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow

from .i18n import tr
from .viewers import show_about, show_guide


def add_help_menu(window: QMainWindow) -> QAction:
    """Add Help > User guide (F1) and Help > About to the menu bar; returns the guide's
    action."""
    menu = window.menuBar().addMenu(tr("&Help"))
    menu.setObjectName("help-menu")
    action = QAction(tr("&User guide"), window)
    action.setObjectName("user-guide")
    action.setShortcut("F1")
    action.triggered.connect(lambda: show_guide(window))
    menu.addAction(action)
    about = QAction(tr("&About tfwizard"), window)
    about.setObjectName("about")
    about.triggered.connect(lambda: show_about(window))
    menu.addAction(about)
    return action
