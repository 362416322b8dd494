"""Known lines in a log, found in one streaming pass with per-line semantics.

Diagnosis signatures (build failures, runtime messages) are regexes searched in each line
of a log. `LineMatcher.scan_lines` is the plain definition: every line, every pattern.
`LineMatcher.scan_stream` gives the same result for a log of any size in constant memory:
it reads big chunks, finds the few lines that can match with one compiled prefilter of
literal anchors (every match of a pattern contains one of its anchors), and runs the same
per-line check on those lines only, counting line numbers with `bytes.count`.

Wrapped lines: terminals and people posting logs break long lines. A pattern that starts
with a literal of `MIN_LEAD` characters or more (its lead) also matches when the line
holding the lead continues on the next `WRAP_LINES` lines, joined without a separator
(where a terminal cut it). The match must start in the first line, and the pattern must
not contain `.*` or `.+` (which would reach into unrelated next lines).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .record import untag

#: most matching lines kept per key (a failing TF build can repeat an error thousands of times)
MAX_LINES = 50
#: how many following lines a wrapped match may continue on
WRAP_LINES = 2
#: the shortest leading literal that makes a pattern wrap-tolerant
MIN_LEAD = 8
#: bytes read at a time by scan_stream
CHUNK = 8 << 20
#: bytes of the log's start used to pick rare prefilter anchors
SAMPLE = 256 << 10
#: prefilter window: the part of an anchor searched for first
WINDOW = 8

_PROGRESS_LINE = re.compile(r"\[[\d,]+ / [\d,]+\] ")
#: characters that stand for themselves in a regex (outside classes and groups)
_PLAIN = re.compile(r"[A-Za-z0-9 _:'\"=,/<>!@%&;#~`-]+")
_ESCAPED_PLAIN = set(".()[]{}*+?|^$\\/-'\"#&~ :")
#: an unescaped `.*` or `.+`: across a joined line it could swallow the next line's words
_ANY_RUN = re.compile(r"(?<!\\)\.[*+]")


@dataclass(frozen=True)
class LinePattern:
    """One regex of a signature, with what the fast path needs to know about it."""

    key: str
    regex: re.Pattern[str]
    #: every match contains one of these literals (None: any line may match)
    anchors: tuple[str, ...] | None
    #: the literal the pattern starts with, when long enough to find wrapped lines
    lead: str | None = None


def line_pattern(key: str, pattern: str | re.Pattern[str]) -> LinePattern:
    """Compile `pattern` for signature `key` and work out its anchors and lead."""
    regex = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)
    if regex.flags & re.IGNORECASE:
        return LinePattern(key, regex, None)
    lead = _leading_literal(regex.pattern)
    if lead is not None and len(lead) >= MIN_LEAD and not _ANY_RUN.search(regex.pattern):
        return LinePattern(key, regex, (lead,), lead)
    return LinePattern(key, regex, required_literals(regex.pattern))


def _leading_literal(pattern: str) -> str | None:
    """The plain text every match starts with (escapes resolved), or None."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] in _ESCAPED_PLAIN:
            out.append(pattern[i + 1])
            step = 2
        elif _PLAIN.fullmatch(ch):
            out.append(ch)
            step = 1
        else:
            break
        after = pattern[i + step:i + step + 1]
        if after and after in "?*{":
            out.pop()  # made optional by a quantifier
            break
        i += step
    if "|" in _top_level(pattern):
        return None
    return "".join(out) or None


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


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Plain substrings such that every match of `pattern` contains one, or None.

    Per top-level alternative: the longest run of ordinary characters outside any group
    and not made optional by a quantifier (4 characters at least); None when an
    alternative has no such run.
    """
    out: list[str] = []
    for branch in _split_top(pattern):
        flat = _top_level(branch)
        best = ""
        for m in _PLAIN.finditer(flat):
            run = m.group()
            if flat[m.end():m.end() + 1] in ("?", "*", "{"):
                run = run[:-1]  # the quantifier makes only the last character optional
            if len(run) > len(best):
                best = run
        if len(best) < 4:
            return None
        if best not in out:
            out.append(best)
    return tuple(out)


@dataclass
class LineHit:
    """One line (or a wrapped run of lines) where a key matched."""

    line: int  # 1-based
    text: str  # the evidence: the line, or the wrapped lines joined with newlines
    groups: dict[str, str] = field(default_factory=dict)  # the match's named groups


@dataclass
class ScanResult:
    """The lines each key matched (the first MAX_LINES), in line order."""

    hits: dict[str, list[LineHit]] = field(default_factory=dict)
    lines: int = 0  # lines read

    def first_line(self, key: str) -> int | None:
        found = self.hits.get(key)
        return found[0].line if found else None


class LineMatcher:
    """Patterns grouped by key: a line counts once per key (its first matching pattern)."""

    def __init__(self, patterns: Iterable[LinePattern], *, untag_lines: bool = False,
                 skip_progress: bool = False, max_hits: int = MAX_LINES) -> None:
        self.groups: list[tuple[str, list[LinePattern]]] = []
        index: dict[str, list[LinePattern]] = {}
        for p in patterns:
            if p.key not in index:
                index[p.key] = []
                self.groups.append((p.key, index[p.key]))
            index[p.key].append(p)
        self.untag_lines = untag_lines
        self.skip_progress = skip_progress
        self.max_hits = max_hits
        anchors: list[str] = []
        self.every_line = False  # some pattern has no anchor: no prefilter
        for _key, group in self.groups:
            for p in group:
                if p.anchors is None:
                    self.every_line = True
                else:
                    anchors.extend(a for a in p.anchors if a not in anchors)
        self.anchors = tuple(anchors)

    # -- the per-line definition ----------------------------------------------------------

    def _text(self, raw: str) -> str:
        return untag(raw)[1] if self.untag_lines else raw

    def check_line(self, raw: str, following: Sequence[str] = ()
                   ) -> Iterator[tuple[str, str, dict[str, str]]]:
        """(key, evidence, named groups) for every key matching this line.

        `following` are the next lines (at most WRAP_LINES, raw), for wrapped matches.
        """
        text = self._text(raw)
        if self.skip_progress and text[:1] == "[" and _PROGRESS_LINE.match(text):
            return  # Bazel's "[12 / 34] Compiling ..." status lines never carry an error
        rest: list[str] | None = None
        for key, group in self.groups:
            for p in group:
                if p.anchors is not None and not any(a in text for a in p.anchors):
                    continue
                m = p.regex.search(text)
                if m is not None:
                    yield key, text.strip(), _groups(m)
                    break
                if p.lead is None or not following:
                    continue
                if rest is None:
                    rest = [self._text(x) for x in following[:WRAP_LINES]]
                wrapped = _wrapped_match(p, text, rest)
                if wrapped is not None:
                    yield key, wrapped[0], wrapped[1]
                    break

    def scan_lines(self, lines: Iterable[str]) -> ScanResult:
        """The reference: every line checked (`lines` without their newlines)."""
        result = ScanResult()
        window: list[str] = []
        number = 0
        for raw in lines:
            window.append(raw)
            if len(window) > WRAP_LINES:
                number += 1
                self._record(result, number, window[0], window[1:])
                window.pop(0)
        while window:
            number += 1
            self._record(result, number, window[0], window[1:])
            window.pop(0)
        result.lines = number
        return result

    def _record(self, result: ScanResult, number: int, raw: str, following: Sequence[str]
                ) -> None:
        for key, text, groups in self.check_line(raw, following):
            found = result.hits.setdefault(key, [])
            if len(found) < self.max_hits:
                found.append(LineHit(number, text, groups))

    # -- the fast path ----------------------------------------------------------------------

    def scan_file(self, path: Path) -> ScanResult:
        """scan_stream over a file."""
        with path.open("rb") as fh:
            return self.scan_stream(fh)

    def scan_stream(self, stream: BinaryIO, chunk_size: int = CHUNK) -> ScanResult:
        """The same result as scan_lines over the stream's lines, read in big chunks.

        Lines are split at b"\\n" only, a trailing "\\r" dropped, and decoded as UTF-8
        with bad bytes replaced; `read_lines` gives the same lines to the reference. Memory
        stays within two chunks and the longest line.
        """
        result = ScanResult()
        buf = b""
        prefilter: re.Pattern[bytes] | None = None
        line_no = 1  # the number of the line buf starts with
        eof = False
        while not eof:
            more = stream.read(chunk_size)
            eof = not more
            buf += more
            if prefilter is None and not self.every_line:
                prefilter = prefilter_regex(self.anchors, buf[:SAMPLE])
            limit = len(buf) if eof else _limit(buf)
            if limit:
                line_no = self._scan_region(result, buf, limit, line_no, prefilter)
                if eof and not buf.endswith(b"\n"):
                    line_no += 1  # the last line has no newline
                buf = buf[limit:]
        result.lines = line_no - 1
        return result

    def _scan_region(self, result: ScanResult, buf: bytes, limit: int, line_no: int,
                     prefilter: re.Pattern[bytes] | None) -> int:
        """Check the lines of buf[:limit] that can match (all of them without a prefilter);
        returns the number of the line starting at `limit`."""
        counted = 0  # the newlines of buf[:counted] are in line_no
        pos = 0
        while pos < limit:
            if prefilter is None:
                start = pos
            else:
                m = prefilter.search(buf, pos, limit)
                if m is None:
                    break
                start = buf.rfind(b"\n", 0, m.start()) + 1
            end = buf.find(b"\n", start)
            end = len(buf) if end < 0 else end
            line_no += buf.count(b"\n", counted, start)
            counted = start
            following: list[str] = []
            nxt = end + 1
            while len(following) < WRAP_LINES and nxt < len(buf):
                stop = buf.find(b"\n", nxt)
                stop = len(buf) if stop < 0 else stop
                following.append(_decode(buf[nxt:stop]))
                nxt = stop + 1
            self._record(result, line_no, _decode(buf[start:end]), following)
            pos = end + 1
        return line_no + buf.count(b"\n", counted, limit)


def _groups(m: re.Match[str]) -> dict[str, str]:
    return {k: v for k, v in m.groupdict().items() if v is not None}


def _wrapped_match(p: LinePattern, text: str, rest: list[str]
                   ) -> tuple[str, dict[str, str]] | None:
    """A match starting at the lead in `text` and running on into the next lines."""
    assert p.lead is not None
    joined = text + "".join(rest)
    start = text.find(p.lead)
    while start >= 0:
        m = p.regex.match(joined, start)
        if m is not None and m.end() > len(text):
            parts, used = [text], len(text)
            for line in rest:
                if used >= m.end():
                    break
                parts.append(line)
                used += len(line)
            return "\n".join(x.strip() for x in parts), _groups(m)
        start = text.find(p.lead, start + 1)
    return None


def _decode(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return text[:-1] if text.endswith("\r") else text


def _limit(buf: bytes) -> int:
    """Where the lines that have WRAP_LINES complete lines after them end in `buf`."""
    end = len(buf)
    for _i in range(WRAP_LINES + 1):
        end = buf.rfind(b"\n", 0, end)
        if end < 0:
            return 0
    return end + 1


def read_lines(path: Path) -> list[str]:
    """A log's lines as scan_stream sees them (for the reference path and tests)."""
    data = path.read_bytes()
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return [_decode(p) for p in parts]


