"""Render resources/icons/tfwizard-{48,128,256}.png from resources/icons/tfwizard.svg.

The SVG is the one source of the icon (drawn for tfwizard); run this after editing it:
    QT_QPA_PLATFORM=offscreen python installer/linux/make_icons.py
Uses QtSvg from PySide6 (the `gui` extra), so no other image library is needed.
"""

from __future__ import annotations

import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[2] / "resources" / "icons"
SIZES = (48, 128, 256)


def main() -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(ICONS / "tfwizard.svg"))
    if not renderer.isValid():
        print("tfwizard.svg does not parse", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = ICONS / f"tfwizard-{size}.png"
        if not image.save(str(out), "PNG"):
            print(f"cannot write {out}", file=sys.stderr)
            return 1
        print(out)
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
