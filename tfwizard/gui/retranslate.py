"""Switching the language in place: every text a widget shows now, put into the new
language without rebuilding the widget (so a finished build keeps its log and result).

Every text the wizard shows came from the one gettext catalog: a source text as it is, or
one with `{placeholders}` filled in. So a text shown in the old language is looked up
back to its English source, exactly or as a template whose placeholders are matched (a
placeholder's value is itself translated when it is a text of the catalog: "Phase:
{phase}" with "building"), and shown in the new language. Text that is no catalog text
(a path, a log line, what the user typed) stays as it is; texts made of several pieces
are made again by their owners (`MainWindow.set_language` asks the pages to show the
recipe and its findings again).

A text shown in two meanings with one translation (Chinese uses one word for "failed"
and "Failed") is remembered with the English it was made from when this module put it
there, so switching back gives the same English.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache, partial
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QProgressBar,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QTreeWidget,
    QWidget,
    QWizard,
    QWizardPage,
)

from tfwizard.core import i18n

_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_MAX_DEPTH = 3

#: what the last switch made of a text: (widget id, property, text shown) -> its English
Memory = dict[tuple[int, str, str], str]


@cache
def source_texts() -> tuple[str, ...]:
    """Every text of the catalog (its English source), from any language's compiled .mo."""
    texts: set[str] = set()
    for lang in i18n.LANGUAGES:
        cat = i18n.catalog(lang)
        table = getattr(cat, "_catalog", None)
        if isinstance(table, dict):
            texts.update(k for k in table if isinstance(k, str) and k)
    return tuple(sorted(texts))


def _pattern(shown: str) -> tuple[re.Pattern[str], list[str]] | None:
    """A regular expression matching a template as shown, and its placeholder names."""
    parts: list[str] = []
    names: list[str] = []
    at = 0
    for m in _FIELD.finditer(shown):
        parts.append(re.escape(shown[at:m.start()]))
        at = m.end()
        if m.group(0) in ("{{", "}}"):
            parts.append(re.escape(m.group(0)[0]))
            continue
        name = re.split(r"[!:]", m.group(1), maxsplit=1)[0] or f"_{len(names)}"
        group = "f" + re.sub(r"\W", "_", name)
        if name in names:
            parts.append(f"(?P={group})")
        else:
            names.append(name)
            parts.append(f"(?P<{group}>.+?)")
    if not names:
        return None
    parts.append(re.escape(shown[at:]))
    try:
        return re.compile("".join(parts), re.DOTALL), names
    except re.error:
        return None


class Translator:
    """Texts shown in language `old`, made again in language `new`."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = i18n.catalog(old), i18n.catalog(new)
        self.exact: dict[str, str] = {}
        #: (the longest literal piece, pattern, placeholder names, source text)
        self.templates: list[tuple[str, re.Pattern[str], list[str], str]] = []
        for source in source_texts():
            shown = self.old.gettext(source)
            self.exact.setdefault(shown, source)
            if "{" in source:
                found = _pattern(shown)
                if found is not None:
                    literal = max(_FIELD.split(shown)[::2] or [""], key=len)
                    self.templates.append((literal, found[0], found[1], source))
        # the longest templates first: "Phase: {phase} (step {step})" before "Phase: {phase}"
        self.templates.sort(key=lambda t: -len(t[3]))

    def source(self, text: str, depth: int = 0) -> tuple[str, dict[str, str]] | None:
        """The English source of a shown text and its placeholders' values (each in the
        new language already), or None when it is no catalog text."""
        if text in self.exact:
            return self.exact[text], {}
        if depth >= _MAX_DEPTH or not text:
            return None
        for literal, pattern, names, source in self.templates:
            if literal not in text:
                continue
            m = pattern.fullmatch(text)
            if m is None:
                continue
            values = {name: self.translate(m.group("f" + re.sub(r"\W", "_", name)), depth + 1)
                      for name in names}
            return source, values
        return None

    def translate(self, text: str, depth: int = 0, english: str | None = None) -> str:
        """`text` in the new language (unchanged when it is no catalog text); `english`:
        the source it is known to come from."""
        if english is not None and "{" not in english:
            return self.new.gettext(english)
        found = self.source(text, depth)
        if found is None:
            return text
        source, values = found
        return fill(self.new.gettext(source), values)

    def english(self, text: str) -> str | None:
        """The English source of a shown text with no placeholders, for the memory."""
        found = self.source(text)
        return found[0] if found is not None and not found[1] else None


def fill(template: str, values: dict[str, str]) -> str:
    """A template's placeholders replaced by the values (as text: no format specs)."""
    counter = iter(range(len(values) + 1))

    def one(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        name = re.split(r"[!:]", m.group(1), maxsplit=1)[0] or f"_{next(counter)}"
        return values.get(name, m.group(0))

    return _FIELD.sub(one, template)


# -- widgets ---------------------------------------------------------------------------------

Getter = Callable[[], str]
Setter = Callable[[str], None]


def _texts(widget: QWidget) -> Iterator[tuple[str, Getter, Setter]]:
    """(property name, getter, setter) of every text a widget shows."""
    yield "toolTip", widget.toolTip, widget.setToolTip
    if widget.isWindow():
        yield "windowTitle", widget.windowTitle, widget.setWindowTitle
    if isinstance(widget, QLabel):
        yield "text", widget.text, widget.setText
    elif isinstance(widget, QAbstractButton):
        yield "text", widget.text, widget.setText
    elif isinstance(widget, QGroupBox):
        yield "title", widget.title, widget.setTitle
    elif isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit):
        yield "placeholder", widget.placeholderText, widget.setPlaceholderText
    elif isinstance(widget, QProgressBar):
        yield "format", widget.format, widget.setFormat
    elif isinstance(widget, QAbstractSpinBox):
        yield "special", widget.specialValueText, widget.setSpecialValueText
    elif isinstance(widget, QMenu):
        yield "title", widget.title, widget.setTitle
    elif isinstance(widget, QWizardPage):
        yield "title", widget.title, widget.setTitle
        yield "subTitle", widget.subTitle, widget.setSubTitle
    yield from _item_texts(widget)
    for index, action in enumerate(widget.actions()):
        yield f"action{index}", action.text, action.setText
        yield f"actionTip{index}", action.toolTip, action.setToolTip


