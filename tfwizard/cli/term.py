"""Findings in a terminal: wrapped to its width with a hanging indent, severities coloured
(never with NO_COLOR, never when piped: then the lines stay as they are, one per finding)."""

from __future__ import annotations

import os
import shutil
import textwrap
import unicodedata
from dataclasses import dataclass

from .context import Environment

#: SGR colours of the severities: red, yellow, cyan
COLOURS = {"error": "31;1", "warning": "33;1", "info": "36"}


@dataclass(frozen=True)
class Terminal:
    """How to print to standard output: width None = do not wrap (piped)."""

    width: int | None
    colour: bool

    def paint(self, severity: str, word: str) -> str:
        """`word` in the severity's colour when colour is on."""
        code = COLOURS.get(severity)
        return f"\x1b[{code}m{word}\x1b[0m" if self.colour and code else word

    def wrap(self, first: str, text: str, indent: int) -> list[str]:
        """`first` + `text` wrapped to the width; continuation lines indented by `indent`."""
        if self.width is None:
            return [first + text]
        width = max(40, self.width) - _extra_width(text)
        return textwrap.wrap(text, width=width, initial_indent=" " * _width(first),
                             subsequent_indent=" " * indent, break_long_words=False,
                             break_on_hyphens=False) or [""]


def terminal(env: Environment, stderr: bool = False) -> Terminal:
    """The terminal standard output (standard error with `stderr`: the gates' findings go
    there) is, or a plain one when it is not a terminal."""
    stream = env.stderr if stderr else env.stdout
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return Terminal(None, False)
    columns = env.env.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else _columns(stream)
    return Terminal(width, "NO_COLOR" not in env.env and env.env.get("TERM") != "dumb")


def finding_lines(term: Terminal, severity: str, word: str, code: str, message: str) -> list[str]:
    """"ERROR CODE: message" wrapped, the severity word coloured."""
    head = f"{word} {code}: "
    lines = term.wrap(head, message, indent=7)
    first = lines[0][_width(head):] if term.width is not None else message
    return [term.paint(severity, word) + f" {code}: " + first, *lines[1:]]


def _columns(stream: object) -> int:
    """The width of the terminal `stream` is (its own size: standard output may be piped
    while standard error is the terminal), else shutil's guess."""
    try:
        return os.get_terminal_size(stream.fileno()).columns  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return shutil.get_terminal_size((100, 24)).columns


def _width(text: str) -> int:
    """Columns `text` takes (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _extra_width(text: str) -> int:
    """A margin for wide characters, which textwrap counts as one column."""
    return min(20, _width(text) - len(text))
