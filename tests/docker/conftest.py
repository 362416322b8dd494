"""The Docker tests' shared fixtures (one instance per session for the whole folder)."""

from __future__ import annotations

import pytest

from tests.docker import kit


@pytest.fixture(scope="session")
def warm_test_world(tmp_path_factory):
    """kit.make_test_world: one warm `tfwizard test` world for the modules that run tests."""
    yield from kit.make_test_world(tmp_path_factory)