def _item_texts(widget: QWidget) -> Iterator[tuple[str, Getter, Setter]]:
    """The texts of a list, combo, table, tree or tab widget's items."""
    if isinstance(widget, QComboBox) and not widget.isEditable():
        for i in range(widget.count()):
            yield f"item{i}", partial(widget.itemText, i), partial(widget.setItemText, i)
            yield f"itemTip{i}", partial(_combo_tip, widget, i), partial(_set_combo_tip, widget, i)
    elif isinstance(widget, QListWidget):
        for i in range(widget.count()):
            item = widget.item(i)
            yield f"item{i}", item.text, item.setText
            yield f"itemTip{i}", item.toolTip, item.setToolTip
    elif isinstance(widget, QTabWidget):
        for i in range(widget.count()):
            yield f"tab{i}", partial(widget.tabText, i), partial(widget.setTabText, i)
    elif isinstance(widget, QTableWidget):
        for c in range(widget.columnCount()):
            head = widget.horizontalHeaderItem(c)
            if head is not None:
                yield f"head{c}", head.text, head.setText
    elif isinstance(widget, QTreeWidget):
        header = widget.headerItem()
        for c in range(header.columnCount()):
            yield f"head{c}", partial(header.text, c), partial(header.setText, c)


def _combo_tip(combo: QComboBox, index: int) -> str:
    return str(combo.itemData(index, Qt.ItemDataRole.ToolTipRole) or "")


def _set_combo_tip(combo: QComboBox, index: int, text: str) -> None:
    combo.setItemData(index, text, Qt.ItemDataRole.ToolTipRole)


def _wizard_buttons(wizard: QWizard, translator: Translator) -> None:
    """QWizard keeps its buttons' texts itself (and a page may have its own): set there,
    or the next page change would put the old ones back."""
    for which in QWizard.WizardButton:
        if which in (QWizard.WizardButton.NoButton, QWizard.WizardButton.NButtons):
            continue
        own = wizard.buttonText(which)
        for page_id in wizard.pageIds():
            page = wizard.page(page_id)
            text = page.buttonText(which)
            if text != own:  # the page's own text
                page.setButtonText(which, translator.translate(text))
        wizard.setButtonText(which, translator.translate(own))


def retranslate(root: QWidget, old: str, new: str, memory: Memory) -> int:
    """Put every text under `root` (its own and its children's) from `old` into `new`;
    the number of texts changed. `memory` carries what this switch made to the next."""
    translator = Translator(old, new)
    made: Memory = {}
    changed = 0
    for widget in [root, *root.findChildren(QWidget)]:
        if isinstance(widget, QWizard):
            _wizard_buttons(widget, translator)
        for name, get, put in _texts(widget):
            text = get()
            if not text:
                continue
            english = memory.get((id(widget), name, text))
            new_text = translator.translate(text, english=english)
            if new_text != text:
                # quietly: a list item's new text is no tick the page should write
                was = widget.blockSignals(True)
                try:
                    put(new_text)
                finally:
                    widget.blockSignals(was)
                changed += 1
            source = english or translator.english(text)
            if source is not None:
                made[(id(widget), name, new_text)] = source
    memory.clear()
    memory.update(made)
    return changed


def untranslated(root: QWidget) -> list[str]:
    """Texts under `root` that are catalog sources shown untranslated in the current
    language (for tests: a switch that missed them)."""
    shown = i18n.catalog(i18n.language())
    out: list[Any] = []
    for widget in [root, *root.findChildren(QWidget)]:
        for _name, get, _put in _texts(widget):
            text = get()
            if text and text in source_texts() and shown.gettext(text) != text:
                out.append(text)
    return out
