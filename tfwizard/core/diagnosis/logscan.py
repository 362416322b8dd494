"""Known lines in a log, found in one streaming pass with per-line semantics.

Diagnosis signatures (build failures, runtime messages) are regexes searched in each line
of a log. `LineMatcher.scan_lines` is the plain definition: every line, every pattern.
`LineMatcher.scan_stream` gives the same result for a log of any size in constant memory
(cut lines aside: see "Wrapped lines"): it reads big chunks, finds the few lines that can
match with a prefilter of literal text every match contains (`Prefilter`), and runs the
same per-line check on those lines only, against the patterns whose text was found there
(a line's own literals are not looked for again), counting line numbers with `bytes.count`.

Wrapped lines: terminals and people posting logs break long lines. A pattern without `.*`
or `.+` (which would reach into unrelated next lines) also matches across the break, the
lines joined without a separator (where a terminal cut it, even inside an error code), the
match starting in the first line:
- a pattern that starts with a literal of `MIN_LEAD` characters or more, on the line
  holding its first `MIN_LEAD` characters (its lead) and the next `WRAP_LINES` lines;
- any such pattern, on a line of `WRAP_MIN` characters or more (a console of 80 columns
  cuts there) and the next lines that continue it (each after one of `WRAP_MIN` or more,
  none starting with a space, at most `WRAP_LINES`); the line before, when this one may
  continue it, is joined before it, so a match can look back at its words (a path cut in
  two is not taken for another). This is done where every line is checked (a log of
  `SMALL_LOG` bytes or less, what a paste is): the prefilter cannot see a literal cut in
  two, so through it (`scan_lines(cut_lines=False)` is its reference) only the lead is
  followed.

Log prefixes and colour codes are taken off a line before its patterns are tried
(linetext.py), so a pattern anchored at `^` means the start of the tool's own text. The
prefilter looks for literals anywhere and is not affected.

Context lines: a key may own the lines that follow its match (`LineMatcher(context=...)`,
failures.toml's `context_lines`: what a server answered after Bazel's warning). The next N
lines after the evidence are kept with the hit (stripped; blank lines and Bazel's progress
lines count but are not kept), on both paths.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from . import paste
from .linetext import line_text
from .literals import LinePattern
from .prefilter import Prefilter

#: most matching lines kept per key (a failing TF build can repeat an error thousands of times)
MAX_LINES = 50
#: how many following lines a wrapped match may continue on
WRAP_LINES = 2
#: a line this long may be one a console cut (80 columns and more; what posters paste)
WRAP_MIN = 60
#: bytes read at a time by scan_stream
CHUNK = 8 << 20
#: bytes of the log's start used to pick rare prefilter anchors
SAMPLE = 256 << 10
#: up to this much log, every line is checked without a prefilter: choosing its anchors
#: costs 35-50 ms, more than checking 64 kB of lines (9 ms, the corpus's densest text)
SMALL_LOG = 64 << 10

#: characters of log text from the most common on: an anchor is filed under its character
#: that comes last here (one not listed is rarer still)
_COMMON_CHARS = " etaoinsrlhdcu.mfp/-gy_wb:0v1k2'x=3\"485967,()[]"


def _rarest(anchor: str) -> str:
    def rank(c: str) -> int:
        return _COMMON_CHARS.index(c) if c in _COMMON_CHARS else len(_COMMON_CHARS)

    return max(anchor, key=rank)


_PROGRESS_LINE = re.compile(r"\[[\d,]+ / [\d,]+\] ")


class _Cut:
    """What scan_lines knows of a small log's lines a console cut (paste.py)."""

    def __init__(self, runs: Mapping[int, paste.Run], head: Sequence[str]) -> None:
        self.runs, self.head = runs, head
        #: a later piece cut inside a word -> the number of its line's first piece
        self.inside = {k: first for first, run in runs.items() for k in run.inside}
        self.keys: dict[int, set[str]] = {}  # a joined line's number -> the keys it matched


@dataclass
class LineHit:
    """One line (or a wrapped run of lines) where a key matched."""

    line: int  # 1-based
    text: str  # the evidence: the line, or the wrapped lines joined with newlines
    groups: dict[str, str] = field(default_factory=dict)  # the match's named groups
    #: the lines after the evidence that belong to it (the key's context lines)
    context: tuple[str, ...] = ()


