"""Ask a Remote Execution API (REAPI) service what it offers, before a build relies on it.

`get_capabilities(target)` calls `build.bazel.remote.execution.v2.Capabilities/
GetCapabilities` with the recipe's instance name, headers and TLS settings, and returns a
typed summary (`Capabilities`): is the instance valid, is remote execution enabled, is
SHA-256 accepted, what are the service's limits. Every failure is a `ReapiError` whose
`kind` names what went wrong (wrong instance, unreachable, TLS mismatch, authentication,
deadline, ...) and whose message and hint say what to change, within `timeout_s` seconds.

`probe_execution(target, properties)` is an opt-in check that the service's scheduler
accepts the recipe's platform properties (`remote.exec_properties`). REAPI has no call
that lists the platform properties a service accepts: `ExecutionCapabilities.
supported_node_properties` is meant for *file node* properties (`NodeProperty`: mtime,
unix_mode), although NativeLink fills it with its scheduler's platform property names
(`unlisted_properties` uses it where a service does). Services check platform properties
when an action is submitted (BuildGrid: `FAILED_PRECONDITION: Unregistered platform
property`; Buildbarn: `No workers exist for instance name prefix ... platform ...`;
EngFlow: `No matching action runner found`). So the probe submits one action: it uploads
a tiny Command (`/bin/sh -c "exit 0"`) and Action (`do_not_cache`, a random salt, the
empty input root) to the CAS, calls `Execute` with `skip_cache_lookup`, and reads the
first answer. A refusal comes back at once; an accepted action is cancelled at once
(`google.longrunning.Operations/CancelOperation`) unless `wait=True`, which lets it run
to the end and so also shows that a worker can start the named image. What it leaves
behind: two small blobs in the CAS, one operation in the scheduler, and, when a worker
took the action before the cancel arrived, one no-op process in the recipe's image. That
is why it is a separate, explicit call (see docs/remote.md, "Remote execution").

Transport. gRPC runs over HTTP/2 with trailers; the standard library speaks neither (nor
ALPN for TLS), so this module uses `grpcio`, the gRPC project's own implementation with
binary wheels for every Python tfwizard supports. It is imported lazily (about 60 ms), so
`import tfwizard` and every command that does not talk to a service stay as fast as
before. Only its generic calls are used (`channel.unary_unary(path)` with raw bytes), with
a small protobuf wire encoder/decoder below for just the messages needed, written from
remote_execution.proto (bazelbuild/remote-apis @ 715b73f), google/longrunning/
operations.proto and google/rpc/status.proto: no generated code, no protobuf runtime.
Like Bazel, the channel ignores `http_proxy`/`https_proxy` (gRPC's Python channel would
tunnel through them; Bazel connects directly unless told `--remote_proxy`), so the
preflight sees the network the build will.

Header values are secrets: they are never logged, never put into an error message, and
`ReapiTarget`'s repr hides them.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import ssl
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TfWizardError
from ..i18n import _
from ..secrets import resolve

#: default seconds for each call: a service answers capabilities in milliseconds, and a
#: preflight should say "no answer" while the person still waits for it
DEFAULT_TIMEOUT_S = 5.0
#: the gRPC methods (service paths of remote_execution.proto and operations.proto)
GET_CAPABILITIES = "/build.bazel.remote.execution.v2.Capabilities/GetCapabilities"
BATCH_UPDATE_BLOBS = "/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchUpdateBlobs"
EXECUTE = "/build.bazel.remote.execution.v2.Execution/Execute"
CANCEL_OPERATION = "/google.longrunning.Operations/CancelOperation"
#: what the probe action runs if a worker gets to it: nothing, successfully
PROBE_ARGV = ("/bin/sh", "-c", "exit 0")
#: the REAPI major version tfwizard's Bazels speak (Bazel's ApiVersion: 2.0 up to 2.x)
API_MAJOR = 2
#: default ports when an endpoint names none (as gRPC clients choose: TLS 443, plain 80)
DEFAULT_PORTS = {"grpcs": 443, "grpc": 80}

DIGEST_FUNCTIONS = {0: "UNKNOWN", 1: "SHA256", 2: "SHA1", 3: "MD5", 4: "VSO", 5: "SHA384",
                    6: "SHA512", 7: "MURMUR3", 8: "SHA256TREE", 9: "BLAKE3", 10: "GITSHA1"}
COMPRESSORS = {0: "IDENTITY", 1: "ZSTD", 2: "DEFLATE", 3: "BROTLI"}
SYMLINK_STRATEGIES = {0: "UNKNOWN", 1: "DISALLOWED", 2: "ALLOWED"}
EXECUTION_STAGES = {0: "UNKNOWN", 1: "CACHE_CHECK", 2: "QUEUED", 3: "EXECUTING", 4: "COMPLETED"}
#: google.rpc.Code, as numbers travel inside ExecuteResponse.status and Operation.error
RPC_CODES = ("OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
             "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
             "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
             "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED")


# =========================================================================== wire format


class WireError(ValueError):
    """Bytes that are not the protobuf message they should be."""


def _varint(value: int) -> bytes:
    if value < 0:  # int32/int64 negatives travel as ten-byte two's complement
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def field_varint(number: int, value: int) -> bytes:
    """A varint field (int32/int64/bool/enum); proto3 leaves out the default 0."""
    return _tag(number, 0) + _varint(int(value)) if value else b""


def field_bytes(number: int, data: bytes) -> bytes:
    """A length-delimited field (string/bytes); proto3 leaves out the empty value."""
    return _tag(number, 2) + _varint(len(data)) + data if data else b""


def field_str(number: int, text: str) -> bytes:
    """A protobuf string field."""
    return field_bytes(number, text.encode("utf-8"))


def field_message(number: int, data: bytes) -> bytes:
    """An embedded message: present even when all its fields are defaults."""
    return _tag(number, 2) + _varint(len(data)) + data


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WireError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint longer than ten bytes")


Fields = dict[int, list[int | bytes]]


def parse_fields(data: bytes) -> Fields:
    """{field number: [values]}: ints for varint/fixed fields, bytes for length-delimited."""
    fields: Fields = {}
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        value: int | bytes
        if wire_type == 0:
            value, pos = _read_varint(data, pos)
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            if pos + size > len(data):
                raise WireError("truncated fixed-size field")
            value = int.from_bytes(data[pos:pos + size], "little")
            pos += size
        elif wire_type == 2:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise WireError("truncated length-delimited field")
            value = data[pos:pos + size]
            pos += size
        else:
            raise WireError(f"unsupported wire type {wire_type}")
        fields.setdefault(number, []).append(value)
    return fields


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _int(fields: Fields, number: int) -> int:
    """A singular varint field (the last occurrence wins, as protobuf merges)."""
    values = fields.get(number, [])
    if not values:
        return 0
    value = values[-1]
    if not isinstance(value, int):
        raise WireError(f"field {number} is not a varint")
    return _signed(value)


def _bytes(fields: Fields, number: int) -> bytes:
    values = fields.get(number, [])
    if not values:
        return b""
    value = values[-1]
    if not isinstance(value, bytes):
        raise WireError(f"field {number} is not length-delimited")
    return value


def _str(fields: Fields, number: int) -> str:
    return _bytes(fields, number).decode("utf-8", errors="replace")


def _message(fields: Fields, number: int) -> Fields | None:
    """A singular embedded message (occurrences merge: their bytes concatenate)."""
    values = fields.get(number)
    if not values:
        return None
    if not all(isinstance(v, bytes) for v in values):
        raise WireError(f"field {number} is not a message")
    return parse_fields(b"".join(v for v in values if isinstance(v, bytes)))


def _messages(fields: Fields, number: int) -> list[Fields]:
    out = []
    for value in fields.get(number, []):
        if not isinstance(value, bytes):
            raise WireError(f"field {number} is not a message")
        out.append(parse_fields(value))
    return out


def _strings(fields: Fields, number: int) -> tuple[str, ...]:
    out = []
    for value in fields.get(number, []):
        if not isinstance(value, bytes):
            raise WireError(f"field {number} is not a string")
        out.append(value.decode("utf-8", errors="replace"))
    return tuple(out)


def _enums(fields: Fields, number: int) -> tuple[int, ...]:
    """A repeated enum, packed (proto3's default) or not."""
    out: list[int] = []
    for value in fields.get(number, []):
        if isinstance(value, int):
            out.append(value)
            continue
        pos = 0
        while pos < len(value):
            item, pos = _read_varint(value, pos)
            out.append(item)
    return tuple(out)


def _name(table: Mapping[int, str], value: int, prefix: str) -> str:
    return table.get(value, f"{prefix}_{value}")


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True)
class Digest:
    """A CAS digest: the SHA-256 of a blob and its size."""

    hash: str
    size_bytes: int

    @classmethod
    def of(cls, data: bytes) -> Digest:
        """The SHA-256 digest of `data`."""
        return cls(hashlib.sha256(data).hexdigest(), len(data))

    def encode(self) -> bytes:
        """The digest as a protobuf message."""
        return field_str(1, self.hash) + field_varint(2, self.size_bytes)


