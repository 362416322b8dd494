"""The core's messages as label text: `commands` in backticks shown as code, not as
backticks (the CLI prints the backticks; a label can do better)."""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`\n]+)`")


def code_html(text: str) -> str:
    """Plain text with `code` spans as escaped HTML (line breaks kept)."""
    parts = []
    at = 0
    for m in _CODE.finditer(text):
        parts.append(html.escape(text[at:m.start()]))
        parts.append(f"<code>{html.escape(m.group(1))}</code>")
        at = m.end()
    parts.append(html.escape(text[at:]))
    return "".join(parts).replace("\n", "<br>")


def grey(text: str) -> str:
    """A piece of HTML in the secondary colour (a key, a source list)."""
    return f"<span style='color:#6b6b6b'>{text}</span>"


def diagnosis_html(diagnosis: object, quotes: int | None = None) -> str:
    """A diagnosis as a card's text: its title in bold, the log's quoted words in a
    fixed-width font (underscores and all), then the cause, next step and fix, each a
    paragraph that wraps (the CLI's lines, core/diagnosis/text.py)."""
    from tfwizard.core.diagnosis.text import diagnosis_lines

    parts = [f"<b>{html.escape(str(getattr(diagnosis, 'title', '')))}</b>"]
    for line in diagnosis_lines(diagnosis, quotes=quotes):  # type: ignore[arg-type]
        if line.startswith("> "):
            parts.append(f"<code>{html.escape(line[2:])}</code>")
        else:
            parts.append(code_html(line))
    return "<br>".join(parts)
