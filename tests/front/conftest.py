"""The `front` fixture: one test's own front end (run folder), its servers stopped after."""

from __future__ import annotations

import pytest

from tests.front.front_world import Front


@pytest.fixture
def front(tmp_path):
    """A Front in this test's own run folder; every server it started is stopped at the end."""
    f = Front(tmp_path / "run")
    yield f
    f.stop()
