"""logscan's prefilter: the few lines of a chunk where a pattern can match, found fast.

A cost model picks, from the log's first bytes, which bytes of the patterns' literals to
look for (see `Prefilter`); the matcher then runs its per-line check on those lines only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .literals import LinePattern

#: prefilter window: the most of a literal tested where its first byte was found
WINDOW = 8

#: the shortest window of a literal the prefilter tests
MIN_WINDOW = 4

#: a window found more often than once per this many bytes of the sample (and more than
#: COMMON_WINDOW_MIN times) is too common to find lines by, when its alternative has another
COMMON_WINDOW_BYTES = 32768
COMMON_WINDOW_MIN = 4
#: the most times the windows of the alternatives with a common one are chosen again
COVER_ROUNDS = 64

#: while a log is scanned: a window found on more lines than one per this many bytes
#: scanned (and more than ADAPT_HITS_MIN times) is given up for another of its
#: alternative's, at most ADAPTATIONS times (the log's start, which the cover is chosen
#: from, need not hold the lines its later parts repeat: a test's summary, a warning)
ADAPT_HIT_BYTES = 524288
ADAPT_HITS_MIN = 16
ADAPTATIONS = 8
#: the latest bytes scanned, where a window to take instead is counted
ADAPT_SAMPLE = 256 << 10


def _memchr_cost(share: float, offsets: int = 1) -> float:
    """Rough ns per byte of log to find a byte with bytes.find and test each hit in Python,
    with one regex per offset of the byte in its windows (measured: about 550 ns a hit with
    one offset, 700 with two, 1,400 with four)."""
    return 0.07 + share * (300 + 250 * offsets)


def _regex_cost(share: float) -> float:
    """Rough ns per byte of log for a regex starting with that byte (tests hits in C)."""
    return 0.33 + share * 8


class Prefilter:
    """Finds the lines of a chunk where one of the patterns can match, quickly.

    Each pattern (each top-level alternative) has literal runs every match contains (a
    wrap-tolerant pattern: its lead); the prefilter looks for a window of one of them
    around one of its bytes. The bytes are chosen by a greedy set cover weighted by what
    the search costs, with their shares in `sample` (the log's start): a rare byte is found
    with `bytes.find` (memchr) and the windows around it tested with one compiled regex
    per offset; a common one is searched for by one regex of the windows that start with
    it (the regex engine scans for it and tests in C). The choice changes the speed only:
    every line where a pattern can match holds one of the windows, so the windows found on
    a line name the only patterns that can match it (`owners`; every window is found, those
    overlapping another too).
    """

    def __init__(self, patterns: Sequence[LinePattern], sample: bytes) -> None:
        counts = _byte_counts(sample)
        share = [c / max(1, len(sample)) for c in counts]
        # per alternative: (byte, found by memchr) -> (offset of the byte, window)
        options: list[dict[tuple[int, bool], tuple[int, bytes]]] = []
        owner: list[int] = []  # per alternative, its pattern's index
        for index, p in enumerate(patterns):
            choices = ((p.lead,),) if p.lead is not None else p.runs
            for runs in choices or ():
                owner.append(index)
                option: dict[tuple[int, bool], tuple[int, bytes]] = {}
                for run in (r.encode("utf-8") for r in runs):
                    for i, byte in enumerate(run):
                        j = max(0, min(i, len(run) - WINDOW))  # a window holding byte i
                        known = option.get((byte, True), (0, b""))[1]
                        if len(run[j:j + WINDOW]) > len(known):
                            option[(byte, True)] = (i - j, run[j:j + WINDOW])
                        window = run[i:i + WINDOW]  # a window starting at byte i
                        if len(window) >= MIN_WINDOW and len(window) > len(
                                option.get((byte, False), (0, b""))[1]):
                            option[(byte, False)] = (0, window)
                options.append(option)

        offsets: dict[int, set[int]] = {}  # byte -> its offsets in the windows holding it
        for option in options:
            for (byte, memchr), (offset, _w) in option.items():
                if memchr:
                    offsets.setdefault(byte, set()).add(offset)

        def cost(choice: tuple[int, bool]) -> float:
            byte, memchr = choice
            return (_memchr_cost(share[byte], len(offsets[byte])) if memchr
                    else _regex_cost(share[byte]))

        # a rare byte can sit in a window that is common all the same ("dbox" of the
        # "linux-sandbox" every Bazel progress line names): a chosen window the sample holds
        # often is given up for another of its alternative's, so the windows looked for are
        # about as rare as the lines that can match
        first = _cover(options, cost, set(range(len(options))))
        chosen = dict(first)
        left = [dict(option) for option in options]  # the options not found common yet
        too_many = max(COMMON_WINDOW_MIN, len(sample) // COMMON_WINDOW_BYTES)
        seen: dict[bytes, int] = {}

        def common_window(i: int) -> bool:
            return _count(seen, sample, options[i][chosen[i]][1]) > too_many

        for _round in range(COVER_ROUNDS):
            again = {i for i in chosen if len(left[i]) > 1 and common_window(i)}
            if not again:
                break
            for i in again:
                del left[i][chosen[i]]
            chosen.update(_cover(left, cost, again))
        # an alternative whose every window is common (its lines are) keeps the cheapest
        chosen.update({i: first[i] for i in chosen if common_window(i)})
        _drop_redundant(chosen, options, cost,
                        lambda i, c: _count(seen, sample, options[i][c][1]) <= too_many)
        self._options, self._chosen, self._cost, self._owner = options, chosen, cost, owner
        #: windows given up while scanning, and how often each window looked for was found
        #: (over `scanned` bytes) since the last change
        self._given_up: set[bytes] = set()
        self._found: dict[bytes, int] = {}
        self._scanned = 0
        self.adaptations = 0
        self._compile()

    def _compile(self) -> None:
        rare: dict[int, dict[int, set[bytes]]] = {}  # byte -> offset -> windows
        common: dict[int, set[bytes]] = {}
        for i, best in self._chosen.items():
            offset, window = self._options[i][best]
            if best[1]:
                rare.setdefault(best[0], {}).setdefault(offset, set()).add(window)
            else:
                common.setdefault(best[0], set()).add(window)
        self.rare = [(bytes((b,)), [(k, re.compile(_trie(sorted(w))))
                                    for k, w in sorted(by_offset.items())])
                     for b, by_offset in sorted(rare.items())]
        #: (the first byte of its windows, the regex of those windows)
        self.common = [(bytes((b,)), re.compile(_trie(sorted(w))))
                       for b, w in sorted(common.items())]
        # a window's prefixes -> the patterns it stands for (the regexes match the shortest
        # prefix of a window that is one, see `_trie`)
        by_prefix: dict[bytes, set[int]] = {}
        for i, best in self._chosen.items():
            window = self._options[i][best][1]
            for k in range(1, len(window) + 1):
                by_prefix.setdefault(window[:k], set()).add(self._owner[i])
        self._owners = {prefix: frozenset(found) for prefix, found in by_prefix.items()}

    def owners(self, found: bytes) -> frozenset[int]:
        """The patterns (by index) whose windows begin with `found`, a window the regexes
        matched: a line where a pattern matches holds its window, so only these can match
        on a line where no other window is found."""
        return self._owners.get(found, frozenset())

    def lines(self, buf: bytes | bytearray, limit: int
              ) -> Iterator[tuple[int, frozenset[int]]]:
        """(line start, the patterns its windows let in) for each line of buf[:limit] that
        holds a window, in order."""
        start, among = -1, frozenset[int]()
        for pos, window in self.hits(buf, 0, limit):
            line = buf.rfind(b"\n", 0, pos) + 1
            if line != start:
                if start >= 0:
                    yield start, among
                start, among = line, self.owners(window)
            else:
                among = among | self.owners(window)
        if start >= 0:
            yield start, among

    def positions(self, buf: bytes | bytearray, start: int, limit: int) -> list[int]:
        """Offsets in buf[start:limit] where a window begins, sorted."""
        return [pos for pos, _window in self.hits(buf, start, limit)]

    def hits(self, buf: bytes | bytearray, start: int, limit: int
             ) -> list[tuple[int, bytes]]:
        """(offset, window found there) in buf[start:limit], sorted by offset."""
        found: list[tuple[int, bytes]] = []
        counts = self._found
        for byte, windows in self.rare:
            pos = buf.find(byte, start, limit)
            while pos >= 0:
                for offset, regex in windows:  # each: windows may overlap
                    m = regex.match(buf, pos - offset, limit) if pos - offset >= start else None
                    if m is not None:
                        window = m.group()
                        found.append((pos - offset, window))
                        counts[window] = counts.get(window, 0) + 1
                pos = buf.find(byte, pos + 1, limit)
        for first, regex in self.common:
            for m in regex.finditer(buf, start, limit):
                window = m.group()
                found.append((m.start(), window))
                counts[window] = counts.get(window, 0) + 1
                # finditer goes on after the match: a window starting inside it is found
                # here (each window found tells which patterns can match its line)
                at = buf.find(first, m.start() + 1, m.end())
                while at >= 0:
                    inner = regex.match(buf, at, limit)
                    if inner is not None:
                        found.append((at, inner.group()))
                    at = buf.find(first, at + 1, m.end())
        self._scanned += limit - start
        found.sort()
        return found

    def adapt(self, buf: bytes | bytearray, end: int) -> bool:
        """Give up the windows found on many of the lines scanned so far (buf[:end] the
        last of them), each for the window of its alternative that the latest bytes hold
        least often, of the bytes looked for already (one more pass would cost more than a
        window's lines; a byte's share in the sample says little of the log's rest):
        every line a pattern can match still holds one of the windows. Whether any
        alternative took another window (the counts start again either way)."""
        most = max(ADAPT_HITS_MIN, self._scanned // ADAPT_HIT_BYTES)
        common = {w for w, n in self._found.items() if n > most} - self._given_up
        if not common or self.adaptations >= ADAPTATIONS:
            return False
        self._given_up |= common
        self.adaptations += 1
        recent = bytes(buf[max(0, end - ADAPT_SAMPLE):end])
        used = set(self._chosen.values())
        counted: dict[bytes, int] = {}

        def rate(window: bytes) -> float:
            return _count(counted, recent, window) / max(1, len(recent))

        changed = False
        for i, choice in self._chosen.items():
            window = self._options[i][choice][1]
            if window not in common:
                continue
            rest = {c: w for c, (_o, w) in self._options[i].items()
                    if c in used and w not in self._given_up}
            best = min(rest, key=lambda c: rate(rest[c]), default=None)
            if best is not None and rate(rest[best]) < self._found[window] / self._scanned:
                self._chosen[i] = best
                changed = True
        if changed:
            self._compile()
        self._found.clear()
        self._scanned = 0
        return changed


def _cover(options: list[dict[tuple[int, bool], tuple[int, bytes]]],
           cost: Callable[[tuple[int, bool]], float], open_: set[int]
           ) -> dict[int, tuple[int, bool]]:
    """A greedy set cover of the alternatives in `open_`: per alternative the (byte,
    memchr) choice that finds it, choices covering many for little cost first."""
    chosen: dict[int, tuple[int, bool]] = {}
    open_ = set(open_)
    every = sorted({c for i in open_ for c in options[i]})
    while open_:
        best = max(every, key=lambda c: (sum(1 for i in open_ if c in options[i]) / cost(c),
                                         -c[0], c[1]))
        for i in [i for i in open_ if best in options[i]]:
            chosen[i] = best
            open_.discard(i)
    return chosen


def _drop_redundant(chosen: dict[int, tuple[int, bool]],
                    options: list[dict[tuple[int, bool], tuple[int, bytes]]],
                    cost: Callable[[tuple[int, bool]], float],
                    rare_enough: Callable[[int, tuple[int, bool]], bool]) -> None:
    """Give up a chosen byte, dearest first, when every alternative it finds can be found
    by another chosen byte's window that is not common: the greedy cover picks a byte for
    the many alternatives it finds, though later picks may find all of them too (each byte
    looked for is one more pass over the log)."""
    for choice in sorted(set(chosen.values()), key=cost, reverse=True):
        mine = [i for i, c in chosen.items() if c == choice]
        others = set(chosen.values()) - {choice}
        moved = {}
        for i in mine:
            fits = sorted((c for c in others if c in options[i] and rare_enough(i, c)), key=cost)
            if not fits:
                break
            moved[i] = fits[0]
        else:
            chosen.update(moved)


def _count(seen: dict[bytes, int], sample: bytes, window: bytes) -> int:
    """How often `window` occurs in the sample (counted once per window)."""
    if window not in seen:
        seen[window] = sample.count(window)
    return seen[window]


def _byte_counts(sample: bytes) -> list[int]:
    if not sample:
        return [0] * 256
    return [sample.count(bytes((b,))) for b in range(256)]


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
