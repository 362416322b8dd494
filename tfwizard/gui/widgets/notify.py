"""A desktop notification when a long job ends, through the system tray where there is one."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget


def notify(parent: QWidget, title: str, text: str, *, ok: bool) -> bool:
    """Show `title`/`text` as a tray message; False where no tray exists (nothing shown).

    The tray icon is kept on `parent` and reused, so each build does not add one.
    """
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return False
    tray = parent.findChild(QSystemTrayIcon, "build-tray")
    if tray is None:
        tray = QSystemTrayIcon(QApplication.windowIcon(), parent)
        tray.setObjectName("build-tray")
    tray.show()
    icon = (QSystemTrayIcon.MessageIcon.Information if ok
            else QSystemTrayIcon.MessageIcon.Critical)
    tray.showMessage(title, text, icon, 15000)
    return True