@dataclass
class ScanResult:
    """The lines each key matched (the first MAX_LINES), in line order."""

    hits: dict[str, list[LineHit]] = field(default_factory=dict)
    lines: int = 0  # lines read

    def first_line(self, key: str) -> int | None:
        """The line number of the first hit of `key` (None: none)."""
        found = self.hits.get(key)
        return found[0].line if found else None


class LineMatcher:
    """Patterns grouped by key: a line counts once per key (its first matching pattern)."""

    def __init__(self, patterns: Iterable[LinePattern], *, untag_lines: bool = False,
                 skip_progress: bool = False, max_hits: int = MAX_LINES,
                 context: Mapping[str, int] | None = None,
                 keep_last: Iterable[str] = ()) -> None:
        self.groups: list[tuple[str, list[LinePattern]]] = []
        by_key: dict[str, list[LinePattern]] = {}
        for p in patterns:
            if p.key not in by_key:
                by_key[p.key] = []
                self.groups.append((p.key, by_key[p.key]))
            by_key[p.key].append(p)
        self.untag_lines = untag_lines
        self.skip_progress = skip_progress
        self.max_hits = max_hits
        #: keys whose last `max_hits` matches are kept rather than their first ones (a
        #: program's last exception is the one that ended it)
        self.keep_last = frozenset(keep_last)
        #: per key, how many lines after its evidence belong to it
        self.context = {key: n for key, n in (context or {}).items() if n > 0}
        #: how many lines after a line its check may read (wrapped matches, context lines)
        self.lookahead = WRAP_LINES + max(self.context.values(), default=0)
        self.patterns = [p for _key, group in self.groups for p in group]
        # some pattern has no literal: every line must be checked, no prefilter
        self.every_line = any(p.anchors is None for p in self.patterns)
        # which patterns a literal found in a line lets in (by index, in pattern order)
        self._by_anchor: dict[str, list[int]] = {}
        self._always: list[int] = []
        for index, p in enumerate(self.patterns):
            if p.anchors is None:
                self._always.append(index)
            for anchor in p.anchors or ():
                self._by_anchor.setdefault(anchor, []).append(index)
        # the anchors grouped by their rarest character: a line is searched for a group's
        # anchors only when it holds that character (a few dozen checks, not hundreds)
        groups: dict[str, list[str]] = {}
        for anchor in self._by_anchor:
            groups.setdefault(_rarest(anchor), []).append(anchor)
        self._anchor_groups = list(groups.items())

    # -- the per-line definition ----------------------------------------------------------

    def _text(self, raw: str) -> str:
        return line_text(raw, untag_lines=self.untag_lines)

    def check_line(self, raw: str,
                   following: Sequence[str] | Callable[[], Sequence[str]] = (),
                   cut: bool = True, before: str | None = None,
                   among: Collection[int] | None = None,
                   ) -> Iterator[tuple[str, str, dict[str, str], tuple[str, ...]]]:
        """(key, evidence, named groups, context lines) for every key matching this line.

        `following` are the next lines (at most `lookahead`, raw), for wrapped matches and
        context lines, or a function giving them (called only when one of those may need
        them). `cut`: a long line may continue on the next ones (see the module docstring);
        `before`: the line before (raw; None: none), whose words a match starting in this
        line may look back at when this one continues it. `among`: the only patterns (by
        index) that can match here, when the prefilter knows them (`Prefilter.owners`).
        """
        text = self._text(raw)
        if self._progress(text):
            return  # Bazel's "[12 / 34] Compiling ..." status lines never carry an error
        after: list[Sequence[str]] = []  # the following lines, once asked for

        def lines_after() -> Sequence[str]:
            if not after:
                after.append(following() if callable(following) else following)
            return after[0]

        pieces: list[list[str]] = []  # the next lines continuing a long line, once asked for

        def continued() -> list[str]:
            if not pieces:
                pieces.append(self._continued(text, lines_after))
            return pieces[0]

        back = ""  # the line this one continues, when a console may have cut it there
        if cut and len(text) >= WRAP_MIN and continued():
            # a long line a console cut: what lets a pattern in may be on the next line
            found = self._found(text + "".join(continued()))
            if before is not None and _continues(last := self._text(before), text):
                back = last
        else:
            cut = False
            found = self._found(text, among)
        if not found and not self._always:
            return

        done: set[str] = set()  # keys already matched on this line
        # a paste's trailing blanks do not hide a pattern's `$` (stripped only where present)
        bare = text.rstrip() if text[-1:].isspace() else text
        for index in sorted({*found, *self._always}):
            p = self.patterns[index]
            if p.key in done:
                continue
            m = p.regex.search(text) or (p.regex.search(bare) if bare != text else None)
            if m is not None:
                done.add(p.key)
                yield p.key, text.strip(), _groups(m), self._context_of(p.key, 0, lines_after)
                continue
            if not p.wraps:
                continue
            if p.lead is not None and p.lead in text:
                rest, context = [self._text(x) for x in lines_after()[:WRAP_LINES]], ""
            elif cut:
                rest, context = continued(), back
            else:
                continue
            if not rest:
                continue
            wrapped = _wrapped_match(p, text, rest, context)
            if wrapped is not None:
                done.add(p.key)
                span = wrapped[0].count("\n")  # the lines after this one it took
                yield p.key, wrapped[0], wrapped[1], self._context_of(p.key, span, lines_after)

    def _found(self, text: str, among: Collection[int] | None = None) -> list[int]:
        """The patterns the literals in `text` let in (by index), of `among` if given."""
        if among is not None:
            return [i for i in among if any(a in text for a in self.patterns[i].anchors or ())]
        return [i for key, anchors in self._anchor_groups if key in text
                for a in anchors if a in text for i in self._by_anchor[a]]

    def _continued(self, text: str, lines_after: Callable[[], Sequence[str]]) -> list[str]:
        """The next lines that may continue `text` where a console cut it (`_continues`, at
        most WRAP_LINES)."""
        pieces: list[str] = []
        last = text
        for raw in lines_after()[:WRAP_LINES]:
            nxt = self._text(raw)
            if not _continues(last, nxt):
                break
            pieces.append(last := nxt)
        return pieces

    def _progress(self, text: str) -> bool:
        return self.skip_progress and text[:1] == "[" and bool(_PROGRESS_LINE.match(text))

    def _context_of(self, key: str, span: int, lines_after: Callable[[], Sequence[str]]
                    ) -> tuple[str, ...]:
        """The key's context lines: the next ones after the evidence's last line (`span`
        lines after this one), stripped; blank and progress lines are counted, not kept."""
        count = self.context.get(key, 0)
        if not count:
            return ()
        texts = (self._text(raw) for raw in lines_after()[span:span + count])
        return tuple(t.strip() for t in texts if t.strip() and not self._progress(t))

    def scan_lines(self, lines: Iterable[str], *, cut_lines: bool = True) -> ScanResult:
        """The reference: every line checked (`lines` without their newlines); `cut_lines`:
        long lines a console cut are joined with their continuation (scan_stream does so
        where it checks every line: without its prefilter), and a small log is read as its
        tools printed it (paste.split)."""
        result = ScanResult()
        head, rest, runs = paste.split(lines, SMALL_LOG) if cut_lines else ([], iter(lines), {})
        cut = _Cut(runs, head)
        window: list[str] = []
        number = 0
        before: str | None = None
        for raw in itertools.chain(head, rest):
            window.append(raw)
            if len(window) > self.lookahead:
                number += 1
                self._add(result, number, self._checked(window, number, cut_lines, before, cut))
                before = window.pop(0)
        while window:
            number += 1
            self._add(result, number, self._checked(window, number, cut_lines, before, cut))
            before = window.pop(0)
        result.lines = number
        return result

    def _checked(self, window: list[str], number: int, cut_lines: bool, before: str | None,
                 cut: _Cut) -> list[tuple[str, str, dict[str, str], tuple[str, ...]]]:
        """scan_lines' check of the window's first line, and of the line a console cut
        there (paste.runs), joined back: a key the joined line matches is taken from
        it (its words whole, not cut at the console's width; its evidence the pieces). A
        later piece cut inside a word keeps only the keys its whole line matched (a
        pattern anchored at a line's start does not match where a console cut)."""
        found = list(self.check_line(window[0], window[1:], cut_lines, before))
        run = cut.runs.get(number)
        if run is not None:
            shown = "\n".join(x.strip() for x in cut.head[number - 1:run.last])
            joined = {f[0]: (f[0], shown, f[2], f[3]) for f in self.check_line(
                run.text, cut.head[run.last:run.last + self.lookahead], False, before)}
            cut.keys[number] = set(joined)
            found = [joined.pop(f[0], f) for f in found] + list(joined.values())
        if number in cut.inside:
            found = [f for f in found if f[0] in cut.keys.get(cut.inside[number], ())]
        return found

    def _add(self, result: ScanResult, number: int,
             found: Iterable[tuple[str, str, dict[str, str], tuple[str, ...]]]) -> None:
        for key, text, groups, context in found:
            hits = result.hits.setdefault(key, [])
            if len(hits) < self.max_hits:
                hits.append(LineHit(number, text, groups, context))
            elif key in self.keep_last:
                del hits[0]
                hits.append(LineHit(number, text, groups, context))

    # -- the fast path ----------------------------------------------------------------------

    def scan_stream(self, stream: BinaryIO, chunk_size: int = CHUNK) -> ScanResult:
        """The same result as scan_lines over the stream's lines, read in big chunks.

        Lines are split at b"\\n" only, a trailing "\\r" dropped, and decoded as UTF-8
        with bad bytes replaced; `read_lines` gives the same lines to the reference. One
        buffer of two chunks is reused (it grows only for a line longer than a chunk).
        The prefilter starts once more than SMALL_LOG bytes are unread. A paste a console
        cut, or one quoted as an indented block (a seekable stream of SMALL_LOG bytes or
        less: paste.py), goes to scan_lines, which reads it as its tools printed it.
        """
        head = _small(stream)
        if head is not None and paste.reshaped(lines := split_lines(head)):
            return self.scan_lines(lines)
        result = ScanResult()
        chunk_size = _fitted(stream, chunk_size)
        buf = bytearray(2 * chunk_size)
        filled = 0  # buf[:filled] holds the unread part of the log
        prefilter: Prefilter | None = None
        line_no = 1  # the number of the line buf starts with
        before: list[str | None] = [None]  # the last line checked, where every line is
        eof = False
        while not eof:
            if filled + chunk_size > len(buf):
                buf.extend(bytes(filled + chunk_size - len(buf)))
            with memoryview(buf) as view:
                got = _read_into(stream, view[filled:filled + chunk_size])
            eof = got == 0
            filled += got
            if prefilter is None and not self.every_line and filled > SMALL_LOG:
                prefilter = Prefilter(self.patterns, bytes(buf[:min(filled, SAMPLE)]))
            limit = filled if eof else _limit(buf, filled, self.lookahead)
            if limit:
                line_no = self._scan_region(result, buf, limit, filled, line_no, prefilter,
                                            before)
                if prefilter is not None:
                    prefilter.adapt(buf, limit)
                if eof and buf[filled - 1] != 10:
                    line_no += 1  # the last line has no newline
                buf[:filled - limit] = buf[limit:filled]
                filled -= limit
        result.lines = line_no - 1
        return result

    def _scan_region(self, result: ScanResult, buf: bytearray, limit: int, size: int,
                     line_no: int, prefilter: Prefilter | None, before: list[str | None]
                     ) -> int:
        """Check the lines of buf[:limit] that can match (all of them without a prefilter,
        each after `before[0]`, the line before it, which it then becomes; buf[limit:size]
        holds the next lines); the number of the line starting at `limit`."""
        counted = 0  # the newlines of buf[:counted] are in line_no
        if prefilter is None:
            starts: Iterable[tuple[int, frozenset[int] | None]] = (
                (start, None) for start in _line_starts(buf, limit))
        else:
            starts = prefilter.lines(buf, limit)
        for start, among in starts:
            end = buf.find(b"\n", start, size)
            end = size if end < 0 else end

            def following(end: int = end) -> list[str]:
                lines: list[str] = []
                nxt = end + 1
                while len(lines) < self.lookahead and nxt < size:
                    stop = buf.find(b"\n", nxt, size)
                    stop = size if stop < 0 else stop
                    lines.append(_decode(buf[nxt:stop]))
                    nxt = stop + 1
                return lines

            raw = _decode(buf[start:end])
            if prefilter is None:  # every line, in order: cut lines are joined
                found = list(self.check_line(raw, following, True, before[0]))
                before[0] = raw
            else:
                found = list(self.check_line(raw, following, False, among=among))
            if found:  # line numbers are counted only where something matched
                line_no += buf.count(b"\n", counted, start)
                counted = start
                self._add(result, line_no, found)
        return line_no + buf.count(b"\n", counted, limit)


