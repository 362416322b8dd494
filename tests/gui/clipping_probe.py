"""Render every wizard page at a window size and report the texts that do not fit.

Run as a program (`python -m tests.gui.clipping_probe --lang zh_CN --host ada-8.9-driver550`)
so that QT_SCALE_FACTOR takes effect before the QApplication exists; it prints one JSON
object: the pages it reached and, per page, each clipped text with why. A text is clipped
when a visible QLabel or button is smaller than its text: wider than its width on one
line, or taller than its height once wrapped (heightForWidth), or cut by a parent that
does not scroll.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TOLERANCE = 1  # px: rounding at fractional scale factors


def _label_problem(label) -> str:
    from PySide6.QtCore import Qt

    text = label.text()
    if not text or (label.pixmap() is not None and not label.pixmap().isNull()):
        return ""
    area = label.contentsRect()
    if label.wordWrap():
        need = label.heightForWidth(label.width())
        if need > label.height() + TOLERANCE:
            return f"wrapped text needs {need} px of height, has {label.height()}"
        return ""
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and "<" in text)
    if rich:
        hint = label.sizeHint()
        if hint.width() > label.width() + TOLERANCE or hint.height() > label.height() + TOLERANCE:
            return f"rich text needs {hint.width()}x{hint.height()}, has " \
                   f"{label.width()}x{label.height()}"
        return ""
    metrics = label.fontMetrics()
    lines = text.split("\n")
    width = max(metrics.horizontalAdvance(line) for line in lines) + 2 * label.margin()
    height = metrics.height() * len(lines)
    if width > area.width() + TOLERANCE:
        return f"text needs {width} px of width, has {area.width()}"
    if height > area.height() + TOLERANCE:
        return f"text needs {height} px of height, has {area.height()}"
    return ""


def _button_problem(button) -> str:
    hint = button.sizeHint()
    if not button.text():
        return ""
    if hint.width() > button.width() + TOLERANCE:
        return f"button needs {hint.width()} px of width, has {button.width()}"
    if button.fontMetrics().height() > button.height() + TOLERANCE:
        return f"button text needs {button.fontMetrics().height()} px of height, " \
               f"has {button.height()}"
    return ""


def _cut_by_parent(widget, root) -> str:
    """Why a parent that does not scroll cuts the widget off, or ''."""
    from PySide6.QtWidgets import QAbstractScrollArea

    rect = widget.rect()
    child = widget
    parent = widget.parentWidget()
    while parent is not None and child is not root:
        if isinstance(parent.parentWidget(), QAbstractScrollArea):
            return ""  # inside a viewport: the user can scroll to it
        rect = rect.translated(child.pos())
        if not parent.rect().adjusted(-TOLERANCE, -TOLERANCE, TOLERANCE,
                                      TOLERANCE).contains(rect):
            return f"cut off by {type(parent).__name__} {parent.objectName()!r}"
        rect = rect.intersected(parent.rect())
        child, parent = parent, parent.parentWidget()
    return ""


def clipped_texts(root) -> list[str]:
    """Each visible label or button under `root` whose text does not fit, with why."""
    from PySide6.QtWidgets import QAbstractButton, QLabel

    found = []
    for widget in root.findChildren(QLabel) + root.findChildren(QAbstractButton):
        if not widget.isVisibleTo(root) or not widget.text():
            continue
        if isinstance(widget, QLabel):
            problem = _label_problem(widget)
        else:
            problem = _button_problem(widget)
        problem = problem or _cut_by_parent(widget, root)
        if problem:
            name = widget.objectName() or type(widget).__name__
            found.append(f"{name} {widget.text()[:60]!r}: {problem}")
    return found


def probe(lang: str, host_name: str, cc: list[str] | None, width: int, height: int) -> dict:
    """Show the window at width x height on every page it reaches; the clipped texts."""
    from PySide6.QtWidgets import QApplication

    from tests.gui.conftest import host
    from tfwizard.gui import i18n as gui_i18n
    from tfwizard.gui.main_window import MainWindow
    from tfwizard.gui.pages import PageId

    app = QApplication.instance() or QApplication([])
    gui_i18n.install(lang)
    window = MainWindow(host=host(host_name), ask_save=lambda: "discard")
    if cc is not None:
        window.wizard.state.update({"cuda.compute_capabilities": cc})
    window.resize(width, height)
    window.show()
    report: dict = {"ratio": window.devicePixelRatio(), "pages": {}}
    for page_id in PageId:
        reached = PageId(window.wizard.go_to(page_id))
        if reached != page_id:  # blocked on the way (no build yet): show it directly
            window.wizard.setStartId(int(page_id))
            window.wizard.restart()
            reached = PageId(window.wizard.currentId())
        for _ in range(5):
            app.processEvents()
        report.setdefault("asked", {})[page_id.name] = reached.name
        if reached.name in report["pages"]:
            continue
        report["pages"][reached.name] = clipped_texts(window)
        # a page whose minimum is taller than the window grows the wizard past it (and
        # used to grow the window: then nothing looked clipped)
        report.setdefault("sizes", {})[reached.name] = [
            window.width(), window.height(), window.wizard.geometry().bottom() + 1]
    window.close()
    return report


def main(argv: list[str] | None = None) -> int:
    """Print the probe's report as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="en")
    parser.add_argument("--host", default="ada-8.9-driver550")
    parser.add_argument("--cc", default=None, help="comma-separated compute capabilities")
    parser.add_argument("--size", default="1024x700")
    args = parser.parse_args(argv)
    width, height = (int(x) for x in args.size.split("x"))
    cc = args.cc.split(",") if args.cc is not None else None
    json.dump(probe(args.lang, args.host, cc, width, height), sys.stdout, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