def encode_get_capabilities_request(instance_name: str) -> bytes:
    """GetCapabilitiesRequest {instance_name = 1}."""
    return field_str(1, instance_name)


def encode_platform(properties: Iterable[tuple[str, str]]) -> bytes:
    """Platform {repeated Property properties = 1}, Property {name = 1, value = 2}.

    REAPI wants the properties sorted by name, then value (the platform is part of the
    action's digest)."""
    return b"".join(field_message(1, field_str(1, name) + field_str(2, value))
                    for name, value in sorted(properties))


def encode_command(argv: Sequence[str], properties: Sequence[tuple[str, str]] = ()) -> bytes:
    """Command {repeated string arguments = 1; Platform platform = 5 (deprecated in 2.2,
    still what servers before 2.2 read)}."""
    out = b"".join(field_str(1, arg) for arg in argv)
    if properties:
        out += field_message(5, encode_platform(properties))
    return out


def encode_action(command: Digest, input_root: Digest, *, properties: Sequence[tuple[str, str]]
                  = (), timeout_s: int = 0, do_not_cache: bool = False, salt: bytes = b"") -> bytes:
    """Action {command_digest = 1, input_root_digest = 2, Duration timeout = 6,
    do_not_cache = 7, salt = 9, Platform platform = 10}."""
    out = field_message(1, command.encode()) + field_message(2, input_root.encode())
    if timeout_s:
        out += field_message(6, field_varint(1, timeout_s))  # Duration {seconds = 1}
    out += field_varint(7, do_not_cache) + field_bytes(9, salt)
    if properties:
        out += field_message(10, encode_platform(properties))
    return out


def encode_batch_update_blobs_request(instance_name: str, blobs: Sequence[bytes]) -> bytes:
    """BatchUpdateBlobsRequest {instance_name = 1, repeated Request requests = 2},
    Request {Digest digest = 1, bytes data = 2}."""
    out = field_str(1, instance_name)
    for blob in blobs:
        out += field_message(2, field_message(1, Digest.of(blob).encode())
                             + field_bytes(2, blob))
    return out


def encode_execute_request(instance_name: str, action: Digest, *,
                           skip_cache_lookup: bool = True) -> bytes:
    """ExecuteRequest {instance_name = 1, skip_cache_lookup = 3, action_digest = 6}."""
    return (field_str(1, instance_name) + field_varint(3, skip_cache_lookup)
            + field_message(6, action.encode()))


def encode_cancel_operation_request(name: str) -> bytes:
    """google.longrunning.CancelOperationRequest {name = 1}."""
    return field_str(1, name)


@dataclass(frozen=True)
class RpcStatus:
    """google.rpc.Status {int32 code = 1; string message = 2} (details left out)."""

    code: int = 0
    message: str = ""

    @property
    def code_name(self) -> str:
        """The gRPC status code's name."""
        return RPC_CODES[self.code] if 0 <= self.code < len(RPC_CODES) else f"CODE_{self.code}"


def _status(fields: Fields | None) -> RpcStatus:
    if fields is None:
        return RpcStatus()
    return RpcStatus(_int(fields, 1), _str(fields, 2))


