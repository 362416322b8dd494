"""A pasted log read as its tools printed it: its indentation off, its cut lines joined.

A paste quoted as an indented block (Markdown's code block of four spaces, a YAML file's or
a reply's quote) has every line indented alike, which a pattern anchored at a tool's first
words (`^ERROR: `) does not expect: the common indentation is taken off first (`indent`).

A paste from a terminal that breaks long lines at its width (Windows' console at 80 or 120
columns, a fixed-width terminal or CI page) cuts each long line of a tool into pieces of
exactly that many characters, the last one shorter, wherever the width falls: inside a
word, a library name or an error code. logscan joins a long line with the next two when a
pattern's literal may run on (its "Wrapped lines"); a line cut into more pieces, a pattern
with `.*`, or one anchored at the tool's own first words (`^`) on a later piece is missed
that way. Here the width is found from the log itself and each cut line is joined back,
as a reader of the paste does; logscan tries the joined line too, at its first piece's
number, besides the pieces as they are. A later piece that starts inside a word, a path
or a number is no line of its own: it keeps only what its whole line matched (a pattern
anchored at a line's start, `^`, does not match where a console cut). One that may start
a line of its own (after a full stop or a colon, a capital after a lower-case letter, a
log prefix) keeps its own matches: a line that was that wide by itself and taken for cut
loses nothing.

The width is the log's longest line (WIDTH_MIN to WIDTH_MAX columns) when at least two
lines of different wording (their digits aside: not one message repeated with other times
or numbers) are exactly that long and followed by a line that does not start as a tool's
line does (a log prefix, TensorFlow's `I...] `, Bazel's `ERROR: `, Python's traceback: a
cut seldom falls there, so such a pair was two lines, and is never joined), or one is and
the width is one consoles are most often set to. A console that pads every short line with spaces to its width (an old Windows
console's copy) is told by every line being that long, some ending in spaces; there a
piece that ends in two spaces or more is a line that ended (one space is a cut after a
word), and the padding is taken off. Only a log of a paste's size (logscan.SMALL_LOG) is
read this way: a build's own log is written by Bazel, not copied from a console.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from .linetext import line_text

#: the narrowest and the widest console taken for one (logscan.WRAP_MIN: what a cut line is)
WIDTH_MIN, WIDTH_MAX = 60, 512
#: most pieces joined into one line (a 64-column console and a 4 kB line)
MAX_PIECES = 64
#: the widths consoles are most often set to (Windows' 80 and 120, a terminal's 100, 132,
#: 160, 200): one line cut there is taken as cut
CONSOLES = frozenset({80, 100, 120, 132, 160, 200})
_DIGITS = re.compile(r"\d+")
#: a cut inside a word, a path or a number: what may end its piece, and begin the next
_LEFT, _RIGHT = re.compile(r"[\w/\\-]"), re.compile(r"[\w./\\:-]")
#: how a tool's own line starts (besides the prefixes linetext.py takes off)
_LINE_START = re.compile(r"[IWEF](?:\d{4} \d\d:\d\d:[\d.]+ +\d+)? ?\S+\.(?:cc|h|cpp|py):\d+\] "
                         r"|(?:ERROR|INFO|WARNING|FATAL|DEBUG|FAILED): "
                         r"|Traceback \(most recent call last\):")


def width(lines: Sequence[str]) -> tuple[int, bool] | None:
    """The width a console cut `lines` at and whether it padded the short ones with spaces
    to it, or None when the lines do not look cut at one width."""
    if not lines:
        return None
    widest = max(len(line) for line in lines)
    if not WIDTH_MIN <= widest <= WIDTH_MAX:
        return None
    full = [line for line in lines if len(line) == widest]
    # padded: every line that is not empty is that wide, and short ones end in spaces
    padded = (len(full) == sum(1 for line in lines if line)
              and any(line.endswith("  ") for line in full))
    if padded:  # the padding says it all, cut lines or none
        return widest, True
    # a line that long tells of a cut only where the next one does not start a line
    cut = [line for line, after in zip(lines, lines[1:], strict=False)
           if len(line) == widest and not _starts_line(after)]
    wordings = len({_DIGITS.sub("0", line) for line in cut})
    if wordings < 2 and not (wordings == 1 and widest in CONSOLES):
        return None
    return widest, False


class Run(NamedTuple):
    """A line a console cut (or padded), joined back."""

    text: str  # the line, its pieces joined (without the padding)
    last: int  # the number of its last piece
    #: the numbers of its later pieces that start inside a word, a path or a number (the
    #: console's cut, not a line of its own)
    inside: frozenset[int]


def runs(lines: Sequence[str], cut: tuple[int, bool]) -> dict[int, Run]:
    """The lines a console cut at `cut` (width's answer) into more than one piece, and
    those it padded, by the number of their first piece (from 1)."""
    size, padded = cut
    found: dict[int, Run] = {}
    i = 0
    while i < len(lines):
        first, pieces = i, [lines[i]]
        while (len(pieces[-1]) == size and i + 1 < len(lines) and len(pieces) < MAX_PIECES
               and not (padded and pieces[-1].endswith("  ")) and not _starts_line(lines[i + 1])):
            i += 1
            pieces.append(lines[i])
        if len(pieces) > 1 or (padded and pieces[0].endswith(" ")):
            text = "".join(pieces)
            inside = frozenset(first + k + 1 for k in range(1, len(pieces))
                               if _inside(pieces[k - 1], pieces[k]))
            found[first + 1] = Run(text.rstrip(" ") if padded else text, i + 1, inside)
        i += 1
    return found


def _inside(left: str, right: str) -> bool:
    """Whether a cut between `left` and `right` fell inside a word, a path or a number:
    not after a line's own end (a colon, a full stop), nor before a capital after a
    lower-case letter (runs never joins a piece that starts a line: _starts_line)."""
    a, b = left[-1:], right[:1]
    return (bool(_LEFT.match(a)) and bool(_RIGHT.match(b))
            and not (b.isupper() and not (a.isupper() or a.isdigit())))


def _starts_line(text: str) -> bool:
    """Whether `text` starts as a tool's line does, which a console's cut seldom does: a CI
    system's or launcher's prefix (linetext.py), TensorFlow's and absl's `I...] ` (the
    older `I tensorflow/x.cc:9] `, TensorFlow 2.16's `I0000 00:00:1714564800.12  42 x.cc:9] `),
    Bazel's `ERROR: `, Python's traceback."""
    return line_text(text) != text or _LINE_START.match(text) is not None


def indent(lines: Sequence[str]) -> str:
    """The indentation every line that is not blank starts with, two spaces or more or a
    tab ("": none): a paste quoted as an indented block (Markdown's code block, a YAML
    file's or a reply's quote)."""
    shown = [line for line in lines if line.strip()]
    if not shown:
        return ""
    common = shown[0][:len(shown[0]) - len(shown[0].lstrip(" \t"))]
    for line in shown[1:]:
        while not line.startswith(common):
            common = common[:-1]
    # one space is no quote's: a console's cut before a space starts a line with one too
    return common if len(common) > 1 or common == "\t" else ""


def reshaped(lines: Sequence[str]) -> bool:
    """Whether split reads these lines (all of a small log) otherwise than as they are."""
    return bool(indent(lines)) or width(lines) is not None


def split(lines: Iterable[str], small: int) -> tuple[list[str], Iterator[str], dict[int, Run]]:
    """`lines` as their first ones (all of them when they are `small` characters or fewer)
    and the rest; when those first ones are all the lines, without their common indentation,
    with runs' answer for them when a console cut them."""
    head: list[str] = []
    size = 0
    it = iter(lines)
    for line in it:
        head.append(line)
        size += len(line) + 1
        if size > small:
            return head, it, {}
    common = indent(head)
    if common:
        head = [line[len(common):] for line in head]
    cut = width(head)
    return head, it, runs(head, cut) if cut is not None else {}
