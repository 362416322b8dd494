"""The plain text every match of a regex must contain: what logscan's fast path looks for.

`required_runs(pattern)` gives, per top-level alternative, the literal runs (escapes
resolved) that any match contains; `leading_literal(pattern)` the text every match starts
with (None when the pattern has top-level alternatives or starts with no literal).
"""

from __future__ import annotations

import re

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


def _skip(pattern: str, i: int) -> int:
    """Past the non-literal element at i: an escape, a class, a group, or one character."""
    ch = pattern[i]
    if ch == "\\":
        return i + 2
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
