"""The REAPI client without a network: wire format, capabilities, endpoints, error mapping.

The wire tests compare with tests/data/reapi/wire-golden.json, bytes the protobuf runtime
wrote from the generated REAPI classes in BuildGrid's wheel (tests/reapi/
wire_reference.py; tests/docker/test_reapi_client.py checks the file is still what that
library writes), so the encoder and decoder are checked against an implementation that
does not share their understanding of the field numbers. The error-mapping table holds
the status details gRPC 1.85 gave on this machine for each failure, seen against the
real test service (tests/docker/test_reapi_client.py makes each one happen).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tfwizard.core.remote import client, messages, reapi, wire
from tfwizard.core.remote.messages import (
    Capabilities,
    Digest,
    decode_blob_statuses,
    decode_operation,
    decode_server_capabilities,
)
from tfwizard.core.remote.reapi import ReapiError, ReapiTarget, classify, parse_endpoint
from tfwizard.core.remote.wire import WireError, parse_fields

GOLDEN = {name: bytes.fromhex(entry["hex"]) for name, entry in json.loads(
    (Path(__file__).resolve().parents[2] / "data" / "reapi" / "wire-golden.json").read_text()
).items()}
INSTANCE = "tfwizard-test"
PROPERTIES = (("OSFamily", "Linux"), ("container-image", "docker://tfwizard-test/bazel:bookworm"))
SALT = bytes(range(16))


# --------------------------------------------------------------------------- encoding


def test_requests_encode_as_the_reference_protobuf_library_does():
    assert messages.encode_get_capabilities_request(INSTANCE) == GOLDEN["get_capabilities_request"]
    command, action, action_digest = reapi.probe_blobs(PROPERTIES, SALT)
    assert command == GOLDEN["probe_command"]
    assert action == GOLDEN["probe_action"]
    assert messages.encode_batch_update_blobs_request(INSTANCE, [command, action]) == \
        GOLDEN["batch_update_blobs_request"]
    assert messages.encode_execute_request(INSTANCE, action_digest) == GOLDEN["execute_request"]
    assert messages.encode_cancel_operation_request(f"{INSTANCE}/0f3a") == \
        GOLDEN["cancel_operation_request"]


def test_platform_properties_are_sorted_so_the_action_digest_is_stable():
    shuffled = tuple(reversed(PROPERTIES))
    assert messages.encode_platform(shuffled) == messages.encode_platform(PROPERTIES)
    assert reapi.probe_blobs(shuffled, SALT)[2] == reapi.probe_blobs(PROPERTIES, SALT)[2]
    # the salt makes every probe a new action (no merging with another client's probe)
    assert reapi.probe_blobs(PROPERTIES, b"x")[2] != reapi.probe_blobs(PROPERTIES, SALT)[2]


def test_empty_input_root_is_the_empty_blob_and_is_not_uploaded():
    command, action, _digest = reapi.probe_blobs(PROPERTIES, SALT)
    root = wire._message(parse_fields(action), 2)
    assert root is not None and wire._str(root, 1) == Digest.of(b"").hash
    assert wire._int(root, 2) == 0
    # only the command and the action travel: REAPI servers treat the empty blob as present
    requests = parse_fields(messages.encode_batch_update_blobs_request(INSTANCE, [command, action]))
    assert len(requests[2]) == 2


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31 - 1, 2**63 - 1, -1, -2**31])
def test_varints_round_trip_including_negative_int32(value):
    data = wire.field_varint(4, value) or wire._tag(4, 0) + wire._varint(0)
    assert wire._int(parse_fields(data), 4) == value


# --------------------------------------------------------------------------- decoding


def test_full_capabilities_decode_every_field():
    caps = decode_server_capabilities(GOLDEN["server_capabilities_full"], INSTANCE, 0.25)
    assert caps.has_cache and caps.has_execution and caps.exec_enabled
    assert caps.execution_digest_function == "SHA256"
    assert caps.execution_digest_functions == ("SHA256", "BLAKE3")
    assert caps.cache_digest_functions == ("SHA256", "BLAKE3")
    assert caps.action_cache_update_enabled is True
    assert caps.max_batch_total_size_bytes == 4193280
    assert caps.symlink_absolute_path_strategy == "ALLOWED"
    assert caps.supported_compressors == ("ZSTD", "DEFLATE")
    assert caps.supported_node_properties == ("OSFamily", "container-image")
    assert caps.execution_priorities == ((-1000, 1000),)
    assert str(caps.low_api_version) == "2.0.0"
    assert str(caps.high_api_version) == "2.3.1-rc1"
    assert str(caps.deprecated_api_version) == "1.9.0"
    assert caps.sha256_for_execution and caps.sha256_for_cache and caps.api_supported
    assert caps.problems() == ()
    assert caps.to_dict()["seconds"] == 0.25


def test_cache_only_instance_has_execution_disabled():
    caps = decode_server_capabilities(GOLDEN["server_capabilities_cache_only"], "cache")
    assert caps.has_execution and not caps.exec_enabled
    kinds = [p.kind for p in caps.problems()]
    assert kinds == ["no-execution"]
    assert "\"cache\"" in caps.problems()[0].message
    assert caps.problems(execution=False) == ()


def test_md5_only_service_fails_the_sha256_check():
    caps = decode_server_capabilities(GOLDEN["server_capabilities_md5"], "x")
    assert not caps.sha256_for_execution and not caps.sha256_for_cache
    assert caps.api_supported is None  # no versions stated: nothing to object to
    problems = caps.problems()
    assert [p.kind for p in problems] == ["no-sha256", "no-sha256"]
    assert "MD5" in problems[0].message and "SHA-256" in problems[0].message


def test_an_empty_reply_means_no_execution_and_no_cache():
    caps = decode_server_capabilities(b"", "x")
    assert not caps.has_cache and not caps.has_execution
    assert [p.kind for p in caps.problems()] == ["no-execution"]


def test_api_version_outside_2_is_a_problem():
    v3 = wire.field_message(4, wire.field_varint(1, 3)) + wire.field_message(
        5, wire.field_varint(1, 3))
    caps = decode_server_capabilities(
        wire.field_message(2, wire.field_varint(2, 1) + wire.field_varint(1, 1)) + v3)
    assert caps.api_supported is False
    assert "api-version" in [p.kind for p in caps.problems()]


def test_unknown_fields_and_unpacked_enums_are_read():
    # a newer service adds fields (any number, any wire type): they are skipped
    data = GOLDEN["server_capabilities_cache_only"] + wire.field_str(99, "future") + \
        wire._tag(98, 5) + b"\x01\x02\x03\x04" + wire._tag(97, 1) + bytes(8)
    assert decode_server_capabilities(data).cache_digest_functions == ("SHA256",)
    # repeated enums may come unpacked (one varint per value), as proto2 encoders write
    cache = wire.field_varint(1, 1) + wire.field_varint(1, 9) + wire.field_varint(8, 10**9)
    caps = decode_server_capabilities(wire.field_message(1, cache))
    assert caps.cache_digest_functions == ("SHA256", "BLAKE3")
    assert caps.max_cas_blob_size_bytes == 10**9  # field 8 (newer than BuildGrid's proto)


@pytest.mark.parametrize("data", [b"\x0a\x05abc", b"\x08", b"\x0b", b"\x00", b"\xff" * 11])
def test_broken_replies_are_wire_errors(data):
    with pytest.raises(WireError):
        parse_fields(data)


def test_a_message_field_with_a_varint_is_a_wire_error():
    with pytest.raises(WireError):
        decode_server_capabilities(wire.field_varint(1, 5))


def test_operations_decode():
    queued = decode_operation(GOLDEN["operation_queued"])
    assert (queued.name, queued.done, queued.stage) == (f"{INSTANCE}/op-1", False, "QUEUED")
    assert queued.error is None and queued.status is None and queued.exit_code is None
    refused = decode_operation(GOLDEN["operation_completed_failed_precondition"])
    assert refused.done and refused.stage == "COMPLETED"
    assert refused.status == messages.RpcStatus(9, "the action names no container-image")
    assert refused.status.code_name == "FAILED_PRECONDITION"
    assert refused.exit_code == -1 and refused.message == "worker says no"
    ok = decode_operation(GOLDEN["operation_completed_ok"])
    assert ok.done and ok.exit_code == 0 and ok.status == messages.RpcStatus()
    error = decode_operation(GOLDEN["operation_error"])
    assert error.done and error.error == messages.RpcStatus(14, "worker lost")
    assert error.error.code_name == "UNAVAILABLE"


def test_blob_statuses_decode():
    statuses = decode_blob_statuses(GOLDEN["batch_update_blobs_response"])
    assert statuses == [(Digest.of(b"a").hash, messages.RpcStatus()),
                        (Digest.of(b"b").hash, messages.RpcStatus(8, "quota"))]


def test_finished_probe_outcomes_become_errors_or_results():
    target = ReapiTarget("grpc://svc:1", INSTANCE)
    endpoint = parse_endpoint(target.endpoint)
    with pytest.raises(ReapiError) as refused:
        client._finished(decode_operation(GOLDEN["operation_completed_failed_precondition"]),
                        PROPERTIES, "h/1", target, endpoint, 0.1)
    assert refused.value.kind == "platform"  # the worker names container-image
    with pytest.raises(ReapiError) as lost:
        client._finished(decode_operation(GOLDEN["operation_error"]), PROPERTIES, "h/1",
                        target, endpoint, 0.1)
    assert lost.value.kind == "execution" and lost.value.code == "UNAVAILABLE"
    ran = client._finished(decode_operation(GOLDEN["operation_completed_ok"]), PROPERTIES,
                          "h/1", target, endpoint, 0.1)
    assert ran.verdict == "ran" and ran.exit_code == 0 and ran.action == "h/1"


# --------------------------------------------------------------------------- targets


@pytest.mark.parametrize(("text", "target", "tls"), [
    ("grpc://127.0.0.1:8980", "127.0.0.1:8980", False),
    ("grpcs://remote.buildbuddy.io", "remote.buildbuddy.io:443", True),
    ("GRPCS://cluster.engflow.com/", "cluster.engflow.com:443", True),
    ("grpc://buildbarn", "buildbarn:80", False),
    ("remote.example.com:1985", "remote.example.com:1985", True),  # as Bazel: grpcs
    ("grpc://[::1]:50051", "[::1]:50051", False),
    ("unix:/run/reapi.sock", "unix:/run/reapi.sock", False),
])
def test_endpoints(text, target, tls):
    endpoint = parse_endpoint(text)
    assert endpoint.target == target and endpoint.tls is tls


@pytest.mark.parametrize("text", ["", "https://remote.buildbuddy.io", "http://cache:8080",
                                  "grpc://host:port", "grpc://host:99999", "grpc://u:p@host:1",
                                  "grpcs://host/instance", "grpc://", "unix:"])
def test_bad_endpoints(text):
    with pytest.raises(ReapiError) as e:
        parse_endpoint(text)
    assert e.value.kind == "endpoint" and e.value.hint


def test_headers_are_lowercased_joined_and_hidden():
    target = ReapiTarget("grpcs://x", headers=(("X-BuildBuddy-API-Key", "s3cret-1"),
                                               ("x-extra", "a"), ("X-Extra", "b")))
    assert target.metadata() == (("x-buildbuddy-api-key", "s3cret-1"), ("x-extra", "a,b"))
    assert "s3cret-1" not in repr(target) and "X-BuildBuddy-API-Key" in repr(target)


@pytest.mark.parametrize(("name", "value"), [("x key", "hidden-1"), ("grpc-timeout", "hidden-2"),
                                             ("x-bin", "hidden-3"), (":authority", "hidden-4"),
                                             ("x-key", "hidden\nbreak"), ("x-key", "ключ-5")])
def test_headers_gRPC_cannot_send_are_refused_without_showing_the_value(name, value):
    with pytest.raises(ReapiError) as e:
        ReapiTarget("grpcs://x", headers=((name, value),)).metadata()
    assert e.value.kind == "header" and value not in str(e.value)


def test_properties_parse_and_unlisted_ones_are_found():
    props = reapi.parse_properties(["container-image=docker://img@sha256:ab=cd", "OSFamily=Linux"])
    assert props == (("OSFamily", "Linux"), ("container-image", "docker://img@sha256:ab=cd"))
    with pytest.raises(ReapiError) as e:
        reapi.parse_properties(["=x"])
    assert e.value.kind == "platform"
    native = decode_server_capabilities(GOLDEN["server_capabilities_full"])
    assert reapi.unlisted_properties(props + (("gpu", "1"),), native) == ("gpu",)
    assert reapi.unlisted_properties(props, native) == ()
    buildgrid_like = decode_server_capabilities(GOLDEN["server_capabilities_cache_only"])
    assert reapi.unlisted_properties(props, buildgrid_like) is None  # lists none: unknown


# --------------------------------------------------------------------------- errors

#: (status code, details as gRPC 1.85 gave them here, TLS?, client certificate?, kind)
SEEN = [
    ("INVALID_ARGUMENT", "Invalid instance name: [no-such]", False, False, "instance"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNKNOWN: "
     "ipv4:127.0.0.1:1: Failed to connect to remote host: Connection refused", False, False,
     "unreachable"),
    ("UNAVAILABLE", "errors resolving no-such-host.invalid:443: [field:hostname lookup "
     "error:address lookup failed for no-such-host.invalid:443: Domain name not found]",
     False, False, "dns"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNKNOWN: "
     "ipv4:127.0.0.1:54387: Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: "
     "error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER: Invalid certificate "
     "verification context: OK", True, False, "tls-mismatch"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNAVAILABLE: "
     "ipv4:127.0.0.1:46617: Socket closed", False, False, "tls-mismatch"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNKNOWN: "
     "ipv4:127.0.0.1:46617: Tls handshake failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: "
     "error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: unable to get "
     "local issuer certificate: OK", True, False, "tls-certificate"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNKNOWN: "
     "ipv4:127.0.0.1:35957: Custom verification check failed with error: UNAUTHENTICATED: "
     "Hostname Verification Check failed.", True, False, "tls-certificate"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNAVAILABLE: "
     "ipv4:127.0.0.1:44109: Socket closed", True, False, "tls-client-certificate"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNAVAILABLE: "
     "ipv4:127.0.0.1:44109: Socket closed", True, True, "unavailable"),
    ("UNAUTHENTICATED", "missing x-test-api-key header", True, False, "unauthenticated"),
    ("PERMISSION_DENIED", "this API key may not use the service", True, False, "permission"),
    ("DEADLINE_EXCEEDED", "Deadline Exceeded", False, False, "deadline"),
    ("UNAVAILABLE", "failed to connect to all addresses; last error: UNAVAILABLE: "
     "ipv4:127.0.0.1:38437: Failed parsing HTTP/2 (Expected SETTINGS frame as the first "
     "frame, got frame type 79)", False, False, "not-grpc"),
    ("UNIMPLEMENTED", "Received http2 header with status: 404", False, False, "not-grpc"),
    ("FAILED_PRECONDITION", "Unregistered platform property [gpu={'nvidia'}]. Known "
     "properties are: [{'OSFamily', 'ISA', 'container-image'}]", False, False, "platform"),
    ("FAILED_PRECONDITION", "the action names no container-image platform property; this "
     "worker runs each action only in the image the action names", False, False, "platform"),
    # other services' words for the same refusals (from their sources, not seen here)
    ("FAILED_PRECONDITION", "No workers exist for instance name prefix \"fuse\" platform "
     "{\"properties\":[{\"name\":\"gpu\",\"value\":\"1\"}]}", True, False, "platform"),
    ("INVALID_ARGUMENT", "No matching action runner found (available: ...)", True, False,
     "platform"),
    ("UNIMPLEMENTED", "Method not found: build.bazel.remote.execution.v2.Capabilities/"
     "GetCapabilities", False, False, "unimplemented"),
    ("RESOURCE_EXHAUSTED", "Concurrent RPC limit exceeded!", False, False, "exhausted"),
]


@pytest.mark.parametrize(("code", "detail", "tls", "client_cert", "kind"), SEEN)
def test_failures_map_to_kinds(code, detail, tls, client_cert, kind):
    assert classify(code, detail, tls=tls, client_certificate=client_cert) == kind


def test_every_kind_has_a_message_and_a_fix_naming_the_endpoint():
    target = ReapiTarget("grpcs://rbe.example:443", "main", timeout_s=3)
    for kind in reapi.ERROR_KINDS:
        if kind in ("endpoint", "header", "tls-files"):
            continue  # raised before a call, with their own texts
        error = reapi.error_for(kind, target)
        assert error.kind == kind and error.message and error.hint
        assert error.message != reapi.error_for("other", target).message or kind == "other"
        assert "grpcs://rbe.example:443" in error.message
    assert "\"main\"" in reapi.error_for("instance", target).message
    assert "3 s" in reapi.error_for("deadline", target).message
    assert "${BUILDBUDDY_API_KEY}" in reapi.error_for("unauthenticated", target).hint


def test_header_values_never_reach_an_error_text():
    target = ReapiTarget("grpc://x:1", headers=(("x-api-key", "tok-123456"),))
    error = reapi.error_for("other", target, code="INTERNAL",
                            detail="upstream said: bad key tok-123456")
    assert "tok-123456" not in error.detail and "***" in error.detail
    assert "tok-123456" not in json.dumps(error.to_dict())


def test_tls_files_are_checked_before_connecting(tmp_path):
    target = ReapiTarget("grpcs://127.0.0.1:9", tls=reapi.TlsSettings(
        ca_file=str(tmp_path / "absent.pem")))
    with pytest.raises(ReapiError) as e:
        reapi.get_capabilities(target)
    assert e.value.kind == "tls-files" and "absent.pem" in e.value.message
    half = ReapiTarget("grpcs://127.0.0.1:9", tls=reapi.TlsSettings(client_cert="c.pem"))
    with pytest.raises(ReapiError) as e:
        reapi.get_capabilities(half)
    assert e.value.kind == "tls-files"


def test_importing_the_module_does_not_load_grpc():
    code = ("import sys, tfwizard.core.remote.reapi; "
            "sys.exit(1 if 'grpc' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_capabilities_is_frozen_and_serialisable():
    caps = decode_server_capabilities(GOLDEN["server_capabilities_full"], INSTANCE)
    assert isinstance(caps, Capabilities)
    json.dumps(caps.to_dict())
    with pytest.raises(AttributeError):
        caps.exec_enabled = False  # type: ignore[misc]


# --------------------------------------------------------------------------- Bazel's words

#: lines Bazel 4.2.3 printed against the test service, verbatim (test_reapi_service.py
#: asserts them on real builds; test_reapi_client.py feeds whole logs to the function)
BAZEL_LINES = [
    ("ERROR: Failed to query remote execution capabilities: INVALID_ARGUMENT: Invalid "
     "instance name: [no-such-instance]", "instance", "INVALID_ARGUMENT"),
    ("ERROR: Failed to query remote execution capabilities: Connection refused: "
     "/127.0.0.1:40123", "unreachable", "UNAVAILABLE"),
    ("ERROR: /src/tensorflow/core/BUILD:16:11: Compiling tensorflow/core/platform/random.cc "
     "failed: (Exit 34): FAILED_PRECONDITION: Unregistered platform property "
     "[gpu={'nvidia'}]. Known properties are: [{'OSFamily', 'ISA', 'container-image'}]",
     "platform", "FAILED_PRECONDITION"),
    ("Failed Precondition: the action names no container-image platform property; this "
     "worker runs each action only in the image the action names (Bazel: "
     "--remote_default_exec_properties=container-image=docker://IMAGE)", "platform",
     "FAILED_PRECONDITION"),
    ("UNAVAILABLE: io exception", "unavailable", "UNAVAILABLE"),
]


@pytest.mark.parametrize(("line", "kind", "code"), BAZEL_LINES)
def test_bazel_lines_get_the_preflight_words(line, kind, code):
    error = reapi.diagnose_bazel_output("INFO: Invocation ID: x\n" + line + "\n", ReapiTarget(
        "grpc://127.0.0.1:40123", "no-such-instance"))
    assert error is not None and (error.kind, error.code) == (kind, code)
    assert error.hint


def test_a_log_without_remote_errors_has_no_diagnosis():
    log = "INFO: 29 processes: 6 internal, 23 remote.\nINFO: Build completed successfully"
    assert reapi.diagnose_bazel_output(log, ReapiTarget("grpc://x:1")) is None


def test_recipe_headers_resolve_from_the_environment():
    env = {"BUILDBUDDY_API_KEY": "k-123"}
    assert reapi.headers_from_recipe(["x-buildbuddy-api-key=${BUILDBUDDY_API_KEY}",
                                      "x-plain = v"], env) == (
        ("x-buildbuddy-api-key", "k-123"), ("x-plain", "v"))
    with pytest.raises(ReapiError):
        reapi.headers_from_recipe(["no-value"], env)
    from tfwizard.core.errors import UsageError
    with pytest.raises(UsageError):
        reapi.headers_from_recipe(["x-key=${UNSET_VARIABLE_FOR_TEST}"], env)


DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(("image", "digests", "property_"), [
    ("tensorflow/build:2.18-python3.11", [f"tensorflow/build@{DIGEST}"],
     f"container-image=docker://tensorflow/build@{DIGEST}"),
    ("us-docker.pkg.dev/ml-oss-artifacts-published/ml-public-container/ml-build:latest",
     [f"us-docker.pkg.dev/ml-oss-artifacts-published/ml-public-container/ml-build@{DIGEST}"],
     "container-image=docker://us-docker.pkg.dev/ml-oss-artifacts-published/"
     f"ml-public-container/ml-build@{DIGEST}"),
    ("registry.lan:5000/tf-build:2.18", [f"registry.lan:5000/tf-build@{DIGEST}"],
     f"container-image=docker://registry.lan:5000/tf-build@{DIGEST}"),
    # a digest of another repository (the image was also pushed elsewhere) is not used
    ("tensorflow/build:2.18-python3.11", [f"mirror.lan/tensorflow/build@{DIGEST}"],
     "container-image=docker://tensorflow/build:2.18-python3.11"),
    # a locally built or imported image has no repo digest: its tag stays
    ("tfwizard-test/bazel:bookworm", [], "container-image=docker://tfwizard-test/bazel:bookworm"),
    (f"tensorflow/build@{DIGEST}", [], f"container-image=docker://tensorflow/build@{DIGEST}"),
])
def test_the_build_image_is_pinned_by_its_repo_digest(image, digests, property_):
    assert reapi.container_image_property(image, digests) == property_
