"""The real-log corpus (tests/data/real-logs) as data for tests and bench/diagnosis.py.

`entries(kind, holdout=..., in_round=...)` lists manifest entries without reading any
excerpt, so a caller that must not see the holdout files (whoever tunes signatures) can
pick the tuning ones only, and a report can show the newest round apart. `is_holdout` is
the one definition of the holdout rule (a fixed hash of the source URL). `diagnosed_ids`
runs the shipped diagnosis on one excerpt: the build catalogue for build excerpts, the
runtime messages (no host profile) for runtime ones.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from tfwizard.core.vocab import SPEAKERS as _SPEAKERS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 fallback the package itself uses
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent.parent.parent / "data" / "real-logs"
#: the fixture builds' logs (real Bazel output), for bench/diagnosis.py's throughput log
LOGS = CORPUS.parent / "logs"
KINDS = ("build", "runtime")
NONE = "none"  # the expected cause of an excerpt where nothing should be diagnosed
#: the tools an entry's `speaker` may name: the one that printed the decisive line (the
#: signatures' vocabulary, tfwizard.core.vocab.SPEAKERS)
SPEAKERS = _SPEAKERS


def manifest() -> dict[str, Any]:
    with (CORPUS / "index.toml").open("rb") as fh:
        return tomllib.load(fh)


def is_holdout(url: str) -> bool:
    """The holdout rule: a third of the source threads, fixed by their URL alone, so every
    excerpt of one thread falls on the same side and no one chooses which."""
    return int(hashlib.sha256(url.encode()).hexdigest(), 16) % 3 == 0


def entries(kind: str | None = None, *, holdout: bool | None = None,
            in_round: int | None = None) -> list[dict[str, Any]]:
    """Manifest entries, of one kind and/or only holdout (True) or only tuning (False),
    and/or of one collection round (entries without a `round` count as round 0)."""
    return [e for e in manifest()["log"]
            if (kind is None or e["kind"] == kind)
            and (holdout is None or e["holdout"] == holdout)
            and (in_round is None or e.get("round", 0) == in_round)]


def diagnosed_ids(entry: dict[str, Any], *, kind: str | None = None) -> list[str]:
    """The ids the diagnosis of `kind` (default: the excerpt's own) reports, in order."""
    from tfwizard.core.diagnosis.build import diagnose_file
    from tfwizard.core.diagnosis.runtime import diagnose_log

    path = CORPUS / entry["file"]
    if (kind or entry["kind"]) == "build":
        return [d.id for d in diagnose_file(path)]
    with path.open("rb") as fh:
        return [d.id for d in diagnose_log(fh)]


#: a blind reader's labels of every held-out excerpt (rounds up to 23) and of 200 tuning
#: ones, from the text alone (README.md, "A blind reader")
BLIND = CORPUS / "blind-labels.tsv"


def blind_labels() -> dict[str, tuple[str, frozenset[str], str]]:
    """file -> (first cause, the other causes whose evidence is present, "high" or "low")
    as the blind reader labelled them; "undecidable" where the text did not tell."""
    out = {}
    for line in BLIND.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            file, first, also, sure = line.split("\t")
            out[file] = (first, frozenset(also.split(",")) - {"-"}, sure)
    return out


def first_cause(ids: list[str]) -> str:
    """What a diagnosis says first: the first id, or "none"."""
    return ids[0] if ids else NONE


#: the last corpus round whose tuning negatives fill the throughput log: the log stays the
#: same as the corpus grows, so its figure compares across rounds (the negatives of later
#: rounds, near misses that look like failures on purpose, are measured apart: `--all-negatives`)
FILLER_ROUND = 13


def filler_lines(last_round: int | None = FILLER_ROUND) -> tuple[list[str], list[str], list[str]]:
    """(progress lines, compiler output lines, other lines), real ones, as log.txt holds them;
    the "other" lines hold the tuning negatives of rounds up to `last_round` (None: all)."""
    tagged: list[str] = []
    for name in ("fixture-cold.log.txt", "fixture-cached.log.txt"):
        tagged += (LOGS / name).read_text(encoding="utf-8").splitlines()
    for entry in entries("build", holdout=False):
        if last_round is not None and entry.get("round", 0) > last_round:
            continue
        if entry["cause"] == NONE:
            text = (CORPUS / entry["file"]).read_text(encoding="utf-8")
            tagged += ["err | " + line for line in text.splitlines()]
    progress = [line for line in tagged if "] Compiling " in line]
    compiler = [line for line in tagged if "warning:" in line or line.startswith("err |  ")
                or "INFO: From " in line]
    other = [line for line in tagged if line not in progress and line not in compiler]
    return progress, compiler, other


#: the shares of a written log's lines that come from each of filler_lines' pools
POOL_WEIGHTS = (0.7, 0.25, 0.05)
