"""Every text the wizard shows is marked for translation (issue 10).

The window runs in the pseudo language (`⟦text⟧` for every translated text); then every
visible widget text on every page — titles, labels, buttons, tooltips, placeholders,
menus, table headers, the findings panel with the core's messages — is scanned for
English prose outside the marks.
"""

from __future__ import annotations

import pytest

from tests.i18n_scan import unmarked

pytest.importorskip("PySide6")
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def visible_texts(root) -> list[str]:
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QGroupBox,
        QLabel,
        QLineEdit,
        QPlainTextEdit,
        QTableWidget,
        QTextBrowser,
        QTreeWidget,
        QWidget,
    )

    texts: list[str] = []
    for widget in [root, *root.findChildren(QWidget)]:
        if not widget.isVisibleTo(root) and widget is not root:
            continue
        if widget.toolTip():
            texts.append(widget.toolTip())
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QGroupBox):
            texts.append(widget.title())
        elif isinstance(widget, QLineEdit):
            texts.append(widget.placeholderText())
        elif isinstance(widget, QTextBrowser):
            texts.append(widget.toPlainText())
        elif isinstance(widget, QPlainTextEdit):
            texts.append(widget.placeholderText())
        elif isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        elif isinstance(widget, QTableWidget):
            texts += [widget.horizontalHeaderItem(i).text()
                      for i in range(widget.columnCount()) if widget.horizontalHeaderItem(i)]
        elif isinstance(widget, QTreeWidget):
            header = widget.headerItem()
            texts += [header.text(i) for i in range(header.columnCount())]
            for i in range(widget.topLevelItemCount()):
                item = widget.topLevelItem(i)
                texts += [item.text(c) for c in range(item.columnCount())]
                texts += [item.toolTip(c) for c in range(item.columnCount())]
        for action in widget.actions():
            texts += [action.text(), action.toolTip()]
    return [t for t in texts if t]


@pytest.fixture
def pseudo_gui(monkeypatch):
    from tfwizard.gui import i18n as gui_i18n

    monkeypatch.setenv("TFWIZARD_LANG", "pseudo")
    gui_i18n.install("pseudo")
    yield
    gui_i18n.install("en")


@pytest.mark.parametrize("host_name", ["ada-8.9-driver550", "ada-8.9-driver520",
                                       "no-gpu-server", "rocm-mi210", "wsl2-rtx4090",
                                       "aarch64-server", "small-laptop"])
def test_every_page_shows_only_marked_text(pseudo_gui, make_window, host_name):
    from tests.gui.conftest import host
    from tfwizard.gui.pages import PageId

    window = make_window(host=host(host_name))
    wizard = window.wizard
    seen: dict[str, list[str]] = {}
    for page_id in PageId:
        wizard.go_to(page_id)
        page = wizard.page(page_id)
        texts = [page.title(), page.subTitle(), *visible_texts(window)]
        for menu_action in window.menuBar().actions():
            texts.append(menu_action.text())
            if menu_action.menu():
                texts += [a.text() for a in menu_action.menu().actions()]
        bad = [line for text in texts for line in unmarked(text)]
        if bad:
            seen[page_id.name] = sorted(set(bad))
    assert not seen, "\n".join(f"{name}:\n  " + "\n  ".join(lines)
                               for name, lines in seen.items())
