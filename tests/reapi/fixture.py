"""The `reapi_service` pytest fixture (registered in tests/conftest.py).

Tests that use it need Docker: mark them `docker` (they run in CI, never skipped there).

    def test_x(reapi):            # the session's ReapiService, server and worker running
        reapi.endpoint, reapi.instance_name, reapi.actions(), reapi.stop_server(kill=True)

`reapi_service` is the session-scoped service itself; `reapi` (function scope) hands the same
object over after making sure a test before did not leave the server or worker stopped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests import world
from tests.reapi.service import ReapiService, ServiceUnavailable


@pytest.fixture(scope="session")
def reapi_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReapiService]:
    """BuildGrid + PostgreSQL + the docker-exec test worker, once per test session.

    Skips without Docker, PostgreSQL or Python >= 3.11 for the BuildGrid venv; in CI
    (CI=true) it fails instead. Setup times land in <base>/setup-times.json.
    """
    world.require_docker()
    svc = ReapiService(tmp_path_factory.mktemp("reapi"))
    try:
        svc.start()
    except ServiceUnavailable as e:
        svc.close()
        message = f"REAPI test service unavailable: {e}"
        if world.in_ci():
            pytest.fail(message + " (CI is set: Docker tests must run in CI)", pytrace=False)
        pytest.skip(message)
    (svc.base / "setup-times.json").write_text(json.dumps(vars(svc.times), indent=1))
    yield svc
    svc.close()


@pytest.fixture
def reapi(reapi_service: ReapiService) -> ReapiService:
    """The session's REAPI service with its server and worker running."""
    reapi_service.ensure_running()
    return reapi_service