def decode_blob_statuses(data: bytes) -> list[tuple[str, RpcStatus]]:
    """BatchUpdateBlobsResponse {repeated Response responses = 1}, Response {Digest
    digest = 1, google.rpc.Status status = 2}: [(hash, status)]."""
    out = []
    for response in _messages(parse_fields(data), 1):
        digest = _message(response, 1) or {}
        out.append((_str(digest, 1), _status(_message(response, 2))))
    return out


@dataclass(frozen=True)
class Operation:
    """What an Execute stream answers: google.longrunning.Operation {name = 1, Any
    metadata = 2, done = 3, google.rpc.Status error = 4, Any response = 5}, with its
    ExecuteOperationMetadata {stage = 1} and ExecuteResponse {ActionResult result = 1,
    google.rpc.Status status = 3, string message = 5}, ActionResult {exit_code = 4}."""

    name: str
    done: bool
    stage: str
    error: RpcStatus | None
    status: RpcStatus | None
    exit_code: int | None
    message: str = ""


def decode_operation(data: bytes) -> Operation:
    """An Operation from the Execute stream (Any payloads unpacked by their field
    numbers; the type URLs are not checked)."""
    fields = parse_fields(data)
    stage = "UNKNOWN"
    metadata = _message(fields, 2)
    if metadata is not None:
        meta = parse_fields(_bytes(metadata, 2))  # Any {type_url = 1, value = 2}
        stage = _name(EXECUTION_STAGES, _int(meta, 1), "STAGE")
    error = _status(_message(fields, 4)) if 4 in fields else None
    status = exit_code = None
    message = ""
    response = _message(fields, 5)
    if response is not None:
        execute_response = parse_fields(_bytes(response, 2))
        status = _status(_message(execute_response, 3))
        result = _message(execute_response, 1)
        exit_code = _int(result, 4) if result is not None else None
        message = _str(execute_response, 5)
    return Operation(_str(fields, 1), bool(_int(fields, 3)), stage, error, status, exit_code,
                     message)


@dataclass(frozen=True)
class ApiVersion:
    """build.bazel.semver.SemVer {major = 1, minor = 2, patch = 3, prerelease = 4}."""

    major: int = 0
    minor: int = 0
    patch: int = 0
    prerelease: str = ""

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        return f"{text}-{self.prerelease}" if self.prerelease else text


def _semver(fields: Fields | None) -> ApiVersion | None:
    if fields is None:
        return None
    return ApiVersion(_int(fields, 1), _int(fields, 2), _int(fields, 3), _str(fields, 4))


@dataclass(frozen=True)
class Capabilities:
    """A service's ServerCapabilities for one instance, and what they mean for a build."""

    instance_name: str
    #: the reply has CacheCapabilities / ExecutionCapabilities at all
    has_cache: bool
    has_execution: bool
    exec_enabled: bool
    #: ExecutionCapabilities.digest_function (legacy, singular) and digest_functions
    execution_digest_function: str
    execution_digest_functions: tuple[str, ...]
    cache_digest_functions: tuple[str, ...]
    action_cache_update_enabled: bool
    #: 0 means no limit set (the gRPC message size still limits)
    max_batch_total_size_bytes: int
    max_cas_blob_size_bytes: int
    symlink_absolute_path_strategy: str
    supported_compressors: tuple[str, ...]
    #: ExecutionCapabilities.supported_node_properties: file node properties by REAPI's
    #: definition; NativeLink lists its scheduler's platform property names here
    supported_node_properties: tuple[str, ...]
    execution_priorities: tuple[tuple[int, int], ...]
    low_api_version: ApiVersion | None
    high_api_version: ApiVersion | None
    deprecated_api_version: ApiVersion | None
    #: wall seconds the call took
    seconds: float = 0.0

    @property
    def sha256_for_execution(self) -> bool:
        """SHA-256 accepted for remote execution (either execution digest field)."""
        return ("SHA256" in self.execution_digest_functions
                or self.execution_digest_function == "SHA256")

    @property
    def sha256_for_cache(self) -> bool:
        """Whether the cache takes SHA-256 digests (Bazel's default)."""
        return "SHA256" in self.cache_digest_functions

    @property
    def api_supported(self) -> bool | None:
        """The service speaks REAPI 2.x (None when it states no versions)."""
        if self.low_api_version is None and self.high_api_version is None:
            return None
        low = self.low_api_version or self.high_api_version
        high = self.high_api_version or self.low_api_version
        assert low is not None and high is not None
        return low.major <= API_MAJOR <= high.major

    def problems(self, *, execution: bool = True) -> tuple[CapabilityProblem, ...]:
        """What stops a build against this instance (execution=False: a cache only)."""
        found: list[CapabilityProblem] = []
        if execution and not self.exec_enabled:
            found.append(CapabilityProblem(
                "no-execution",
                _("The service does not run actions for instance \"{instance}\": remote "
                  "execution is disabled there, or this account may not use it.").format(
                    instance=self.instance_name),
                _("Check remote.instance_name against the instance your service executes "
                  "on (some services answer for any name but execute only for theirs), "
                  "and your credentials; or use the service as a cache only "
                  "(remote.cache, no remote.executor).")))
        if execution and self.exec_enabled and not self.sha256_for_execution:
            found.append(CapabilityProblem(
                "no-sha256",
                _("The service executes only with {functions}; Bazel hashes with SHA-256 "
                  "unless told otherwise.").format(functions=", ".join(
                    self.execution_digest_functions or (self.execution_digest_function,))),
                _("Configure the service's instance for SHA-256.")))
        if self.has_cache and self.cache_digest_functions and not self.sha256_for_cache:
            found.append(CapabilityProblem(
                "no-sha256",
                _("The service's cache accepts only {functions}; Bazel hashes with SHA-256 "
                  "unless told otherwise.").format(
                    functions=", ".join(self.cache_digest_functions)),
                _("Configure the service's instance for SHA-256.")))
        if self.api_supported is False:
            found.append(CapabilityProblem(
                "api-version",
                _("The service speaks REAPI {low} to {high}; Bazel speaks 2.x.").format(
                    low=self.low_api_version, high=self.high_api_version),
                _("Use a service release that supports REAPI v2.")))
        return tuple(found)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output and build records."""
        return {
            "instance_name": self.instance_name,
            "exec_enabled": self.exec_enabled,
            "sha256": {"execution": self.sha256_for_execution, "cache": self.sha256_for_cache},
            "execution_digest_function": self.execution_digest_function,
            "execution_digest_functions": list(self.execution_digest_functions),
            "cache_digest_functions": list(self.cache_digest_functions),
            "action_cache_update_enabled": self.action_cache_update_enabled,
            "max_batch_total_size_bytes": self.max_batch_total_size_bytes,
            "max_cas_blob_size_bytes": self.max_cas_blob_size_bytes,
            "symlink_absolute_path_strategy": self.symlink_absolute_path_strategy,
            "supported_compressors": list(self.supported_compressors),
            "supported_node_properties": list(self.supported_node_properties),
            "execution_priorities": [list(p) for p in self.execution_priorities],
            "api": {"low": None if self.low_api_version is None else str(self.low_api_version),
                    "high": None if self.high_api_version is None else str(self.high_api_version)},
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class CapabilityProblem:
    """Something in a service's capabilities that stops the build: a code, what and how."""

    kind: str  # no-execution | no-sha256 | api-version
    message: str
    fix: str


