"""Benchmark: how well and how fast the diagnosis works on real logs.

1. The real-log corpus (tests/data/real-logs): per kind (build, runtime), the tuning
   excerpts and the held-out third apart, and within the holdout each collection round's
   excerpts (round 5 on, each collected after the signatures of its time) apart from the
   older ones.
   An excerpt is recognised when the first cause reported is its label ("none": nothing
   reported); the fallback for unrecognised failures (core/diagnosis/unrecognised.py)
   never counts as recognised. Then, per cause, recognised of
   excerpts in each group; the false positives: a diagnosis on an excerpt where nothing
   applies, a specific build signature where only the generic one should fire, or an id
   that is neither the excerpt's cause nor one tests/core/diagnosis/test_real_logs_diagnosis.py
   lists as present too, counted apart by where they fall (on a negative, beside the right
   first cause, or instead of it: the first cause wrong); the negatives (every one, held
   out or not) with a diagnosis of either catalogue; and the fallback's coverage: of the
   failures nothing specific recognised, how many get at least one root-cause line (and of
   the others, how many get their last lines instead). Hits
   of the other kind's catalogue (a build signature on a program's output and back) are
   counted apart. Among the misses, the excerpts labelled build-failed whose first id is
   another generic signature (nothing specific named, as the label wants) are counted too,
   and what `tfwizard diagnose` without --runtime gives (a log no build signature matches
   is read as a program's output): the runtime excerpts it gets right, the build excerpts
   it reads as a program's output.
   `--tuning` reports the tuning excerpts only (for whoever writes signatures: the holdout
   is run once, when they are final). Last, the blind reader's labels (the text alone,
   tests/data/real-logs/README.md "A blind reader") beside the labels and the diagnosis:
   how often the reader agrees, the diagnosis right where it does, and the false
   positives whose evidence the reader sees present too.
2. Throughput: a Bazel log of SIZE MB (default 2048) is written to a temporary folder from
   real build log lines (real_logs.filler_lines: the fixture builds' log.txt, harmless
   corpus excerpts of rounds up to FILLER_ROUND, so the log stays the same as the corpus
   grows, progress lines in their format), with a real compiler OOM near the end;
   `tfwizard diagnose`'s path (diagnose_file) reads it in a fresh process, which reports its wall time and peak
   RSS. Baselines in the same run: reading the file in the same chunks without scanning,
   and the per-line reference (LineMatcher.scan_lines) on the first 100 MB, whose result
   the fast path must equal. Targets: >= 100 MB/s, and peak RSS no higher than on a log a
   tenth the size (constant memory). The fallback's scan (run only when nothing is
   recognised) is timed on the same log. `--all-negatives`: diagnose_file once more on a
   log of the same size whose other lines come from every round's negatives (near misses
   that look like failures on purpose: a harder log than a real build's).

    .venv/bin/python bench/diagnosis.py [SIZE_MB] [--keep DIR] [--tuning] [--no-throughput]
                                        [--all-negatives]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.core.diagnosis import real_logs  # noqa: E402
from tests.core.diagnosis.test_real_logs_diagnosis import false_positives  # noqa: E402

FAILURE = "build/gcc-killed-signal-cc1plus-tf-seal.log"  # a real OOM, put near the end
BLOCK = 4 << 20


#: the groups of excerpts reported apart: (name, holdout, round or None for any); the
#: rounds are the manifest's own (entries without a `round` are the older ones, round 0)
GROUPS = (("tuning", False, None), ("holdout", True, None),
          *((f"holdout round {r}", True, r)
            for r in sorted({e["round"] for e in real_logs.entries() if e.get("round")})),
          ("holdout older", True, 0))


def _diagnosis(entry: dict) -> tuple[list[str], bool]:
    """The ids diagnosed on an excerpt, and whether they name a cause: for a build log a
    specific error signature (diagnose.recognised), for a program's output any message."""
    from tfwizard.core.diagnosis.build import diagnose_file, recognised

    if entry["kind"] == "build":
        found = diagnose_file(real_logs.CORPUS / entry["file"])
        return [d.id for d in found], recognised(found)
    ids = real_logs.diagnosed_ids(entry)
    return ids, bool(ids)


