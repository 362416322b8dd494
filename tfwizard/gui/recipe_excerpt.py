"""The line of a recipe that does not parse, with a caret under the column where TOML
stopped: shown in the "Cannot open the recipe" box (UX review, whole window)."""

from __future__ import annotations

import html
from pathlib import Path

import tomlkit
import tomlkit.exceptions

#: a longer line is cut around the caret
_WIDTH = 72


def toml_excerpt(path: str | Path) -> str:
    """"line N:" then the offending line and a caret under its column, or "" when the file
    parses (the problem is then a key's value, already named in the message) or cannot be
    read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        lines = text.splitlines() or [""]
        index = min(max(exc.line, 1), len(lines)) - 1
        line, col = lines[index].expandtabs(4), max(exc.col, 1) - 1
        start = max(0, min(col - _WIDTH // 2, len(line) - _WIDTH))
        shown = line[start:start + _WIDTH]
        return f"{exc.line}: {shown}\n{' ' * (len(str(exc.line)) + 2 + col - start)}^"
    except (OSError, UnicodeDecodeError):
        return ""
    return ""


def excerpt_html(excerpt: str) -> str:
    """The excerpt as monospace rich text (the caret lines up)."""
    return f"<pre>{html.escape(excerpt)}</pre>" if excerpt else ""