def decode_server_capabilities(data: bytes, instance_name: str = "",
                               seconds: float = 0.0) -> Capabilities:
    """ServerCapabilities {CacheCapabilities cache_capabilities = 1; ExecutionCapabilities
    execution_capabilities = 2; SemVer deprecated_api_version = 3, low_api_version = 4,
    high_api_version = 5}."""
    top = parse_fields(data)
    cache = _message(top, 1)
    execution = _message(top, 2)
    c = cache or {}
    e = execution or {}
    # CacheCapabilities {repeated DigestFunction.Value digest_functions = 1;
    # ActionCacheUpdateCapabilities action_cache_update_capabilities = 2 {update_enabled = 1};
    # max_batch_total_size_bytes = 4; symlink_absolute_path_strategy = 5;
    # repeated Compressor.Value supported_compressors = 6; max_cas_blob_size_bytes = 8}
    update = _message(c, 2) or {}
    # ExecutionCapabilities {digest_function = 1; exec_enabled = 2; PriorityCapabilities
    # execution_priority_capabilities = 3 {repeated PriorityRange priorities = 1
    # {min_priority = 1, max_priority = 2}}; repeated string supported_node_properties = 4;
    # repeated DigestFunction.Value digest_functions = 5}
    priorities = _message(e, 3) or {}
    return Capabilities(
        instance_name=instance_name,
        has_cache=cache is not None,
        has_execution=execution is not None,
        exec_enabled=bool(_int(e, 2)),
        execution_digest_function=_name(DIGEST_FUNCTIONS, _int(e, 1), "DIGEST"),
        execution_digest_functions=tuple(_name(DIGEST_FUNCTIONS, v, "DIGEST")
                                         for v in _enums(e, 5)),
        cache_digest_functions=tuple(_name(DIGEST_FUNCTIONS, v, "DIGEST")
                                     for v in _enums(c, 1)),
        action_cache_update_enabled=bool(_int(update, 1)),
        max_batch_total_size_bytes=_int(c, 4),
        max_cas_blob_size_bytes=_int(c, 8),
        symlink_absolute_path_strategy=_name(SYMLINK_STRATEGIES, _int(c, 5), "STRATEGY"),
        supported_compressors=tuple(_name(COMPRESSORS, v, "COMPRESSOR") for v in _enums(c, 6)),
        supported_node_properties=_strings(e, 4),
        execution_priorities=tuple((_int(r, 1), _int(r, 2)) for r in _messages(priorities, 1)),
        low_api_version=_semver(_message(top, 4)),
        high_api_version=_semver(_message(top, 5)),
        deprecated_api_version=_semver(_message(top, 3)),
        seconds=seconds,
    )


# =========================================================================== the target