# -- the prefilter ------------------------------------------------------------------------------


def prefilter_regex(anchors: Sequence[str], sample: bytes) -> re.Pattern[bytes]:
    """One compiled search for a window of every anchor, each window starting at a byte
    that is rare in `sample` (the regex engine skips quickly over bytes that cannot start a
    match, and tries the alternatives only where one can)."""
    freq = _byte_counts(sample)
    windows = sorted({_rare_window(a.encode("utf-8"), freq) for a in anchors})
    return re.compile(_trie(windows) if windows else b"(?!)")


def _byte_counts(sample: bytes) -> list[int]:
    if not sample:
        return [0] * 256
    return [sample.count(bytes((b,))) for b in range(256)]


def _rare_window(anchor: bytes, freq: list[int]) -> bytes:
    if len(anchor) <= WINDOW:
        return anchor
    best = min(range(len(anchor) - WINDOW + 1),
               key=lambda i: (freq[anchor[i]], freq[anchor[i + 1]], i))
    return anchor[best:best + WINDOW]


def _trie(words: Sequence[bytes]) -> bytes:
    """A regex matching any of `words`, as a trie (a word that extends another is dropped:
    the shorter one already finds the line)."""
    root: dict[Any, Any] = {}
    for word in sorted(words, key=len):
        node = root
        for byte in word:
            if None in node:
                break
            node = node.setdefault(byte, {})
        else:
            node.clear()
            node[None] = True

    def emit(node: dict[Any, Any]) -> bytes:
        if None in node:
            return b""
        alts = [re.escape(bytes((k,))) + emit(v) for k, v in sorted(node.items())]
        return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"

    return emit(root)
