"""The prefilter's byte choice: one byte fewer to look for when the others find its lines."""

from __future__ import annotations

import pytest

from tfwizard.core.diagnosis.literals import line_pattern
from tfwizard.core.diagnosis.prefilter import Prefilter, _drop_redundant

X, Y, Z = (ord("o"), False), (ord("K"), True), (ord("Q"), True)
COST = {X: 3.0, Y: 1.0, Z: 2.0}


def test_a_dear_byte_whose_alternatives_others_find_is_given_up():
    options = [{X: (0, b"one"), Y: (1, b"oKay")}, {Y: (0, b"Kilo")}, {X: (0, b"over")}]
    chosen = {0: X, 1: Y, 2: X}
    _drop_redundant(chosen, options, COST.__getitem__, lambda i, c: True)
    assert chosen == {0: X, 1: Y, 2: X}  # alternative 2 has no other byte: X stays
    options[2][Z] = (2, b"ovQ!")
    chosen = {0: X, 1: Y, 2: X, 3: Z}
    options.append({Z: (0, b"Quit")})
    _drop_redundant(chosen, options, COST.__getitem__, lambda i, c: True)
    assert chosen == {0: Y, 1: Y, 2: Z, 3: Z}  # X is looked for no more


def test_a_common_window_is_not_taken_instead():
    options = [{X: (0, b"one"), Y: (1, b"oKay")}, {Y: (0, b"Kilo")}]
    chosen = {0: X, 1: Y}
    _drop_redundant(chosen, options, COST.__getitem__, lambda i, c: c != Y or i != 0)
    assert chosen == {0: X, 1: Y}


def test_every_line_a_pattern_can_match_is_still_found():
    words = ["Killed signal terminated program", "No space left on device",
             "Killed (program cc1plus)", "error: unrecognized option"]
    patterns = [line_pattern(str(i), w) for i, w in enumerate(words)]
    lines = [b"INFO: nothing here", *(w.encode() for w in words), b"[3 / 9] Compiling x.cc"]
    log = b"\n".join(lines * 50) + b"\n"
    prefilter = Prefilter(patterns, log[:4096])
    starts = {log.rfind(b"\n", 0, p) + 1 for p in prefilter.positions(log, 0, len(log))}
    wanted = {i for i in range(len(log)) if (i == 0 or log[i - 1] == 10) and any(
        log.startswith(w.encode(), i) for w in words)}
    assert wanted <= starts


#: the most lines of a real build a wrap-tolerant pattern's lead may be on: the lead is the
#: only text the fast path looks for, and every line holding it is checked against the
#: patterns (round 19's "external/bazel_tools/", on 1.2 % of them, cost 18 % of the scan)
MOST_LEAD_SHARE = 0.001


def test_no_pattern_leads_with_text_a_real_build_prints_on_many_lines():
    from tfwizard.core.diagnosis.build import load_failures, matcher_for

    from . import real_logs

    pools = real_logs.filler_lines()  # weighted as bench/diagnosis.py writes its log

    def share(text: str) -> float:
        return sum(weight * sum(text in line for line in pool) / len(pool)
                   for weight, pool in zip(real_logs.POOL_WEIGHTS, pools, strict=True))

    common = {(p.key, p.lead) for p in matcher_for(load_failures()).patterns
              if p.lead is not None and share(p.lead) > MOST_LEAD_SHARE}
    assert common == set(), "put the common start of these patterns inside a (?:...) group"
    assert share("external/bazel_tools/") > MOST_LEAD_SHARE  # the measure can tell


def test_a_counted_repeat_gives_no_literal_text():
    """`.{0,80}` and `\\d{3}` match text without their digits: were "0,80" or "3" taken for
    text every match holds, the prefilter could look for them and miss the line."""
    from tfwizard.core.diagnosis.literals import required_runs

    assert required_runs(r"(?:temporarily|migrated) .{0,80}--incompatible_\w+") == (
        ("--incompatible_",),)
    assert required_runs(r"Tunnel connection failed: \d{3}") == (("Tunnel connection failed: ",),)
    assert set(*required_runs(r"retried x{2,}? times: ERROR")) == {"retried ", " times: ERROR"}
    pattern = line_pattern("k", r"Tunnel connection failed: \d{3}")
    log = b"x\nOSError: Tunnel connection failed: 407 Proxy Authentication Required\n" * 40
    prefilter = Prefilter([pattern], log[:64])
    assert prefilter.positions(log, 0, len(log))


def test_a_window_the_log_repeats_later_is_given_up_and_every_line_still_found():
    """The cover is chosen from the log's start; a window that the log's later part holds
    on many lines is given up, while the log is scanned, for another window of the same
    pattern (of a byte looked for already), and the lines the patterns match stay found."""
    patterns = [line_pattern("a", r"\bExhausted the Quota of retries"),
                line_pattern("b", r"\bQuota failed"), line_pattern("c", r"\bExtinguished fire")]
    prefilter = Prefilter(patterns, b"INFO: start of the build\n" * 100)
    real = [b"ERROR: Exhausted the Quota of retries", b"Quota failed", b"Extinguished fire"]
    decoys = [b"INFO: Exhausted? no, just tired"] * 4000
    log = b"\n".join(decoys + real + decoys + real) + b"\n"

    def lines() -> set[bytes]:
        found = prefilter.positions(log, 0, len(log))
        return {log[log.rfind(b"\n", 0, p) + 1:log.find(b"\n", p)] for p in found}

    assert decoys[0] in lines()
    assert prefilter.adapt(log, len(log))
    assert lines() == set(real)
    assert prefilter.adaptations == 1
    assert not prefilter.adapt(log, len(log))  # nothing common left



@pytest.mark.parametrize("words, merged, sample", [
    # both windows hold the same rare "1", at different offsets: each offset is tried
    (["tat1234", "t1234xyz"], "tat1234xyz", b""),
    # every byte common: both windows start with "t", the second inside the first's match
    (["t1t2t3t4", "t3t4t5"], "t1t2t3t4t5", b"t 1 2 3 4 5 t\n" * 200),
    # a window that extends another: the regex finds the shorter one only
    (["1234", "1234xyz"], "1234xyz", b"t a 1 2 3 4 x y z t\n" * 200),
])
def test_the_windows_found_on_a_line_name_every_pattern_that_matches_it(words, merged, sample):
    """The fast path checks a line only against the patterns whose windows were found on it
    (`Prefilter.owners`): windows that overlap (one regex's match would hide the next) and
    windows that extend one another are each found."""
    patterns = [line_pattern(str(i), w) for i, w in enumerate(words)]
    line = "x" + "".join(words) + " and " + "|".join(reversed(words))
    log = b"INFO: nothing\n" + f"{line}\nx{merged}\n".encode() * 40
    prefilter = Prefilter(patterns, sample)
    among: dict[int, set[int]] = {}
    for pos, window in prefilter.hits(log, 0, len(log)):
        among.setdefault(log.rfind(b"\n", 0, pos) + 1, set()).update(prefilter.owners(window))
    starts = [i for i in range(len(log)) if i == 0 or log[i - 1] == 10][:-1]
    for start in starts:
        text = log[start:log.find(b"\n", start)].decode()
        matching = {i for i, p in enumerate(patterns) if p.regex.search(text)}
        assert matching <= among.get(start, set()), text
    assert len(among) == 80
