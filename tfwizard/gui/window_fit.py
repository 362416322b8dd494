"""The window's size: the first one fits the screen's available area (a 1024x700 laptop
panel included), and the size and maximised state the user left are kept (QSettings)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRect, QSettings, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

#: the size the wizard asks for on a screen with room for it
PREFERRED = QSize(1000, 780)
#: room kept for a window manager's title bar and borders, which Qt only learns once
#: the window is shown (then `fit_frame` corrects the rest)
DECORATION = QSize(16, 40)
GEOMETRY_KEY, MAXIMISED_KEY = "window/geometry", "window/maximised"


def available(widget: QWidget) -> QRect:
    """The screen area a window may take (without panels and docks): the widget's
    screen, else the primary one."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1024, 700)


def first_size(area: QRect) -> QSize:
    """The preferred size, shrunk to the area less the decorations."""
    return QSize(min(PREFERRED.width(), area.width() - DECORATION.width()),
                 min(PREFERRED.height(), area.height() - DECORATION.height()))


def place(window: QWidget, settings: QSettings | None) -> bool:
    """Give the window its saved geometry, or the first size centred on its screen;
    returns whether it was maximised when it was last closed (show it so)."""
    area = available(window)
    saved = settings.value(GEOMETRY_KEY) if settings is not None else None
    if isinstance(saved, QByteArray | bytes) and window.restoreGeometry(QByteArray(saved)):
        fit_frame(window)
    else:
        size = first_size(area)
        window.resize(size)
        window.move(area.center() - QRect(0, 0, size.width(), size.height()).center())
    value = settings.value(MAXIMISED_KEY, False) if settings is not None else False
    return value in (True, "true", "1", 1)


def fit_frame(window: QWidget) -> None:
    """Shrink and move the window so that its frame (title bar included, once shown) is
    inside the screen's available area."""
    area = available(window)
    frame = window.frameGeometry()
    extra = QSize(frame.width() - window.width(), frame.height() - window.height())
    width = min(window.width(), area.width() - extra.width())
    height = min(window.height(), area.height() - extra.height())
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    x = min(max(frame.x(), area.left()), area.right() + 1 - frame.width())
    y = min(max(frame.y(), area.top()), area.bottom() + 1 - frame.height())
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)


def remember(window: QWidget, settings: QSettings | None) -> None:
    """Keep the window's geometry and maximised state for the next start."""
    if settings is None:
        return
    settings.setValue(GEOMETRY_KEY, window.saveGeometry())
    settings.setValue(MAXIMISED_KEY, window.isMaximized())
