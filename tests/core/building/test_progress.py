"""ProgressParser and parse_bep on real Bazel output (tests/data/logs, captured from the
fixture build through the runner) and on TensorFlow-shaped lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.building.run.progress import ProgressParser, parse_bep
from tfwizard.core.building.run.record import read_log

LOGS = Path(__file__).resolve().parents[2] / "data" / "logs"


def _feed(name: str) -> tuple[ProgressParser, list]:
    parser = ProgressParser()
    events = [p for _, line in read_log(LOGS / name) if (p := parser.feed(line)) is not None]
    return parser, events


def test_cold_fixture_build_log():
    parser, events = _feed("fixture-cold.log.txt")
    stats = parser.stats
    assert stats.analysed_target == "//tensorflow/tools/pip_package:wheel"
    assert (stats.packages_loaded, stats.targets_configured) == (18, 100)
    assert stats.succeeded is True
    assert stats.total_actions == 30
    assert stats.processes == 30 and stats.cache_hits == 0
    assert stats.process_kinds == {"internal": 2, "processwrapper-sandbox": 28}
    assert stats.elapsed_s == pytest.approx(56.743)
    assert parser.phase == "compile"
    assert (parser.done, parser.total) == (30, 30)  # completed: the bar ends full
    totals = [e.total for e in events if e.total]
    assert totals[0] == 5 and totals[-1] == 30
    assert any(e.message == "Compiling tensorflow/core/kernels/add_op.cc" for e in events)


def test_cached_build_counts_disk_cache_hits():
    parser, _ = _feed("fixture-cached.log.txt")
    assert parser.stats.cache_hits == 28
    assert parser.stats.process_kinds == {"remote cache hit": 28, "internal": 2}


def test_build_completed_is_counted_once():
    parser = ProgressParser()
    line = "INFO: Build completed successfully, 29 total actions"
    assert parser.feed(line) is not None
    assert parser.feed(line) is None and parser.feed(line) is None
    assert parser.stats.total_actions == 29


def test_failed_build_log():
    parser, _ = _feed("fixture-break.log.txt")
    assert parser.stats.succeeded is False
    assert parser.stats.total_actions is None


def test_tensorflow_sized_counts_with_thousands_separators():
    parser = ProgressParser()
    p = parser.feed("[12,345 / 23,456] Compiling tensorflow/core/kernels/conv_ops.cc; "
                    "14s local ... (16 actions, 15 running)")
    assert p is not None
    assert (p.done, p.total, p.phase) == (12345, 23456, "compile")
    assert p.message == "Compiling tensorflow/core/kernels/conv_ops.cc"
    p = parser.feed("Analyzing: target //tensorflow/tools/pip_package:wheel "
                    "(759 packages loaded, 56,246 targets configured)")
    assert p is not None and p.targets_configured == 56246 and p.packages_loaded == 759
    parser.feed("INFO: Analyzed target //tensorflow/tools/pip_package:wheel "
                "(759 packages loaded, 56246 targets configured).")
    assert parser.stats.targets_configured == 56246
    parser.feed("INFO: 23,456 processes: 12,000 remote cache hit, 11,456 local.")
    assert parser.stats.cache_hits == 12000


def test_eta_from_the_action_rate():
    now = [0.0]
    parser = ProgressParser(clock=lambda: now[0], window_s=60)
    parser.feed("[100 / 1,000] Compiling a.cc")
    assert parser.eta_s is None  # one sample is no rate
    now[0] = 10.0
    p = parser.feed("[200 / 1,000] Compiling b.cc")
    assert p is not None and p.rate == pytest.approx(10.0)
    assert p.eta_s == pytest.approx(80.0)
    now[0] = 100.0  # old samples leave the window: the rate follows recent speed
    p = parser.feed("[1,100 / 2,000] Compiling c.cc")
    assert p is not None and p.rate == pytest.approx(10.0)


def test_phases_only_move_forward():
    parser = ProgressParser()
    parser.enter("configure")
    parser.feed("Analyzing: target //x:y (1 packages loaded)")
    assert parser.phase == "analyse"
    parser.feed("[1 / 10] Linking tensorflow/core/libplatform.a")
    assert parser.phase == "compile"  # archives are linked all along: still compiling
    parser.feed("[2 / 10] Linking tensorflow/libtensorflow_framework.so.2 [for host]")
    assert parser.phase == "compile"
    parser.feed("[8 / 10] Linking tensorflow/python/_pywrap_tensorflow_internal.so")
    assert parser.phase == "link"
    parser.feed("[9 / 10] Compiling late.cc")
    assert parser.phase == "link"
    parser.feed("[10 / 10] Executing genrule //tensorflow/tools/pip_package:wheel")
    assert parser.phase == "package"
    assert not parser.enter("configure")


def test_interrupt_and_unrelated_lines():
    parser = ProgressParser()
    assert parser.feed("Bazel caught interrupt signal; shutting down.") is None
    assert parser.stats.interrupted
    assert parser.feed("") is None and parser.feed("random text") is None


def test_bep_success_and_failure():
    ok = parse_bep((LOGS / "fixture-cold.bep.json").read_text().splitlines())
    assert (ok.exit_name, ok.exit_code, ok.overall_success) == ("SUCCESS", 0, True)
    assert ok.targets == {"//tensorflow/tools/pip_package:wheel": True}
    assert ok.actions_executed == 30
    assert any(o.endswith(".whl") for o in ok.outputs)
    bad = parse_bep((LOGS / "fixture-break.bep.json").read_text().splitlines())
    assert (bad.exit_name, bad.exit_code) == ("BUILD_FAILURE", 1)
    assert bad.failed_actions[0]["label"] == "//tensorflow/core:kernels"
    assert bad.failed_actions[0]["output"].endswith("matmul_op.pic.o")
    assert bad.targets == {"//tensorflow/tools/pip_package:wheel": False}


def test_bep_tolerates_a_truncated_last_line_and_reads_aborts():
    lines = (LOGS / "fixture-cold.bep.json").read_text().splitlines()[:5]
    lines.append('{"id":{"buildFinished":{}},"finis')
    out = parse_bep(lines)
    assert out.started and out.bad_lines == 1 and not out.finished
    out = parse_bep(['{"id":{"unknown":{}},"aborted":{"reason":"USER_INTERRUPTED"}}',
                     '{"id":{"buildFinished":{}},"finished":{"exitCode":'
                     '{"name":"INTERRUPTED","code":8}}}'])
    assert out.aborted == ["USER_INTERRUPTED"]
    assert (out.exit_name, out.exit_code, out.overall_success) == ("INTERRUPTED", 8, False)


@pytest.mark.parametrize("log,disk,remote,expected", [
    # (log sample, disk cache, remote cache) -> (ran here, disk hits, remote hits, all hits)
    ("fixture-cold.log.txt", True, False, (28, 0, 0, 0)),
    ("fixture-cached.log.txt", True, False, (0, 28, 0, 28)),  # Bazel 4: "remote cache hit"
    ("fixture-cached.log.txt", False, True, (0, 0, 28, 28)),
    ("fixture-cached.log.txt", True, True, (0, None, None, 28)),  # cannot tell them apart
    ("remote-cache-http10.log.txt", False, True, (28, 0, 0, 0)),
])
def test_cache_summary_from_the_processes_line(log, disk, remote, expected):
    """Issue 15 item 10: every build ends with where its actions came from (real logs)."""
    from tfwizard.core.building.run.progress import cache_summary, cache_summary_text
    from tfwizard.core.streams import untag

    parser = ProgressParser()
    for raw in (LOGS / log).read_text().splitlines():
        parser.feed(untag(raw)[1])
    summary = cache_summary(parser.stats, disk_cache=disk, remote_cache=remote)
    assert summary is not None and summary.processes == 30 and summary.internal == 2
    assert (summary.ran_here, summary.disk_cache_hits, summary.remote_cache_hits,
            summary.cache_hits) == expected
    text = cache_summary_text(summary)
    assert "30 in all" in text and f"{expected[0]} ran here" in text
    assert ("does not tell them apart" in text) == (expected[1] is None)
    assert cache_summary(ProgressParser().stats, disk_cache=True, remote_cache=False) is None
