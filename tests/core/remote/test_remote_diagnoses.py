"""Diagnoses of a remote execution service failing during a build (issue 21).

tests/data/reapi/stopped-server-bazel-4.2.3.log is Bazel 4.2.3's own output (progress lines
left out) from tests/docker/test_remote_stopped.py: the BuildGrid test service killed after
two remote compiles. The other lines are the ones tests/docker/test_reapi_service.py finds
in Bazel's output against the same service (a container on the bridge asking the host's
loopback), and the providers' own words for a platform no worker serves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.diagnosis.build import diagnose
from tfwizard.core.fixes import resolve_diagnoses
from tfwizard.core.recipe import parse_recipe

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "reapi"


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


def test_a_capabilities_query_refused_is_named():
    # what test_reapi_service.py finds when a container on the bridge asks the host's
    # loopback
    line = ("ERROR: Failed to query remote execution capabilities: Connection refused: "
            "/127.0.0.1:40125")
    assert _ids([line, "FAILED: Build did NOT complete successfully"], 34)[0] == \
        "remote-unavailable"


@pytest.mark.parametrize("line", [
    # EngFlow/free's README (an action that names no image)
    "ERROR: /src/tensorflow/core/BUILD:26:11: Compiling tensorflow/core/platform/env.cc "
    "failed: (Exit 34): INVALID_ARGUMENT: No matching action runner found (available: "
    "com.engflow.re.exec.docker.CachedDockerActionRunner@c4bf93d,com.engflow.re.exec.docker."
    "DockerActionRunner@28c06c4), client-provided platform proto:",
    # Buildbarn's scheduler, its format string filled in
    "ERROR: /src/tensorflow/core/BUILD:26:11: Compiling tensorflow/core/platform/env.cc "
    'failed: (Exit 34): FAILED_PRECONDITION: No workers exist for instance name prefix "fuse" '
    'platform {"properties":[{"name":"OSFamily","value":"Linux"}]}',
])
def test_a_platform_no_worker_serves_is_named(line):
    assert _ids([line, "FAILED: Build did NOT complete successfully"], 34)[0] == \
        "remote-no-runner"


def test_blobs_that_could_not_move_beside_an_executor_are_the_same_diagnosis():
    # the other way Bazel 4.2.3 failed when the test service was killed (tests/reapi/README.md)
    line = ("ERROR: /src/tensorflow/core/BUILD:26:11: Compiling tensorflow/core/platform/env.cc "
            "failed: (Exit 34): 3 errors during bulk transfer")
    assert _ids([line], 34)[0] == "remote-unavailable"
    # a remote cache's warning is not the executor's failure
    cache = "WARNING: Remote Cache: 4 errors during bulk transfer:"
    assert "remote-unavailable" not in _ids([cache, "INFO: Build completed successfully"])


# Bazel 4.2.3's own output against the BuildGrid test service, captured by
# tests/reapi/capture_errors.py (no preflight in front of Bazel)
@pytest.mark.parametrize(("log", "sig", "words"), [
    ("wrong-instance-bazel-4.2.3.log", "remote-unknown-instance",
     "Invalid instance name: [no-such-instance]"),
    ("unregistered-property-bazel-4.2.3.log", "remote-unknown-platform-property",
     "Unregistered platform property [gpu={'nvidia'}]"),
])
def test_the_services_refusals_are_named_from_real_logs(log, sig, words):
    found = diagnose((DATA / log).read_text().splitlines(), exit_code=34)
    assert [d.id for d in found] == [sig]
    assert words in found[0].excerpt[0]
    assert "remote." in found[0].next_step and "--preflight" in found[0].next_step


def test_nativelinks_unknown_instance_is_the_same_diagnosis():
    # the server's words in TraceMachina/nativelink#1688, as Bazel passes them on
    line = ("ERROR: /src/x/BUILD:3:10: Compiling x.cc failed: (Exit 34): NOT_FOUND: status: "
            "NotFound, message: \"No scheduler with the instance name projects\"")
    assert _ids([line], 34)[0] == "remote-unknown-instance"


@pytest.mark.parametrize("line", [
    # grpc/grpc#20777: Bazel on RBE, a blob download past the 60 s default
    "ERROR: T:/src/github/grpc/BUILD:2000:1: C++ compilation of rule '//:grpc++_base' failed "
    "(Exit 34). Note: Remote connection/protocol failed with: execution failed "
    "java.io.IOException: io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: deadline "
    "exceeded after 59999888533ns",
    # newer gRPC prints seconds
    "ERROR: /src/x/BUILD:3:10: Compiling x.cc failed: (Exit 34): DEADLINE_EXCEEDED: deadline "
    "exceeded after 59.999870503s. [closed=[], open=[[remote_addr=/10.0.0.2:443]]]",
])
def test_a_remote_call_past_the_timeout_is_named(line):
    assert _ids([line, "FAILED: Build did NOT complete successfully"], 34)[0] == \
        "remote-deadline-exceeded"


def test_a_slow_remote_action_is_not_a_timeout_on_bazel_4():
    # --remote_timeout=2 and a 20 s genrule on the test worker: Bazel 4.2.3 waited and built
    log = (DATA / "remote-timeout-slow-action-bazel-4.2.3.log").read_text()
    assert "20s remote" in log and "INFO: Build completed successfully" in log
    assert diagnose(log.splitlines(), exit_code=0) == []


# Bazel's words for a failed upload of the build's events (bazelbuild/bazel#14576, #6026,
# #11764; tweag/rules_haskell#1498): the Build Event Service, not the cache or executor
@pytest.mark.parametrize("line", [
    "ERROR: The Build Event Protocol upload timed out. com.google.common.util.concurrent."
    "TimeoutFuture$TimeoutFutureException: Timed out: com.google.common.util.concurrent."
    "Futures$NonCancellationPropagatingFuture@43553e48[status=PENDING]",
    "ERROR: Build Event Protocol upload failed: Attempting to send over a closed stream",
    "ERROR: The Build Event Protocol upload failed: All retry attempts failed. "
    "DEADLINE_EXCEEDED: DEADLINE_EXCEEDED: deadline exceeded after 14999958197ns",
    "ERROR: The Build Event Protocol local file upload failed: /root/.cache/bazel/_bazel_root/"
    "d/execroot/w/bazel-out/k8-fastbuild/bin/a.jar (No such file or directory)",
])
def test_a_failed_upload_of_the_build_s_events_is_not_a_remote_call_of_the_build(line):
    found = diagnose(["INFO: Build completed successfully, 3 total actions", line])
    assert [d.id for d in found] == ["bes-upload-failed"]
    assert "15 s" in found[0].cause and "--bes_timeout" in found[0].next_step
    text = (ROOT / "recipes" / "tf221-cpu-portable.toml").read_bytes()
    recipe = parse_recipe(text + b'\n[remote]\nbes_backend = "grpcs://bes.example.com"\n',
                          "r.toml")
    assert recipe.remote.bes_backend
    fixed = resolve_diagnoses(found, recipe=recipe)[0]
    assert fixed.recipe_fix == {"remote.bes_backend": ""}


def test_a_warning_about_the_previous_upload_is_not_a_failure():
    line = ("WARNING: The background upload of the Build Event Protocol for the previous "
            "invocation failed with the following exception: 'com.google.devtools.build.lib."
            "util.AbruptExitException: The Build Event Protocol upload failed: All retry "
            "attempts failed.'. Ignoring the failure and starting a new invocation..")
    assert _ids(["INFO: Build completed successfully, 3 total actions", line]) == []
    # an action's own remote call past its deadline is still remote-deadline-exceeded
    assert _ids(["ERROR: /s/BUILD:3:1: Compiling a.cc failed: DEADLINE_EXCEEDED: deadline "
                 "exceeded after 59.99s"])[0] == "remote-deadline-exceeded"
