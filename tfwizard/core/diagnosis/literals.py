"""The plain text every match of a regex must contain: what logscan's fast path looks for,
and a signature's regex compiled with it (LinePattern, which the prefilter and the scanner
both read).

`required_runs(pattern)` gives, per top-level alternative, the literal runs (escapes
resolved) that any match contains; `leading_literal(pattern)` the text every match starts
with (None when the pattern has top-level alternatives or starts with no literal).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: characters that stand for themselves in a regex (outside classes and groups): any
#: character beyond ASCII too (a localised compiler's 错误, a typographic quote)
_PLAIN = re.compile(r"[A-Za-z0-9 _:'\"=,/<>!@%&;#~`\u0080-\U0010ffff-]+")
_ESCAPED_PLAIN = set(".()[]{}*+?|^$\\/-'\"#&~ :")


def leading_literal(pattern: str) -> str | None:
    """The plain text every match starts with (escapes resolved), or None."""
    if len(_split_top(pattern)) > 1:
        return None
    pieces = _pieces(pattern)
    return pieces[0][1] if pieces and pieces[0][0] == 0 else None


def _pieces(branch: str) -> list[tuple[int, str]]:
    """The runs of literal text in a regex without top-level `|`: (start, text) each.

    A run ends at anything that is not a plain character or an escaped punctuation mark
    (classes, groups, `.`, `\\d`, anchors); a character made optional by `?`, `*` or `{` is
    dropped, and `+` ends the run after its character.
    """
    pieces: list[tuple[int, str]] = []
    run: list[str] = []
    start = 0

    def close() -> None:
        if run:
            pieces.append((start, "".join(run)))
            run.clear()

    i = 0
    while i < len(branch):
        ch = branch[i]
        if ch == "\\" and i + 1 < len(branch) and branch[i + 1] in _ESCAPED_PLAIN:
            literal, step = branch[i + 1], 2
        elif _PLAIN.fullmatch(ch):
            literal, step = ch, 1
        else:
            close()
            i = _skip(branch, i)
            continue
        after = branch[i + step:i + step + 1]
        if after and after in "?*{":
            close()  # optional: the run ends before it
            i += step
            continue
        if not run:
            start = i
        run.append(literal)
        if after == "+":
            close()
            step += 1
        i += step
    close()
    return pieces


#: a counted repeat ({3}, {0,80}, {2,}), lazy or not: its digits are no literal text
_COUNTED = re.compile(r"\{\d*(?:,\d*)?\}\??")


def _skip(pattern: str, i: int) -> int:
    """Past the non-literal element at i: an escape, a class, a group, a counted repeat,
    or one character."""
    ch = pattern[i]
    if ch == "\\":
        return i + 2
    if ch == "{" and (counted := _COUNTED.match(pattern, i)):
        return counted.end()
    if ch == "[":
        end = pattern.find("]", i + 2)
        return len(pattern) if end < 0 else end + 1
    if ch == "(":
        depth = 0
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                i += 2
                continue
            if c == "[":
                i = _skip(pattern, i)
                continue
            depth += c == "("
            depth -= c == ")"
            i += 1
            if depth == 0:
                break
        return i
    return i + 1


def _top_level(pattern: str) -> str:
    """The pattern with escapes, classes and groups blanked out (positions kept)."""
    depth, top, i = 0, [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            top.append("\x00\x00")
            i += 2
            continue
        if ch == "[":
            end = pattern.find("]", i + 2)
            end = end if end > 0 else len(pattern)
            top.append("\x00" * (end - i + 1))
            i = end + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            top.append("\x00")
            i += 1
            continue
        top.append(ch if depth == 0 else "\x00")
        i += 1
    return "".join(top)


def _split_top(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern (itself when it has none)."""
    flat = _top_level(pattern)
    parts, start = [], 0
    for i, ch in enumerate(flat):
        if ch == "|":
            parts.append(pattern[start:i])
            start = i + 1
    parts.append(pattern[start:])
    return parts


def required_runs(pattern: str) -> tuple[tuple[str, ...], ...] | None:
    """Per top-level alternative of `pattern`, the plain substrings every match contains.

    Its runs of literal text outside groups and classes (escaped punctuation counts as
    text), 4 characters or longer, longest first; None when an alternative has none.
    """
    out: list[tuple[str, ...]] = []
    for branch in _split_top(pattern):
        runs = sorted({text for _start, text in _pieces(branch) if len(text) >= 4},
                      key=lambda t: (-len(t), t))
        if not runs:
            return None
        out.append(tuple(runs))
    return tuple(out)


# -- a signature's pattern ------------------------------------------------------------

#: the shortest leading literal that makes a pattern wrap-tolerant (long enough to be
#: specific: the lead is then the only text the fast path can look for); the lead is its
#: first MIN_LEAD characters, so a literal wrapped after them is found too
MIN_LEAD = 16


#: an unescaped `.*` or `.+`: across a joined line it could swallow the next line's words
#: (looked for outside character classes, where `.+` is two characters)
_ANY_RUN = re.compile(r"(?<!\\)\.[*+]")
_CLASS = re.compile(r"(?<!\\)\[(?:\\.|[^\]\\])*\]")


@dataclass(frozen=True)
class LinePattern:
    """One regex of a signature, with what the fast path needs to know about it."""

    key: str
    regex: re.Pattern[str]
    #: per top-level alternative, the plain runs every match of it contains, longest first
    #: (None: some alternative has none, so any line may match)
    runs: tuple[tuple[str, ...], ...] | None
    #: the literal the pattern starts with, when long enough to find wrapped lines
    lead: str | None = None
    #: may a match run on into the next lines (no `.*` or `.+` that would swallow them)
    wraps: bool = False
    #: one literal per alternative: every matching line contains one of them (None: any)
    anchors: tuple[str, ...] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        anchors = ((self.lead,) if self.lead is not None
                   else None if self.runs is None else tuple(r[0] for r in self.runs))
        object.__setattr__(self, "anchors", anchors)


def line_pattern(key: str, pattern: str | re.Pattern[str]) -> LinePattern:
    """Compile `pattern` for signature `key` and work out its anchors and lead."""
    regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    if regex.flags & re.IGNORECASE:
        return LinePattern(key, regex, None)
    wraps = not _ANY_RUN.search(_CLASS.sub("", regex.pattern))
    lead = leading_literal(regex.pattern)
    if lead is None or len(lead) < MIN_LEAD or not wraps:
        lead = None
    else:  # its first MIN_LEAD characters: a console may wrap the rest of it too
        lead = lead[:MIN_LEAD]
    return LinePattern(key, regex, required_runs(regex.pattern), lead, wraps)