def _fallback_lines(entry: dict) -> tuple[int, int]:
    """How many root-cause lines the fallback shows, and (when none) how many last lines."""
    from tfwizard.core.diagnosis.unrecognised import root_lines

    with (real_logs.CORPUS / entry["file"]).open("rb") as fh:
        unknown = root_lines(fh, entry["kind"])
    return len(unknown.lines), len(unknown.tail)


def _count_blind(cell: dict, label: tuple | None, entry: dict, right: bool,
                 bad: list[str]) -> None:
    """One excerpt against the blind reader's label (README.md, "A blind reader")."""
    for key in ("read", "reader agrees", "right where the reader agrees", "false positives",
                "false positives the reader sees present", "not read"):
        cell.setdefault(key, 0)
    if label is None:
        cell["not read"] += 1
        return
    first, also, _sure = label
    agrees = first == entry["cause"]
    cell["read"] += 1
    cell["reader agrees"] += agrees
    cell["right where the reader agrees"] += agrees and right
    cell["false positives"] += len(bad)
    cell["false positives the reader sees present"] += sum(
        fp.rsplit(": ", 1)[1] in also | {first} for fp in bad)


def corpus_report(*, tuning_only: bool = False) -> dict:
    """Per group and kind: recognised, false positives, misses, the fallback's coverage,
    per cause; the negatives; the other catalogue's hits."""
    report: dict = {"groups": {}, "causes": {}, "blind": {}}
    blind = real_logs.blind_labels()
    own: dict[str, list[str]] = {}  # per excerpt, the ids of its own kind's diagnosis
    groups = GROUPS[:1] if tuning_only else GROUPS
    for name, holdout, round_ in groups:
        for kind in real_logs.KINDS:
            row = {"right": 0, "total": 0, "false_positives": [], "wrong": [],
                   "unrecognised": 0, "with_lines": 0, "with_tail": 0,
                   "generic_first": 0,
                   "fp_where": {"on negatives": 0, "beside the right cause": 0,
                                "instead of it": 0}}
            for entry in real_logs.entries(kind, holdout=holdout, in_round=round_):
                ids, named = _diagnosis(entry)
                right = real_logs.first_cause(ids) == entry["cause"]
                row["total"] += 1
                row["right"] += right
                if not right:
                    row["wrong"].append(f"{entry['file']}: {entry['cause']} -> {ids}")
                    # nothing specific named, as the label wants, but another generic
                    # signature ("a C++ file failed to compile") first: still a miss
                    row["generic_first"] += entry["cause"] == "build-failed" and bool(ids) \
                        and not named
                bad = false_positives(entry, ids)
                row["false_positives"] += bad
                where = ("on negatives" if entry["cause"] == real_logs.NONE
                         else "beside the right cause" if right else "instead of it")
                row["fp_where"][where] += len(bad)
                if entry["cause"] != real_logs.NONE and not named:
                    row["unrecognised"] += 1
                    roots, tail = _fallback_lines(entry)
                    row["with_lines"] += roots > 0
                    row["with_tail"] += not roots and tail > 0
                if round_ is None:
                    own[entry["file"]] = ids
                    _count_blind(report["blind"].setdefault((name, kind), {}),
                                 blind.get(entry["file"]), entry, right, bad)
                    cell = report["causes"].setdefault((kind, entry["cause"]), {})
                    counts = cell.setdefault(name, [0, 0])
                    counts[0] += right
                    counts[1] += 1
            report["groups"][(name, kind)] = row
    negatives = [e for e in real_logs.entries() if e["cause"] == real_logs.NONE
                 and (not tuning_only or not e["holdout"])]
    report["negatives"] = (sum(any(real_logs.diagnosed_ids(e, kind=k) for k in real_logs.KINDS)
                               for e in negatives), len(negatives))
    cross = []
    # `tfwizard diagnose LOG` without --runtime: a log no build signature matches at all
    # is read as a program's output (cli/diagnose.py)
    plain = report["without --runtime"] = {}
    for entry in real_logs.entries(holdout=False if tuning_only else None):
        other = "runtime" if entry["kind"] == "build" else "build"
        ids = real_logs.diagnosed_ids(entry, kind=other)
        if ids:
            cross.append(f"{entry['file']} ({entry['cause']}) -> {other} {ids}")
        cell = plain.setdefault("holdout" if entry["holdout"] else "tuning", [0, 0, 0])
        if entry["kind"] == "runtime":
            shown = [] if ids else own[entry["file"]]
            cell[0] += not ids and real_logs.first_cause(shown) == entry["cause"]
            cell[1] += 1
        elif not own[entry["file"]] and ids:
            cell[2] += 1
    report["cross-kind hits"] = cross
    return report


