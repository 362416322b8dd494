"""The tag a warm build's exec carries for `tfwizard build --attach` (warmattach.py)."""

from __future__ import annotations

from pathlib import Path

from tfwizard.core.building.warm import attach as warmattach


def test_tags_round_trip_and_others_are_not_tags():
    tag = warmattach.build_tag("20260101-000000-abcdef", "a" * 64, Path("/w/out"))
    assert warmattach.parse_tag(tag) == {"build": "20260101-000000-abcdef",
                                         "plan": "a" * 64, "out": "/w/out"}
    assert warmattach.parse_tag(warmattach.build_tag("x", "b" * 64, None))["out"] == ""
    assert warmattach.parse_tag("-") is None
    assert warmattach.parse_tag("tfwizard-build=x;plan=short;out=") is None
