"""Re-attaching without an engine: the record replayed as events, lines the record holds
skipped when the container's log is read again."""

from __future__ import annotations

from tfwizard.core.building.run.attach import SkippingSplitter, plan_digest, replay
from tfwizard.core.building.run.record import BuildRecord, new_build_id


def test_replay_gives_the_records_lines_back_with_their_numbers(tmp_path):
    record = BuildRecord.create(new_build_id(), root=tmp_path)
    record.append("tfwizard", ["step build: bazel build"])
    record.append("stdout", ["one", "two"])
    record.append("stderr", ["three"])
    record.append("stdout", ["four"])
    record.close()
    events = replay(BuildRecord.reopen(record.path))
    assert [(e.channel, e.lines, e.first_line) for e in events] == [
        ("tfwizard", ("step build: bazel build",), 1), ("stdout", ("one", "two"), 2),
        ("stderr", ("three",), 4), ("stdout", ("four",), 5)]


def test_the_splitter_skips_what_the_record_already_has_across_chunks():
    splitter = SkippingSplitter(3)
    assert splitter.feed(b"a\nb") == []
    assert splitter.feed(b"\nc\nd\ne") == ["d"]
    assert splitter.flush() == ["e"]
    assert SkippingSplitter(5).feed(b"x\ny\n") == []


def test_a_changed_plan_has_another_digest():
    assert plan_digest('{"a": 1}') == plan_digest('{"a": 1}')
    assert plan_digest('{"a": 1}') != plan_digest('{"a": 2}')