def print_corpus(report: dict) -> None:
    """The corpus report as text: the groups, the negatives, the causes, the misses."""
    def pct(a: int, b: int) -> str:
        return f"{100 * a / max(1, b):5.1f} %"

    print("corpus: recognised (the first cause is the label) / excerpts; false positives; "
          "the fallback on the failures nothing specific recognised")
    for (name, kind), row in report["groups"].items():
        print(f"  {name:16} {kind:8} {row['right']:3} / {row['total']:3} ({pct(row['right'], row['total'])})"
              f"  false positives: {len(row['false_positives'])}"
              f" ({', '.join(f'{k} {v}' for k, v in row['fp_where'].items())})"
              f"  fallback: {row['with_lines']} / {row['unrecognised']} with root-cause lines"
              f" ({row['with_tail']} more with their last lines)")
    for (name, kind), row in report["groups"].items():
        if row["generic_first"]:
            print(f"  {name:16} {kind:8} of its misses, build-failed excerpts with another "
                  f"generic signature first (nothing specific named): {row['generic_first']}")
    fired, total = report["negatives"]
    print(f"  negatives with any diagnosis (either catalogue): {fired} of {total}")
    print(f"  cross-kind hits (the same message in the other context): "
          f"{len(report['cross-kind hits'])}")
    for name, (right, total, as_runtime) in report["without --runtime"].items():
        print(f"  {name:8} diagnose without --runtime: runtime excerpts with the right first "
              f"cause {right} / {total}; build excerpts read as a program's output "
              f"{as_runtime}")
    names = [n for n, _h, r in GROUPS if r is None and any(g[0] == n for g in report["groups"])]
    print("\nper cause (recognised / excerpts): " + ", ".join(names))
    for (kind, cause), cell in sorted(report["causes"].items()):
        parts = [f"{cell[n][0]}/{cell[n][1]}" if n in cell else "-" for n in names]
        print(f"  {kind:8} {cause:34} " + "   ".join(f"{p:>7}" for p in parts))
    print("\nmisses and false positives")
    for (name, kind), row in report["groups"].items():
        if name == "holdout" or not (row["wrong"] or row["false_positives"]):
            continue  # the holdout's are listed by round
        print(f"  {name} {kind}:")
        for text in row["wrong"] + [f"false positive {fp}" for fp in row["false_positives"]]:
            print(f"      {text}")
    for text in report["cross-kind hits"]:
        print(f"  cross-kind: {text}")
    print("\na blind reader of the text alone (tests/data/real-logs/README.md): the reader's "
          "first cause is the label; of those, the diagnosis right; the false positives the "
          "reader sees present too")
    for (name, kind), c in report["blind"].items():
        print(f"  {name:8} {kind:8} reader agrees {c['reader agrees']:3} / {c['read']:3} "
              f"({pct(c['reader agrees'], c['read'])}); diagnosis right on "
              f"{c['right where the reader agrees']:3} of those "
              f"({pct(c['right where the reader agrees'], c['reader agrees'])}); false "
              f"positives {c['false positives']}, {c['false positives the reader sees present']}"
              f" present to the reader; not read: {c['not read']}")


