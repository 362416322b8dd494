"""The log scan's buffer fitted to a small file (core/diagnosis/logscan.py, issue 17: a no-op
build's few-kB log paid ~5-10 ms zeroing two 8 MB chunks in every served command)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tfwizard.core.diagnosis import logscan
from tfwizard.core.diagnosis.build import _shipped_matcher

LOGS = sorted((Path(__file__).resolve().parents[2] / "data").rglob("*.log*"))


def test_a_small_file_gets_a_small_buffer_and_other_streams_the_asked_one(tmp_path):
    small = tmp_path / "log.txt"
    small.write_bytes(b"INFO: Build completed successfully\n" * 10)
    with small.open("rb") as fh:
        assert logscan._fitted(fh, logscan.CHUNK) == 64 << 10
        fh.read(5)
        assert logscan._fitted(fh, 16) == 16  # a chunk asked smaller stays
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (200 << 10))
    with big.open("rb") as fh:
        assert logscan._fitted(fh, logscan.CHUNK) == (200 << 10) + 1
    assert logscan._fitted(io.BytesIO(b"abc"), logscan.CHUNK) == logscan.CHUNK


@pytest.mark.parametrize("log", [p for p in LOGS if p.suffix in (".txt", ".log")],
                         ids=lambda p: p.name)
def test_a_fitted_scan_finds_what_the_whole_chunk_scan_finds(log):
    matcher = _shipped_matcher()
    with log.open("rb") as fh:
        fitted = matcher.scan_stream(fh)
    whole = matcher.scan_stream(io.BytesIO(log.read_bytes()))  # not a file: never fitted
    assert fitted == whole == matcher.scan_lines(logscan.read_lines(log))
