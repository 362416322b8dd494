"""Reference protobuf bytes for tfwizard's hand-written REAPI wire code (tests only).

Runs with the BuildGrid venv's Python: the messages are built with the generated REAPI,
longrunning and google.rpc classes that ship in BuildGrid's wheel and serialised by the
protobuf runtime, an implementation independent of tfwizard/core/remote/reapi.py. Prints JSON
{name: {"hex": ..., "about": ...}}; tests/data/reapi/wire-golden.json is its output, and
tests/docker/test_reapi_client.py runs it again to check that file is still what the
reference library writes.

    .venv-buildgrid/bin/python tests/reapi/wire_reference.py > tests/data/reapi/wire-golden.json
"""

from __future__ import annotations

import hashlib
import json
import sys

from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.semver import semver_pb2
from buildgrid._protos.google.longrunning import operations_pb2
from buildgrid._protos.google.rpc import status_pb2
from google.protobuf import any_pb2

INSTANCE = "tfwizard-test"
PROBE_ARGV = ["/bin/sh", "-c", "exit 0"]
PROPERTIES = [("OSFamily", "Linux"), ("container-image", "docker://tfwizard-test/bazel:bookworm")]
SALT = bytes(range(16))


def digest(data: bytes) -> re_pb2.Digest:
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def platform() -> re_pb2.Platform:
    return re_pb2.Platform(properties=[re_pb2.Platform.Property(name=n, value=v)
                                       for n, v in sorted(PROPERTIES)])


def any_of(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def main() -> int:
    out: dict[str, dict[str, str]] = {}

    def put(name: str, message: object, about: str) -> None:
        out[name] = {"hex": message.SerializeToString(deterministic=True).hex(),
                     "about": about}

    put("get_capabilities_request", re_pb2.GetCapabilitiesRequest(instance_name=INSTANCE),
        f"GetCapabilitiesRequest(instance_name={INSTANCE!r})")

    caps = re_pb2.ServerCapabilities(
        cache_capabilities=re_pb2.CacheCapabilities(
            digest_functions=[re_pb2.DigestFunction.SHA256, re_pb2.DigestFunction.BLAKE3],
            action_cache_update_capabilities=re_pb2.ActionCacheUpdateCapabilities(
                update_enabled=True),
            max_batch_total_size_bytes=4193280,
            symlink_absolute_path_strategy=re_pb2.SymlinkAbsolutePathStrategy.ALLOWED,
            supported_compressors=[re_pb2.Compressor.ZSTD, re_pb2.Compressor.DEFLATE]),
        execution_capabilities=re_pb2.ExecutionCapabilities(
            digest_function=re_pb2.DigestFunction.SHA256, exec_enabled=True,
            execution_priority_capabilities=re_pb2.PriorityCapabilities(priorities=[
                re_pb2.PriorityCapabilities.PriorityRange(min_priority=-1000,
                                                          max_priority=1000)]),
            supported_node_properties=["OSFamily", "container-image"],
            digest_functions=[re_pb2.DigestFunction.SHA256, re_pb2.DigestFunction.BLAKE3]),
        deprecated_api_version=semver_pb2.SemVer(major=1, minor=9),
        low_api_version=semver_pb2.SemVer(major=2),
        high_api_version=semver_pb2.SemVer(major=2, minor=3, patch=1, prerelease="rc1"))
    put("server_capabilities_full", caps, "every field tfwizard reads, set")
    put("server_capabilities_cache_only", re_pb2.ServerCapabilities(
        cache_capabilities=re_pb2.CacheCapabilities(
            digest_functions=[re_pb2.DigestFunction.SHA256]),
        execution_capabilities=re_pb2.ExecutionCapabilities(
            digest_function=re_pb2.DigestFunction.SHA256, exec_enabled=False),
        low_api_version=semver_pb2.SemVer(major=2),
        high_api_version=semver_pb2.SemVer(major=2, minor=2)),
        "execution capabilities with exec_enabled false (proto3: left out)")
    put("server_capabilities_md5", re_pb2.ServerCapabilities(
        cache_capabilities=re_pb2.CacheCapabilities(digest_functions=[re_pb2.DigestFunction.MD5]),
        execution_capabilities=re_pb2.ExecutionCapabilities(
            digest_function=re_pb2.DigestFunction.MD5, exec_enabled=True)),
        "a service hashing with MD5 only, stating no API versions")

    command = re_pb2.Command(arguments=PROBE_ARGV, platform=platform())
    command_data = command.SerializeToString(deterministic=True)
    put("probe_command", command, "Command(arguments=PROBE_ARGV, platform=PROPERTIES)")
    action = re_pb2.Action(command_digest=digest(command_data), input_root_digest=digest(b""),
                           do_not_cache=True, salt=SALT, platform=platform())
    action.timeout.FromSeconds(60)
    action_data = action.SerializeToString(deterministic=True)
    put("probe_action", action, "Action(the command, empty input root, timeout 60 s, "
                                "do_not_cache, salt bytes 0..15, platform)")
    put("batch_update_blobs_request", re_pb2.BatchUpdateBlobsRequest(
        instance_name=INSTANCE, requests=[
            re_pb2.BatchUpdateBlobsRequest.Request(digest=digest(d), data=d)
            for d in (command_data, action_data)]), "the command and the action")
    put("execute_request", re_pb2.ExecuteRequest(
        instance_name=INSTANCE, skip_cache_lookup=True, action_digest=digest(action_data)),
        "ExecuteRequest(skip_cache_lookup, the action's digest)")
    put("cancel_operation_request", operations_pb2.CancelOperationRequest(
        name=f"{INSTANCE}/0f3a"), "CancelOperationRequest")

    put("operation_queued", operations_pb2.Operation(
        name=f"{INSTANCE}/op-1", done=False, metadata=any_of(re_pb2.ExecuteOperationMetadata(
            stage=re_pb2.ExecutionStage.QUEUED, action_digest=digest(action_data)))),
        "an accepted action")
    put("operation_completed_failed_precondition", operations_pb2.Operation(
        name=f"{INSTANCE}/op-2", done=True,
        metadata=any_of(re_pb2.ExecuteOperationMetadata(stage=re_pb2.ExecutionStage.COMPLETED)),
        response=any_of(re_pb2.ExecuteResponse(
            status=status_pb2.Status(code=9, message="the action names no container-image"),
            result=re_pb2.ActionResult(exit_code=-1), message="worker says no"))),
        "a worker's refusal, exit code -1")
    put("operation_completed_ok", operations_pb2.Operation(
        name=f"{INSTANCE}/op-3", done=True,
        metadata=any_of(re_pb2.ExecuteOperationMetadata(stage=re_pb2.ExecutionStage.COMPLETED)),
        response=any_of(re_pb2.ExecuteResponse(result=re_pb2.ActionResult(exit_code=0)))),
        "a finished action, exit code 0")
    put("operation_error", operations_pb2.Operation(
        name=f"{INSTANCE}/op-4", done=True,
        error=status_pb2.Status(code=14, message="worker lost")), "Operation.error set")
    put("batch_update_blobs_response", re_pb2.BatchUpdateBlobsResponse(responses=[
        re_pb2.BatchUpdateBlobsResponse.Response(digest=digest(b"a"), status=status_pb2.Status()),
        re_pb2.BatchUpdateBlobsResponse.Response(
            digest=digest(b"b"), status=status_pb2.Status(code=8, message="quota"))]),
        "one stored, one refused")
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
