"""The REAPI client's protocol constants and its protobuf wire format: just enough of an
encoder and decoder for the few messages it sends and reads (no generated code)."""

from __future__ import annotations

from collections.abc import Mapping

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