def _fitted(stream: BinaryIO, chunk_size: int) -> int:
    """CHUNK_SIZE, or less for a file known to be smaller: the buffer is zeroed when made,
    and two 8 MB chunks cost ~5 ms of page faults for a no-op build's few-kB log. A file
    read whole in its first chunk is scanned exactly as before (the same prefilter sample)."""
    try:
        left = os.fstat(stream.fileno()).st_size - stream.tell()
    except (AttributeError, OSError, ValueError):  # io.BytesIO and other streams: as asked
        return chunk_size
    return max(1, min(chunk_size, max(left + 1, 64 << 10)))


def _small(stream: BinaryIO) -> bytes | None:
    """The whole of a seekable stream of SMALL_LOG bytes or less (its place kept), else None."""
    try:
        if not stream.seekable():  # a pipe: what was read could not be read again
            return None
        at = stream.tell()
        data = stream.read(SMALL_LOG + 1)
        stream.seek(at)
    except (AttributeError, OSError, ValueError):  # a stream without these, or closed
        return None
    return data if len(data) <= SMALL_LOG else None


def _read_into(stream: BinaryIO, view: memoryview) -> int:
    """Read into `view`; the number of bytes, 0 at the end (streams without readinto too)."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return int(readinto(view) or 0)
    data = stream.read(len(view))
    view[:len(data)] = data
    return len(data)


def _line_starts(buf: bytearray, limit: int) -> Iterator[int]:
    pos = 0
    while pos < limit:
        yield pos
        end = buf.find(b"\n", pos)
        if end < 0:
            return
        pos = end + 1


def _groups(m: re.Match[str]) -> dict[str, str]:
    return {k: v for k, v in m.groupdict().items() if v is not None}


def _continues(last: str, text: str) -> bool:
    """Whether `text` may continue `last` where a console cut it: `last` is WRAP_MIN
    characters or longer and `text` does not start with a space."""
    return len(last) >= WRAP_MIN and text[:1].strip() != ""


def _wrapped_match(p: LinePattern, text: str, rest: list[str], before: str = ""
                   ) -> tuple[str, dict[str, str]] | None:
    """A match starting in `text` and running on into the next lines (`rest`, joined to it
    without a separator; `before`, the line `text` continues, joined before it, can be
    looked back at): the lines it took, and its named groups."""
    joined = before + text + "".join(rest)
    pos, stop = len(before), len(before) + len(text)
    while (m := p.regex.search(joined, pos)) is not None and m.start() < stop:
        if m.end() > stop:
            parts, used = [text], stop
            for line in rest:
                if used >= m.end():
                    break
                parts.append(line)
                used += len(line)
            return "\n".join(x.strip() for x in parts), _groups(m)
        pos = m.start() + 1
    return None


def _decode(raw: bytes | bytearray) -> str:
    text = raw.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text


def _limit(buf: bytearray, size: int, lookahead: int) -> int:
    """Where the lines of buf[:size] that have `lookahead` complete lines after them end."""
    end = size
    for _i in range(lookahead + 1):
        end = buf.rfind(b"\n", 0, end)
        if end < 0:
            return 0
    return end + 1


def read_lines(path: Path) -> list[str]:
    """A log's lines as scan_stream sees them (for the reference path and tests)."""
    return split_lines(path.read_bytes())


def split_lines(data: bytes) -> list[str]:
    """The lines scan_stream sees in `data`."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return [_decode(p) for p in parts]