@dataclass(frozen=True)
class Endpoint:
    """Where a service listens, as gRPC needs it."""

    scheme: str  # grpc | grpcs | unix
    host: str
    port: int
    tls: bool

    @property
    def target(self) -> str:
        """The gRPC channel target: host:port, [v6]:port, or unix:PATH."""
        if self.scheme == "unix":
            return f"unix:{self.host}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint:
    """grpc://HOST[:PORT], grpcs://HOST[:PORT], unix:PATH, or HOST[:PORT] (TLS, as Bazel
    reads an executor without a scheme). A trailing "/" is allowed, a path is not."""
    raw = text.strip()
    if not raw:
        raise ReapiError("endpoint", _("No remote execution endpoint is set."),
                         _("Set remote.executor, e.g. grpcs://remote.example.com:443."))
    if raw.startswith("unix:"):
        path = raw[len("unix:"):].removeprefix("//")
        if not path:
            raise _bad_endpoint(raw)
        return Endpoint("unix", path, 0, False)
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "grpcs", raw
    scheme = scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ReapiError(
            "endpoint",
            _("{endpoint} is not a gRPC endpoint: remote execution speaks gRPC.").format(
                endpoint=raw),
            _("Write grpcs://HOST:PORT (TLS) or grpc://HOST:PORT (plain, inside a LAN)."))
    netloc, _slash, path = rest.partition("/")
    if path.strip("/") or "@" in netloc or not netloc:
        raise _bad_endpoint(raw)
    if netloc.startswith("["):
        host, _bracket, tail = netloc[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else tail
    else:
        host, _colon, port_text = netloc.partition(":")
    if not host or (port_text and not port_text.isdigit()):
        raise _bad_endpoint(raw)
    port = int(port_text) if port_text else DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        raise _bad_endpoint(raw)
    return Endpoint(scheme, host, port, scheme == "grpcs")


def _bad_endpoint(raw: str) -> ReapiError:
    return ReapiError("endpoint", _("{endpoint} is not an endpoint tfwizard can read.").format(
        endpoint=raw), _("Write grpcs://HOST:PORT (TLS) or grpc://HOST:PORT (plain, inside a "
                         "LAN), without a path or user name."))


@dataclass(frozen=True)
class TlsSettings:
    """TLS for grpcs:// endpoints: whom to trust and, optionally, who we are.

    `ca_file` replaces the trusted roots (as Bazel's --tls_certificate does); without it
    the system's bundle is used (ssl.get_default_verify_paths(): SSL_CERT_FILE or the
    distribution's file, e.g. /etc/ssl/certs/ca-certificates.crt), else gRPC's own roots.
    `client_cert` and `client_key` (PEM files) go together (Bazel's
    --tls_client_certificate / --tls_client_key)."""

    ca_file: str = ""
    client_cert: str = ""
    client_key: str = ""


_HEADER_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True, repr=False)
class ReapiTarget:
    """One service instance as a build will use it: endpoint, instance, headers, TLS.

    `headers` are (name, value) pairs with values already resolved (`${VAR}` expanded):
    they are sent and never shown. Names are lowercased (HTTP/2 carries them so) and
    values of a repeated name are joined with "," as Bazel's --remote_header does."""

    endpoint: str
    instance_name: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    tls: TlsSettings = field(default_factory=TlsSettings)
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __repr__(self) -> str:
        names = ", ".join(name for name, _value in self.headers)
        return (f"ReapiTarget(endpoint={self.endpoint!r}, instance_name={self.instance_name!r},"
                f" headers=[{names}] (values hidden), tls={self.tls!r}, "
                f"timeout_s={self.timeout_s})")

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The headers as gRPC metadata (checked; duplicates joined)."""
        joined: dict[str, list[str]] = {}
        for name, value in self.headers:
            key = name.strip().lower()
            if not _HEADER_NAME.match(key) or key.startswith("grpc-") or key.endswith("-bin"):
                raise ReapiError("header", _("The header name \"{name}\" cannot be sent over "
                                             "gRPC.").format(name=name),
                                 _("Use lowercase letters, digits, \"-\", \"_\" and \".\" "
                                   "(names starting with grpc- or ending in -bin are "
                                   "reserved)."))
            if any(ord(ch) < 0x20 or ord(ch) > 0x7E for ch in value):
                raise ReapiError("header", _("The value of header \"{name}\" has characters "
                                             "gRPC cannot send (line breaks, control or "
                                             "non-ASCII characters).").format(name=key),
                                 _("Check the variable the value comes from."))
            joined.setdefault(key, []).append(value)
        return tuple((key, ",".join(values)) for key, values in joined.items())

    def secrets(self) -> tuple[str, ...]:
        """The header values, to keep out of every text this module produces."""
        return tuple(value for _name, value in self.headers if value)


def headers_from_recipe(items: Iterable[str], env: Mapping[str, str]
                        ) -> tuple[tuple[str, str], ...]:
    """remote.headers ("name=value", the value usually "${VAR}") as (name, resolved value)
    pairs for ReapiTarget; an unset variable is the UsageError secrets.resolve raises."""
    pairs = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ReapiError("header", _("The header \"{name}\" has no value: write "
                                         "name=value.").format(name=name.strip()),
                             _("Write each header as name=${{VARIABLE}}, e.g. "
                               "x-buildbuddy-api-key=${{BUILDBUDDY_API_KEY}}.").format())
        pairs.append((name.strip(), resolve(value.strip(), env)))
    return tuple(pairs)


# =========================================================================== errors


#: error kinds (ReapiError.kind) and when each is given
ERROR_KINDS = (
    "endpoint",         # the endpoint text cannot be used
    "header",           # a header cannot be sent
    "tls-files",        # a CA / client certificate / key file cannot be read or is incomplete
    "dns",              # the host name does not resolve
    "unreachable",      # nothing accepts connections there (refused, no route)
    "tls-mismatch",     # grpcs:// against a plain server, or grpc:// against a TLS one
    "tls-certificate",  # the server's certificate is not trusted or names another host
    "tls-client-certificate",  # the server closed the TLS connection: it wants a client cert
    "not-grpc",         # an HTTP/1 server answered (a web server, an HTTP cache)
    "instance",         # the service does not know the instance name
    "unauthenticated",  # no or bad credentials
    "permission",       # credentials without permission for this instance or call
    "deadline",         # no answer within timeout_s
    "unimplemented",    # the endpoint is gRPC but not this REAPI service
    "exhausted",        # the service refuses for load or quota
    "unavailable",      # the service is there but not serving
    "protocol",         # the answer is not the message it should be
    "platform",         # the scheduler refuses the platform properties (probe)
    "execution",        # the probe action was refused or failed otherwise
    "other",
)


class ReapiError(TfWizardError):
    """A REAPI call that failed: `kind` (ERROR_KINDS), the gRPC `code` name, the service's
    own words in `detail` (header values removed), and how long it took."""

    def __init__(self, kind: str, message: str, hint: str = "", *, code: str = "",
                 detail: str = "", seconds: float = 0.0) -> None:
        super().__init__(message, hint)
        self.kind = kind
        self.code = code
        self.detail = detail
        self.seconds = seconds

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON data."""
        return {"kind": self.kind, "code": self.code, "message": self.message,
                "hint": self.hint, "detail": self.detail, "seconds": round(self.seconds, 3)}


_PLATFORM_WORDS = ("platform propert", "no workers exist", "no matching action runner",
                   "container-image", "unregistered platform", "platform {")


