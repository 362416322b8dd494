"""core/testloop/filetail.py and testjob.RunFiles without an engine: the reading script runs in
this machine's own `sh` on files that grow between polls, as the run's files do in the warm
container. Each byte is read once; the results equal a whole-file parse."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Sequence
from pathlib import Path

from tfwizard.core.testloop.filetail import FileTail
from tfwizard.core.testloop.job import RunFiles, progress_of
from tfwizard.core.testloop.run import parse_test_events

BEP = Path(__file__).parents[2] / "data" / "logs" / "fixture-cold.bep.json"  # real Bazel 4.2.3
FLAKY = "//tensorflow/core:random_uniform_op_test"


def _sh(argv: Sequence[str]) -> bytes:
    return subprocess.run(list(argv), capture_output=True, check=True).stdout


def _test_events() -> list[str]:
    def ev(kind: str, body: dict, **ident: object) -> str:
        return json.dumps({"id": {kind: {"label": FLAKY, **ident}}, kind: body})

    configured = {"id": {"targetConfigured": {"label": FLAKY}},
                  "configured": {"targetKind": "cc_test rule", "testSize": "SMALL"}}
    return [json.dumps(configured),
            ev("testResult", {"status": "FAILED", "testAttemptDurationMillis": "40"},
               attempt=1),
            ev("testResult", {"status": "PASSED", "testAttemptDurationMillis": "50"},
               attempt=2),
            ev("testSummary", {"overallStatus": "FLAKY", "totalRunCount": 2,
                               "totalRunDurationMillis": "50"})]


def test_a_long_output_is_read_once_not_at_every_poll(tmp_path):
    out = tmp_path / "out.log"
    out.write_bytes(b"".join(b"line %d of a long bazel output\n" % i for i in range(200_000)))
    size = out.stat().st_size
    tail = FileTail(_sh, [str(out), str(tmp_path / "bep.json")])  # no BEP yet
    first, bep = tail.poll()
    assert first == out.read_bytes() and bep == b""
    for _ in range(20):  # 20 polls of a file that did not grow
        assert tail.poll() == [b"", b""]
    with out.open("ab") as fh:
        fh.write(b"INFO: Build completed\n")
    assert tail.poll()[0] == b"INFO: Build completed\n"
    # every byte once, plus a size line per file and poll (the old job read 22 x size)
    assert size < tail.bytes_read < size + 22 + 22 * 2 * 12
    assert tail.offsets[0] == out.stat().st_size


def test_bep_and_lines_fed_in_pieces_equal_the_whole_files_parse(tmp_path):
    lines = BEP.read_text("utf-8").splitlines()[:60] + _test_events() + \
        BEP.read_text("utf-8").splitlines()[60:]
    whole = ("\n".join(lines) + "\n").encode("utf-8")
    text = "über\r\nzwei\nlast line without end".encode()
    out, bep = tmp_path / "out.log", tmp_path / "bep.json"
    out.write_bytes(b"")
    bep.write_bytes(b"")
    run = RunFiles(FileTail(_sh, [str(out), str(bep)]), skip=1)
    rng = random.Random(7)
    got: list[str] = []
    at_b = at_o = 0
    while at_b < len(whole) or at_o < len(text):
        step_b, step_o = rng.randint(1, 9000), rng.randint(1, 4)  # cuts mid-line, mid-UTF-8
        with bep.open("ab") as fh:
            fh.write(whole[at_b:at_b + step_b])
        with out.open("ab") as fh:
            fh.write(text[at_o:at_o + step_o])
        at_b, at_o = at_b + step_b, at_o + step_o
        got += run.poll(final=False)
    got += run.poll(final=True)
    assert got == ["zwei", "last line without end"]  # "über" was logged before (skip=1)
    assert run.seen == 3
    assert b"".join(run.bep) == whole
    tests, exit_name = parse_test_events(lines)
    assert run.events.tests() == tests and run.events.exit_name == exit_name == "SUCCESS"
    progress = progress_of(run.events)
    assert (progress.total, progress.flaky, progress.left) == (1, 1, 0)
