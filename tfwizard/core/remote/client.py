"""The calls to a REAPI service over grpcio (imported lazily): GetCapabilities, and the
opt-in probe that submits one no-op action to see the scheduler accept the recipe's
platform properties."""

from __future__ import annotations

import os
import secrets
import ssl
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..i18n import _

#: default seconds for each call: a service answers capabilities in milliseconds, and a
#: preflight should say "no answer" while the person still waits for it
from .messages import (
    Capabilities,
    Digest,
    Operation,
    decode_blob_statuses,
    decode_operation,
    decode_server_capabilities,
    encode_action,
    encode_batch_update_blobs_request,
    encode_cancel_operation_request,
    encode_command,
    encode_execute_request,
    encode_get_capabilities_request,
)
from .target import Endpoint, ReapiError, ReapiTarget, classify, error_for, parse_endpoint
from .wire import (
    BATCH_UPDATE_BLOBS,
    CANCEL_OPERATION,
    EXECUTE,
    GET_CAPABILITIES,
    PROBE_ARGV,
    WireError,
)

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