def classify(code: str, detail: str, *, tls: bool, client_certificate: bool = False) -> str:
    """The kind of a failed call from its gRPC status code name and details (pure).

    `tls`: the call went over TLS (grpcs://); `client_certificate`: one was offered."""
    text = detail.lower()
    if any(word in text for word in ("trying to connect an http1.x server",
                                     "received http2 header with status",
                                     "failed parsing http/2", "expected settings frame",
                                     "alpn")):
        return "not-grpc"  # a web server or an HTTP cache (any code: 404 reads UNIMPLEMENTED)
    if code == "UNAVAILABLE" or (code == "UNKNOWN" and "failed to connect" in text):
        if any(word in text for word in ("dns resolution failed", "name or service not known",
                                         "could not resolve", "domain name not found",
                                         "errors resolving")):
            return "dns"
        if any(word in text for word in ("certificate verify failed",
                                         "certificate_verify_failed",
                                         "hostname verification", "peer name")):
            return "tls-certificate"
        if tls and any(word in text for word in ("ssl", "handshake", "wrong_version_number",
                                                 "tsi_")):
            return "tls-mismatch"
        if any(word in text for word in ("connection refused", "no route to host",
                                         "network is unreachable", "connect failed")):
            return "unreachable"
        closed = any(word in text for word in ("socket closed", "connection reset",
                                               "end of tcp stream", "connection aborted"))
        if closed and not tls:
            return "tls-mismatch"  # a TLS server drops a plain HTTP/2 preface
        if closed and not client_certificate:
            return "tls-client-certificate"  # mTLS servers close on a client without one
        return "unavailable"
    if code == "INVALID_ARGUMENT":
        if "instance" in text:
            return "instance"
        if any(word in text for word in _PLATFORM_WORDS):
            return "platform"
        return "other"
    if code == "NOT_FOUND" and "instance" in text:
        return "instance"
    if code == "FAILED_PRECONDITION" and any(word in text for word in _PLATFORM_WORDS):
        return "platform"
    return {"DEADLINE_EXCEEDED": "deadline", "UNAUTHENTICATED": "unauthenticated",
            "PERMISSION_DENIED": "permission", "UNIMPLEMENTED": "unimplemented",
            "RESOURCE_EXHAUSTED": "exhausted", "INTERNAL": "other"}.get(code, "other")


def error_for(kind: str, target: ReapiTarget, *, code: str = "", detail: str = "",
              seconds: float = 0.0) -> ReapiError:
    """The ReapiError of a kind: a sentence that says what happened and one that says
    what to change, with the endpoint and instance filled in."""
    detail = _scrub(detail, target.secrets())
    endpoint, instance = target.endpoint, target.instance_name
    texts = {
        "dns": (_("The host of {endpoint} does not resolve."),
                _("Check the host name in remote.executor, and the DNS this machine uses.")),
        "unreachable": (_("Nothing accepts connections at {endpoint}."),
                        _("Check the host and port in remote.executor and that the service "
                          "runs; a container on Docker's default bridge cannot reach this "
                          "machine's 127.0.0.1 (use the machine's address, or "
                          "build.network = \"host\").")),
        "tls-mismatch": (_("TLS does not match at {endpoint}: one side speaks TLS and the "
                           "other does not."),
                         _("Use grpc:// for a service without TLS and grpcs:// for one with "
                           "TLS (an endpoint without a scheme means grpcs://, as in "
                           "Bazel).")),
        "tls-certificate": (_("The certificate of {endpoint} is not trusted or names another "
                              "host."),
                            _("Point remote.tls_certificate at the CA that signed it, or use "
                              "the host name the certificate was issued for.")),
        "tls-client-certificate": (
            _("The service at {endpoint} closed the TLS connection: services that want a "
              "client certificate (mTLS) do that to a client without one."),
            _("Set remote.tls_client_certificate and remote.tls_client_key to the "
              "certificate and key your service issued (EngFlow: the cluster's Getting "
              "Started page), or use its API key header instead.")),
        "not-grpc": (_("{endpoint} answered as a web server (HTTP), not as a gRPC service: "
                       "it is not a remote execution endpoint."),
                     _("Use the service's gRPC port in remote.executor.")),
        "instance": (_("The service at {endpoint} does not know the instance \"{instance}\"."),
                     _("Set remote.instance_name to an instance the service serves (its "
                       "operators or its documentation name it; an empty name is the "
                       "default instance).")),
        "unauthenticated": (_("The service at {endpoint} wants credentials it did not get."),
                            _("Set the header your service expects in remote.headers (e.g. "
                              "x-buildbuddy-api-key=${{BUILDBUDDY_API_KEY}}) and export the "
                              "variable, or a client certificate in "
                              "remote.tls_client_certificate.")),
        "permission": (_("The service at {endpoint} refuses these credentials for instance "
                         "\"{instance}\"."),
                       _("Use credentials allowed to execute on this instance, or another "
                         "instance name.")),
        "deadline": (_("{endpoint} did not answer within {seconds} s."),
                     _("Check that the host and port are right and that no firewall drops "
                       "the connection; a TLS service asked over grpc:// can also stay "
                       "silent. A slow service: raise remote.timeout.")),
        "unimplemented": (_("{endpoint} speaks gRPC but does not offer the Remote Execution "
                            "API call tfwizard asked for."),
                          _("Check that remote.executor names the service's REAPI endpoint "
                            "(not its build event or web port).")),
        "exhausted": (_("The service at {endpoint} refused the call for load or quota."),
                      _("Try again later, or ask the service's operators about its "
                        "limits.")),
        "unavailable": (_("The service at {endpoint} is not available."),
                        _("Check that the service runs and is healthy, then try again.")),
        "protocol": (_("{endpoint} answered with something that is not a REAPI reply."),
                     _("Check that remote.executor names a Remote Execution API service.")),
        "platform": (_("The service at {endpoint} refuses the platform properties of the "
                       "build's actions."),
                     _("Name only properties the service knows in remote.exec_properties "
                       "(its documentation lists them; container-image=docker://IMAGE is "
                       "the usual one), and an image its workers can run.")),
        "execution": (_("The service at {endpoint} did not run a test action."),
                      _("Read the service's message below; check remote.exec_properties "
                        "and that the service's workers can start the build image.")),
        "other": (_("The call to {endpoint} failed."),
                  _("Read the service's message below.")),
    }
    message, hint = texts.get(kind, texts["other"])
    values = {"endpoint": endpoint, "instance": instance, "seconds": f"{target.timeout_s:g}"}
    return ReapiError(kind, message.format(**values), hint.format(**values), code=code,
                      detail=detail, seconds=seconds)


def _scrub(text: str, values: Iterable[str]) -> str:
    for value in sorted(set(values), key=len, reverse=True):
        if len(value) >= 3:
            text = text.replace(value, "***")
    return text


# =========================================================================== calls


def _read_file(path: str, what: str) -> bytes:
    """A PEM file the TLS settings name; `what` is "ca", "cert" or "key"."""
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as e:
        error = e.strerror or str(e)
        message = {
            "ca": _("Cannot read the CA certificate {path}: {error}"),
            "cert": _("Cannot read the client certificate {path}: {error}"),
            "key": _("Cannot read the client key {path}: {error}"),
        }[what].format(path=path, error=error)
        raise ReapiError("tls-files", message, _(
            "Check the path in the recipe and that this user may read the file.")) from e