def write_log(path: Path, size: int,
              last_round: int | None = real_logs.FILLER_ROUND) -> int:
    """A `size`-byte Bazel log ending in a real OOM; the number of the failure's first line."""
    progress, compiler, other = real_logs.filler_lines(last_round)
    rng = random.Random(18)
    lines: list[str] = []
    n = 0
    while n < BLOCK:
        roll = rng.random()
        weights = real_logs.POOL_WEIGHTS
        pool = (progress if roll < weights[0] else
                compiler if roll < weights[0] + weights[1] else other)
        line = rng.choice(pool)
        if pool is progress:  # counters move on, as in a real build
            done = rng.randrange(1, 40000)
            line = line.replace(line[line.index("[") : line.index("]") + 1],
                                f"[{done:,} / {done + rng.randrange(1, 9000):,}]", 1)
        lines.append(line)
        n += len(line.encode()) + 1
    block = ("\n".join(lines) + "\n").encode()
    failure = (real_logs.CORPUS / FAILURE).read_text(encoding="utf-8").splitlines()
    tail = ("\n".join("err | " + line for line in failure) + "\n").encode()
    with path.open("wb") as fh:
        written = line_no = 0
        while written + len(block) < size - (1 << 20):
            fh.write(block)
            written += len(block)
            line_no += block.count(b"\n")
        first = line_no + 1
        fh.write(tail)
        fh.write(block[: max(0, size - written - len(tail))].rsplit(b"\n", 1)[0] + b"\n")
    return first


_CHILD = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tfwizard.core.diagnosis.build import diagnose_file
from tfwizard.core.diagnosis.logscan import CHUNK

def hwm():
    for line in open('/proc/self/status'):
        if line.startswith(('VmHWM', 'VmRSS')):
            yield line.split()[0].rstrip(':'), int(line.split()[1]) // 1024
path, mode = Path(sys.argv[2]), sys.argv[3]
before = dict(hwm())
t = time.perf_counter()
if mode == 'read':
    with path.open('rb') as fh:
        while fh.read(CHUNK):
            pass
    found = []
elif mode == 'fallback':
    from tfwizard.core.diagnosis.unrecognised import root_lines
    with path.open('rb') as fh:
        found = [{'line': r.line, 'speaker': r.speaker} for r in root_lines(fh, 'build').lines]
else:
    found = [{'id': d.id, 'lines': list(d.lines[:3])} for d in diagnose_file(path)]
seconds = time.perf_counter() - t
print(json.dumps({'seconds': seconds, 'rss_mb_before': before['VmRSS'],
                  'peak_rss_mb': dict(hwm())['VmHWM'], 'found': found}))
