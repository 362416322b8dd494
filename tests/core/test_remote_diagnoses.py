"""Diagnoses of a remote execution service failing during a build (issue 21).

tests/data/reapi/stopped-server-bazel-4.2.3.log is Bazel 4.2.3's own output (progress lines
left out) from tests/docker/test_remote_stopped.py: the BuildGrid test service killed after
two remote compiles. The other lines are the ones tests/docker/test_reapi_service.py finds
in Bazel's output against the same service (a wrong instance, an unknown property, a
container on the bridge asking the host's loopback).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.build.diagnose import diagnose

DATA = Path(__file__).resolve().parent.parent / "data" / "reapi"


def _ids(lines: list[str], exit_code: int | None = None) -> list[str]:
    return [d.id for d in diagnose(lines, exit_code=exit_code)]


def test_a_server_killed_mid_build_is_named_not_a_compile_error():
    lines = (DATA / "stopped-server-bazel-4.2.3.log").read_text().splitlines()
    found = diagnose(lines, exit_code=34)
    assert [d.id for d in found] == ["remote-unavailable"]
    first = found[0]
    assert first.recipe_fix == {"remote.local_fallback": True}
    assert "remote.executor" in first.next_step and "remote.retries" in first.next_step
    assert "Compiling tensorflow/core/framework/device.cc" in first.excerpt[0]


@pytest.mark.parametrize(("line", "expected"), [
    ("ERROR: Failed to query remote execution capabilities: INVALID_ARGUMENT: Invalid "
     "instance name: [no-such-instance]", "remote-instance-invalid"),
    ("ERROR: /src/tensorflow/core/BUILD:26:11: Compiling tensorflow/core/platform/env.cc "
     "failed: (Exit 34): FAILED_PRECONDITION: Unregistered platform property "
     "[gpu={'nvidia'}]", "remote-platform-unregistered"),
    ("ERROR: Failed to query remote execution capabilities: Connection refused: "
     "/127.0.0.1:40125", "remote-unavailable"),
])
def test_what_the_service_says_gets_its_own_diagnosis(line, expected):
    assert _ids([line, "FAILED: Build did NOT complete successfully"], 34)[0] == expected


def test_bulk_transfer_errors_beside_an_executor_only():
    line = ("ERROR: /src/tensorflow/core/BUILD:26:11: Compiling tensorflow/core/platform/env.cc "
            "failed: (Exit 34): 3 errors during bulk transfer")
    step = "tfw | step build: bazel build --remote_executor=grpc://svc:8980 //x:y"
    assert _ids([step, line], 34)[0] == "remote-bulk-transfer"
    # a remote cache's warning is the cache's own diagnosis, not the executor's
    cache = "WARNING: Remote Cache: 4 errors during bulk transfer:"
    assert "remote-bulk-transfer" not in _ids([cache, "INFO: Build completed successfully"])
