"""Find text on screen that nobody marked for translation.

Run a front end with `TFWIZARD_LANG=pseudo` (every translated text comes back as
⟦text⟧), then `unmarked(output)` lists the lines that still hold English prose outside
those marks. What is not prose is allowed: paths, versions, flags, recipe keys, finding
codes, commands in backticks, numbers and units, and the values a message quotes.
"""

from __future__ import annotations

import re

_MARKED = re.compile(r"⟦[^⟦⟧]*⟧")
_HTML = re.compile(r"<[^<>]*>|&[a-z]+;|&#\d+;")
# a command shown as code in a label, as a backtick span is in plain text
_CODE = re.compile(r"<code>.*?</code>")
_QUOTED = re.compile(r"`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"")
# two or more English words in a row: "is not", "No GPU" ... (lower-case second word)
_PROSE = re.compile(r"\b[A-Za-z][a-z]+[,:;]?\s+[a-z]{2,}\b")


# a marked text the GUI shortened ("⟦A long mess…"): its closing mark was cut off
_CUT = re.compile(r"⟦[^⟦⟧]*…")


def strip_marked(text: str) -> str:
    """The text with every ⟦...⟧ (nested ones included) removed."""
    previous = None
    while previous != text:
        previous, text = text, _CUT.sub(" ", _MARKED.sub(" ", text))
    return text


def unmarked(output: str, allow: tuple[str, ...] = ()) -> list[str]:
    """Lines of `output` with English prose outside ⟦ ⟧ (after removing `allow` texts)."""
    bad = []
    for line in output.splitlines():
        rest = strip_marked(_HTML.sub(" ", _CODE.sub(" ", line)))
        for text in allow:
            rest = rest.replace(text, " ")
        rest = _QUOTED.sub(" ", rest)
        if _PROSE.search(rest):
            bad.append(line)
    return bad