def system_roots() -> bytes | None:
    """The system's CA bundle (PEM), or None to let gRPC use its own roots."""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile):
        if candidate and os.path.isfile(candidate):
            try:
                return Path(candidate).read_bytes()
            except OSError:
                continue
    return None


def _grpc() -> Any:
    """grpcio, imported on first use (~60 ms; only commands that talk to a service pay).

    gRPC's C core logs handshake failures to stderr by itself; this module reports them
    as ReapiErrors, so its logging is off unless GRPC_VERBOSITY says otherwise."""
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    import grpc

    return grpc


def _channel(target: ReapiTarget, endpoint: Endpoint) -> Any:
    from ... import __version__

    grpc = _grpc()

    options = [("grpc.enable_http_proxy", 0),  # as Bazel: direct, whatever http_proxy says
               ("grpc.primary_user_agent", f"tfwizard/{__version__}"),
               ("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    if not endpoint.tls:
        return grpc.insecure_channel(endpoint.target, options=options)
    tls = target.tls
    if bool(tls.client_cert) != bool(tls.client_key):
        raise ReapiError("tls-files", _("A client certificate needs its key, and a key its "
                                        "certificate."),
                         _("Set both remote.tls_client_certificate and "
                           "remote.tls_client_key, or neither."))
    roots = _read_file(tls.ca_file, "ca") if tls.ca_file else system_roots()
    key = _read_file(tls.client_key, "key") if tls.client_key else None
    chain = _read_file(tls.client_cert, "cert") if tls.client_cert else None
    credentials = grpc.ssl_channel_credentials(root_certificates=roots, private_key=key,
                                               certificate_chain=chain)
    return grpc.secure_channel(endpoint.target, credentials, options=options)


def _rpc_error(e: Any, target: ReapiTarget, endpoint: Endpoint, seconds: float) -> ReapiError:
    code = e.code().name if e.code() is not None else "UNKNOWN"
    detail = e.details() or ""
    kind = classify(code, detail, tls=endpoint.tls,
                    client_certificate=bool(target.tls.client_cert))
    return error_for(kind, target, code=code, detail=detail, seconds=seconds)


def get_capabilities(target: ReapiTarget) -> Capabilities:
    """GetCapabilities for the target's instance: the summary, or a ReapiError."""
    grpc = _grpc()

    endpoint = parse_endpoint(target.endpoint)
    metadata = target.metadata()
    t0 = time.monotonic()
    channel = _channel(target, endpoint)
    try:
        call = channel.unary_unary(GET_CAPABILITIES)
        try:
            reply = call(encode_get_capabilities_request(target.instance_name),
                         timeout=target.timeout_s, metadata=metadata)
        except grpc.RpcError as e:
            raise _rpc_error(e, target, endpoint, time.monotonic() - t0) from None
    finally:
        channel.close()
    seconds = time.monotonic() - t0
    try:
        return decode_server_capabilities(reply, target.instance_name, seconds)
    except WireError as e:
        raise error_for("protocol", target, detail=str(e), seconds=seconds) from None


# --------------------------------------------------------------------------- properties


def parse_properties(items: Iterable[str] | Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """NAME=VALUE strings (or a mapping) as sorted pairs, checked as Bazel's
    --remote_default_exec_properties reads them (the first "=" splits)."""
    pairs = list(items.items()) if isinstance(items, Mapping) else [
        tuple(item.partition("=")[::2]) for item in items]
    out = []
    for name, value in pairs:
        if not name or any(ch in name for ch in "= \t\n"):
            raise ReapiError("platform", _("\"{name}\" is not a platform property name.").format(
                name=name), _("Write each property as NAME=VALUE, e.g. "
                              "container-image=docker://IMAGE."))
        out.append((name, value))
    return tuple(sorted(out))


def container_image_property(image: str, repo_digests: Sequence[str] = ()) -> str:
    """`container-image=docker://IMAGE` for the build image, pinned by its repo digest
    when Docker knows one for the image's repository (`docker image inspect`'s
    RepoDigests, e.g. "tensorflow/build@sha256:..."); a local image keeps its tag."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    repository = name[: len(name) - len(last)] + last.split(":", 1)[0]
    if "@" in image:
        return f"container-image=docker://{image}"
    for digest in repo_digests:
        repo, sep, value = digest.partition("@")
        if sep and value.startswith("sha256:") and repo in (
                repository, f"docker.io/{repository}", f"docker.io/library/{repository}"):
            return f"container-image=docker://{repository}@{value}"
    return f"container-image=docker://{image}"


def unlisted_properties(properties: Iterable[tuple[str, str]],
                        capabilities: Capabilities) -> tuple[str, ...] | None:
    """Property names the service's capabilities do not list; None when it lists none.

    Only services that put platform property names into supported_node_properties
    (NativeLink) make this meaningful; for the others `probe_execution` decides."""
    listed = set(capabilities.supported_node_properties)
    if not listed:
        return None
    return tuple(sorted({name for name, _value in properties if name not in listed}))


@dataclass(frozen=True)
class ProbeResult:
    """What the service did with the probe action."""

    #: accepted: queued, then cancelled; ran: finished with exit code 0;
    #: pending: accepted, not finished within wait_s (a worker may be pulling the image)
    verdict: str
    properties: tuple[tuple[str, str], ...]
    #: the probe action's digest, "HASH/SIZE" (how services' UIs and logs name it)
    action: str
    operation: str
    stage: str
    exit_code: int | None
    cancelled: bool
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The probe's result as JSON data."""
        return {"verdict": self.verdict, "properties": [f"{n}={v}" for n, v in self.properties],
                "action": self.action, "operation": self.operation, "stage": self.stage, "exit_code": self.exit_code,
                "cancelled": self.cancelled, "seconds": round(self.seconds, 3)}


def probe_blobs(properties: Sequence[tuple[str, str]], salt: bytes
                ) -> tuple[bytes, bytes, Digest]:
    """The probe's Command and Action (serialised) and the Action's digest."""
    command = encode_command(PROBE_ARGV, properties)
    action = encode_action(Digest.of(command), Digest.of(b""), properties=properties,
                           timeout_s=60, do_not_cache=True, salt=salt)
    return command, action, Digest.of(action)


def probe_execution(target: ReapiTarget, properties: Iterable[str] | Mapping[str, str], *,
                    wait: bool = False, wait_s: float = 60.0) -> ProbeResult:
    """Submit one no-op action with these platform properties; see the module docstring.

    A refusal raises ReapiError (kind "platform" when the service names the properties,
    else "execution" or a transport kind); an accepted action is cancelled at once unless
    `wait`, which waits up to `wait_s` for it to finish (verdict "ran" or "pending")."""
    grpc = _grpc()

    endpoint = parse_endpoint(target.endpoint)
    metadata = target.metadata()
    props = parse_properties(properties)
    command, action, action_digest = probe_blobs(props, secrets.token_bytes(16))
    t0 = time.monotonic()
    channel = _channel(target, endpoint)
    try:
        try:
            reply = channel.unary_unary(BATCH_UPDATE_BLOBS)(
                encode_batch_update_blobs_request(target.instance_name, [command, action]),
                timeout=target.timeout_s, metadata=metadata)
        except grpc.RpcError as e:
            raise _rpc_error(e, target, endpoint, time.monotonic() - t0) from None
        for _hash, status in decode_blob_statuses(reply):
            if status.code:
                raise error_for(classify(status.code_name, status.message, tls=endpoint.tls),
                                target, code=status.code_name, detail=status.message,
                                seconds=time.monotonic() - t0)
        stream = channel.unary_stream(EXECUTE)(
            encode_execute_request(target.instance_name, action_digest),
            timeout=wait_s if wait else target.timeout_s, metadata=metadata)
        operation: Operation | None = None
        try:
            for message in stream:
                operation = decode_operation(message)
                if operation.done or not wait:
                    break
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED and operation is not None:
                pass  # accepted, still running after wait_s: "pending" below
            else:
                raise _rpc_error(e, target, endpoint, time.monotonic() - t0) from None
        finally:
            stream.cancel()
        seconds = time.monotonic() - t0
        if operation is None:
            raise error_for("protocol", target, detail="Execute ended without an Operation",
                            seconds=seconds)
        action_name = f"{action_digest.hash}/{action_digest.size_bytes}"
        if operation.done:
            return _finished(operation, props, action_name, target, endpoint, seconds)
        cancelled = _cancel(channel, operation.name, target, metadata)
        return ProbeResult("pending" if wait else "accepted", props, action_name,
                           operation.name, operation.stage, None, cancelled,
                           time.monotonic() - t0)
    except WireError as e:
        raise error_for("protocol", target, detail=str(e),
                        seconds=time.monotonic() - t0) from None
    finally:
        channel.close()


def _finished(operation: Operation, props: tuple[tuple[str, str], ...], action: str,
              target: ReapiTarget, endpoint: Endpoint, seconds: float) -> ProbeResult:
    status = operation.error if operation.error and operation.error.code else operation.status
    if status is not None and status.code:
        kind = classify(status.code_name, status.message, tls=endpoint.tls)
        if kind not in ("platform", "instance", "unauthenticated", "permission"):
            kind = "execution"
        raise error_for(kind, target, code=status.code_name, detail=status.message,
                        seconds=seconds)
    if operation.exit_code:
        raise error_for("execution", target, code="OK", detail=_(
            "the test action exited with {code}").format(code=operation.exit_code),
            seconds=seconds)
    return ProbeResult("ran", props, action, operation.name, operation.stage,
                       operation.exit_code, False, seconds)


def _cancel(channel: Any, name: str, target: ReapiTarget,
            metadata: tuple[tuple[str, str], ...]) -> bool:
    """CancelOperation, best effort: False when the service does not offer or allow it."""
    grpc = _grpc()

    if not name:
        return False
    try:
        channel.unary_unary(CANCEL_OPERATION)(encode_cancel_operation_request(name),
                                              timeout=target.timeout_s, metadata=metadata)
    except grpc.RpcError:
        return False
    return True


# =========================================================================== Bazel's words

_CODE_NAMES = "|".join(RPC_CODES[1:])
#: "Failed to query remote execution capabilities: [CODE: ]detail" (Bazel's capabilities
#: check, which comes first), then a status anywhere in a line ("...StatusRuntimeException:
#: FAILED_PRECONDITION: ..."), then a status Bazel spelled out ("Failed Precondition: ...")
_BAZEL_CAPABILITIES = re.compile(
    rf"Failed to query remote execution capabilities: (?:(?P<code>{_CODE_NAMES}): )?"
    r"(?P<detail>.+)")
_BAZEL_STATUS = re.compile(rf"\b(?P<code>{_CODE_NAMES}): (?P<detail>.+)")
_BAZEL_TITLE = re.compile(r"\b(?P<code>Failed Precondition|Invalid Argument|Deadline Exceeded|"
                          r"Permission Denied|Resource Exhausted|Unauthenticated|Unavailable)"
                          r": (?P<detail>.+)")


def diagnose_bazel_output(output: str, target: ReapiTarget) -> ReapiError | None:
    """The remote execution error in a Bazel log, in the preflight's words (None: none).

    Bazel reports the service's status codes in its own lines ("Failed to query remote
    execution capabilities: INVALID_ARGUMENT: Invalid instance name: [x]", "...
    FAILED_PRECONDITION: Unregistered platform property ...", "UNAVAILABLE: io
    exception"); the first one found is mapped as a failed call would be."""
    tls = parse_endpoint(target.endpoint).tls if target.endpoint.strip() else False
    for pattern in (_BAZEL_CAPABILITIES, _BAZEL_STATUS, _BAZEL_TITLE):
        for line in output.splitlines():
            match = pattern.search(line)
            if match is None:
                continue
            code = (match.group("code") or "UNAVAILABLE").upper().replace(" ", "_")
            detail = match.group("detail").strip()
            kind = classify(code, detail, tls=tls,
                            client_certificate=bool(target.tls.client_cert))
            return error_for(kind, target, code=code, detail=detail)
    return None
