"""One font family for a rich-text table whose cells mix scripts (the zh_CN Welcome page's
host table: Chinese labels, Latin values).

Qt lays out each line with the ascent of the fonts it uses: a cell in Latin only gets the
primary font's, a cell with Chinese the fallback CJK font's (larger), and cells aligned to
the top then put their baselines a few pixels apart. With the table in the family Qt falls
back to (which has Latin glyphs too) every line has the same ascent: one baseline a row.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QFont, QFontInfo, QGuiApplication, QTextLayout


def fallback_family(texts: Iterable[str], font: QFont | None = None) -> str | None:
    """The family Qt falls back to for `texts` in `font` (default: the application's), the
    tallest when there are several; None when `font` draws them all itself."""
    font = font or QGuiApplication.font()
    own = QFontInfo(font).family()
    layout = QTextLayout(" ".join(texts), font)
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    others = [(run.rawFont().ascent(), run.rawFont().familyName())
              for run in layout.glyphRuns() if run.rawFont().familyName() not in ("", own)]
    return max(others)[1] if others else None
