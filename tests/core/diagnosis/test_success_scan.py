"""The success path's log scan (issue 17): only the warnings' patterns, the same findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.diagnosis import real_logs
from tfwizard.core.diagnosis.build import (
    _warning_matcher,
    diagnose_stream,
    diagnoses_from,
    load_failures,
    warning_signatures,
)

REAL_LOGS = Path(__file__).resolve().parents[2] / "data" / "real-logs"


def test_the_warning_matcher_holds_every_warning_and_no_unrelated_error():
    sigs = load_failures()
    kept = warning_signatures(sigs)
    warnings = {s.id for s in sigs if s.severity == "warning"}
    assert warnings and warnings <= {s.id for s in kept}
    above = {o for s in sigs if s.id in warnings for o in s.secondary_to}
    assert {s.id for s in kept} == warnings | above
    assert len(kept) < len(sigs)


@pytest.mark.parametrize("log", sorted(REAL_LOGS / e["file"] for e in real_logs.entries()),
                         ids=lambda p: p.name)
def test_real_logs_show_the_same_warnings_with_the_small_matcher(log):
    with log.open("rb") as fh:
        full = [d.id for d in diagnose_stream(fh) if d.severity == "warning"]
    with log.open("rb") as fh:
        small = [d.id for d in diagnoses_from(_warning_matcher().scan_stream(fh),
                                              warning_signatures(load_failures()))
                 if d.severity == "warning"]
    assert small == full