"""


def run_child(path: Path, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(path), mode],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def reference_equals_fast_path(path: Path, limit: int) -> tuple[bool, float, float]:
    """The first `limit` bytes through the per-line reference and through the fast path."""
    import io

    from tfwizard.core.diagnosis.build import load_failures, matcher_for
    from tfwizard.core.diagnosis.logscan import _decode

    with path.open("rb") as fh:
        data = fh.read(limit)
    data = data[: data.rfind(b"\n") + 1]
    matcher = matcher_for(load_failures())
    t = time.perf_counter()
    reference = matcher.scan_lines((_decode(line) for line in data[:-1].split(b"\n")),
                                   cut_lines=False)  # as through the prefilter
    ref_s = time.perf_counter() - t
    t = time.perf_counter()
    fast = matcher.scan_stream(io.BytesIO(data))
    fast_s = time.perf_counter() - t
    return reference == fast, len(data) / 1e6 / ref_s, len(data) / 1e6 / fast_s


def main() -> None:
    args = sys.argv[1:]
    if {"-h", "--help"} & set(args):
        print(__doc__)
        return
    keep = None
    if "--keep" in args:
        keep = Path(args[args.index("--keep") + 1])
        del args[args.index("--keep"): args.index("--keep") + 2]
    tuning_only = "--tuning" in args
    throughput = "--no-throughput" not in args
    all_negatives = "--all-negatives" in args
    args = [a for a in args if a not in ("--tuning", "--no-throughput", "--all-negatives")]
    if len(args) > 1 or (args and not args[0].isdigit()):
        sys.exit(f"bench/diagnosis.py: expected SIZE_MB (a whole number) and the options "
                 f"below, not {' '.join(args)!r}\n{__doc__.rsplit(chr(10) * 2, 1)[-1]}")
    size_mb = int(args[0]) if args else 2048

    print_corpus(corpus_report(tuning_only=tuning_only))
    if throughput:
        measure_throughput(size_mb, keep, all_negatives)


def measure_throughput(size_mb: int, keep: Path | None, all_negatives: bool = False) -> None:
    """The throughput part (see the module docstring)."""
    folder = keep or Path(tempfile.mkdtemp(prefix="tfwizard-bench-diag-"))
    folder.mkdir(parents=True, exist_ok=True)
    big, small = folder / "big.log", folder / "small.log"
    try:
        t = time.perf_counter()
        first = write_log(big, size_mb << 20)
        write_log(small, max(1, size_mb // 10) << 20)
        mb = big.stat().st_size / 1e6
        print(f"\nlog: {mb:.0f} MB written in {time.perf_counter() - t:.1f} s "
              f"(OOM at line {first:,})")
        read = run_child(big, "read")
        small_run = run_child(small, "diagnose")
        run = run_child(big, "diagnose")
        same, ref_rate, fast_rate = reference_equals_fast_path(big, 100 << 20)
        expected = [{"id": "oom-compiler-killed", "lines": [first]}]
        print(f"  reading only (baseline)   {mb / read['seconds']:8.0f} MB/s  "
              f"peak RSS {read['peak_rss_mb']} MB")
        print(f"  per-line reference, 100 MB {ref_rate:7.1f} MB/s  "
              f"(fast path {fast_rate:.0f} MB/s on the same bytes; same result: {same})")
        print(f"  diagnose_file             {mb / run['seconds']:8.1f} MB/s  "
              f"{run['seconds']:.1f} s  peak RSS {run['peak_rss_mb']} MB "
              f"(at start {run['rss_mb_before']} MB; on a {small.stat().st_size / 1e6:.0f} MB "
              f"log {small_run['peak_rss_mb']} MB)")
        print(f"  found {run['found']} (expected {expected}): "
              f"{'right' if run['found'] == expected else 'WRONG'}")
        ok = (mb / run["seconds"] >= 100 and run["found"] == expected and same
              and run["peak_rss_mb"] <= small_run["peak_rss_mb"] + 16)
        print(f"  target >= 100 MB/s in constant memory: {'met' if ok else 'NOT met'}")
        fallback = run_child(big, "fallback")  # only run when nothing is recognised
        print(f"  the fallback's scan       {mb / fallback['seconds']:8.1f} MB/s  "
              f"{fallback['seconds']:.1f} s  peak RSS {fallback['peak_rss_mb']} MB; "
              f"root-cause lines {fallback['found']}")
        if all_negatives:  # the same size, its other lines from every tuning negative
            write_log(big, size_mb << 20, None)
            every = run_child(big, "diagnose")
            print(f"  with every round's negatives as filler: diagnose_file "
                  f"{mb / every['seconds']:.1f} MB/s")
    finally:
        if keep is None:
            for path in (big, small):
                path.unlink(missing_ok=True)
            folder.rmdir()


if __name__ == "__main__":
    main()
