"""The application icon, from resources/icons/ (the files the desktop entry installs)."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QIcon

from tfwizard.core.desktop import ICON_SIZES
from tfwizard.core.resources import resource_path


def app_icon() -> QIcon:
    """tfwizard's icon: the PNG sizes, and the SVG for every other size."""
    icon = QIcon()
    for size in ICON_SIZES:
        icon.addFile(str(resource_path("icons", f"tfwizard-{size}.png")), QSize(size, size))
    icon.addFile(str(resource_path("icons", "tfwizard.svg")))
    return icon
