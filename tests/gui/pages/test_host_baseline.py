"""The Welcome page's host table sits each row's label and value on one baseline, in
Chinese too (Chinese labels beside Latin values drew in two fonts with two ascents: the
labels sat ~3 px off their values). Measured in the label's own text layout, offscreen."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextDocument

from tfwizard.gui import i18n as gui_i18n

from ..conftest import host

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def _rows(label) -> list[tuple[float, str]]:
    """(baseline y, text) of each table cell's first line, as the label lays them out."""
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    doc.setTextWidth(label.width())
    layout = doc.documentLayout()
    out = []
    block = doc.begin()
    while block.isValid():
        if block.layout().lineCount() and block.text():
            line = block.layout().lineAt(0)
            out.append((round(layout.blockBoundingRect(block).y() + line.y() + line.ascent(),
                              2), block.text()))
        block = block.next()
    return out


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_each_host_row_has_one_baseline(qtbot, make_window, lang):
    gui_i18n.install(lang)
    try:
        window = make_window(host=host("ada-8.9-driver550"))
        welcome = window.wizard.welcome
        welcome.sync()
        cells = _rows(welcome.build_label)[1:]  # the title, then label, value, label, ...
        assert len(cells) >= 14 and len(cells) % 2 == 0, cells
        pairs = list(zip(cells[::2], cells[1::2], strict=True))
        off = [(k, v, round(vy - ky, 2)) for (ky, k), (vy, v) in pairs if ky != vy]
        assert not off, off
        if lang == "zh_CN":
            assert any(k == "NVIDIA 驱动" for (_y, k), _v in pairs)
            assert "font-family" in welcome.build_label.text()
        else:
            assert "font-family" not in welcome.build_label.text()  # one font already
    finally:
        gui_i18n.install("en")
