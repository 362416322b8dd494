"""The REAPI messages the client sends and reads: digests, commands and actions, blob
uploads, operations, and the server's capabilities with their problems."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..i18n import _

#: default seconds for each call: a service answers capabilities in milliseconds, and a
#: preflight should say "no answer" while the person still waits for it
from .wire import (
    API_MAJOR,
    COMPRESSORS,
    DIGEST_FUNCTIONS,
    EXECUTION_STAGES,
    RPC_CODES,
    SYMLINK_STRATEGIES,
    Fields,
    _bytes,
    _enums,
    _int,
    _message,
    _messages,
    _name,
    _str,
    _strings,
    field_bytes,
    field_message,
    field_str,
    field_varint,
    parse_fields,
)

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


