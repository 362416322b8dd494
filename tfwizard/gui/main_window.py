"""The wizard window (a placeholder until the GUI pages land)."""

from __future__ import annotations

import sys


def run_gui() -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication.instance() or QApplication(sys.argv)
    label = QLabel("tfwizard: the wizard pages are coming. Use `tfwizard --help` meanwhile.")
    label.setWindowTitle("tfwizard")
    label.resize(600, 120)
    label.show()
    return app.exec()
