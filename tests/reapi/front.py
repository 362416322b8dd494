"""A TLS and API-key front for the REAPI test service (tests only, never shipped).

BuildGrid in tests/reapi serves plain gRPC with no authorization. Real services are
reached over TLS, some with client certificates, most with an API key header. `Front` is
a gRPC server (grpcio, in the test venv) with real TLS (certificates made by `openssl`,
`make_certs`) that forwards every call byte for byte to the BuildGrid server, and
refuses calls that lack the expected header (UNAUTHENTICATED) or carry a wrong value
(PERMISSION_DENIED): a stand-in for a service's own TLS terminator and auth layer, so
tests see how the client reports them. `SilentServer` accepts TCP connections and never
answers (a service that hangs, or a firewall that swallows the handshake).
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# gRPC's C core logs every failed handshake to stderr; the tests provoke them on purpose
# (tfwizard/core/remote/client.py does the same before its own first import of grpc)
os.environ.setdefault("GRPC_VERBOSITY", "NONE")
import grpc  # noqa: E402

#: the header the front checks when it has an API key
API_KEY_HEADER = "x-test-api-key"
STREAMING = {"/build.bazel.remote.execution.v2.Execution/Execute",
             "/build.bazel.remote.execution.v2.Execution/WaitExecution"}


@dataclass(frozen=True)
class Certs:
    """PEM files: a CA, a server certificate for localhost/127.0.0.1 signed by it, a
    client certificate signed by it, a second CA that signed nothing here, and a server
    certificate for another host name."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    wrong_host_cert: Path
    wrong_host_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _ca(folder: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
             "-subj", f"/CN={name}", cwd=folder)


def _signed(folder: Path, name: str, ca: str, extensions: str) -> None:
    (folder / f"{name}.ext").write_text(extensions + "\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
             cwd=folder)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
             cwd=folder)


def make_certs(folder: Path) -> Certs:
    """A small PKI in `folder` (EC keys, valid two days)."""
    folder.mkdir(parents=True, exist_ok=True)
    _ca(folder, "test-ca")
    _ca(folder, "other-ca")
    _signed(folder, "server", "test-ca",
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth")
    _signed(folder, "client", "test-ca", "extendedKeyUsage=clientAuth")
    _signed(folder, "wrong-host", "test-ca",
            "subjectAltName=DNS:other.example\nextendedKeyUsage=serverAuth")
    return Certs(folder / "test-ca.pem", folder / "server.pem", folder / "server.key",
                 folder / "client.pem", folder / "client.key", folder / "other-ca.pem",
                 folder / "wrong-host.pem", folder / "wrong-host.key")


class _Forward(grpc.GenericRpcHandler):
    def __init__(self, upstream: grpc.Channel, api_key: str | None) -> None:
        self.upstream = upstream
        self.api_key = api_key
        self.calls: list[str] = []

    def _check(self, context: grpc.ServicerContext) -> None:
        if self.api_key is None:
            return
        given = dict(context.invocation_metadata()).get(API_KEY_HEADER)
        if given is None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, f"missing {API_KEY_HEADER} header")
        if given != self.api_key:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "this API key may not use the "
                                                             "service")

    def service(self, details: grpc.HandlerCallDetails) -> Any:
        method = details.method
        self.calls.append(method)
        if method in STREAMING:
            def stream(request: bytes, context: grpc.ServicerContext) -> Any:
                self._check(context)
                try:
                    yield from self.upstream.unary_stream(method)(
                        request, timeout=context.time_remaining())
                except grpc.RpcError as e:
                    context.abort(e.code(), e.details())
            return grpc.unary_stream_rpc_method_handler(stream)

        def unary(request: bytes, context: grpc.ServicerContext) -> bytes:
            self._check(context)
            try:
                return bytes(self.upstream.unary_unary(method)(
                    request, timeout=context.time_remaining()))
            except grpc.RpcError as e:
                context.abort(e.code(), e.details())
                raise  # not reached: abort raises
        return grpc.unary_unary_rpc_method_handler(unary)


class Front:
    """A TLS gRPC server on 127.0.0.1 forwarding to `upstream` ("127.0.0.1:PORT")."""

    def __init__(self, upstream: str, cert: Path, key: Path, *, client_ca: Path | None = None,
                 api_key: str | None = None) -> None:
        self._channel = grpc.insecure_channel(upstream)
        self.handler = _Forward(self._channel, api_key)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        self.server.add_generic_rpc_handlers((self.handler,))
        credentials = grpc.ssl_server_credentials(
            [(key.read_bytes(), cert.read_bytes())],
            root_certificates=client_ca.read_bytes() if client_ca else None,
            require_client_auth=client_ca is not None)
        self.port = self.server.add_secure_port("127.0.0.1:0", credentials)
        self.server.start()

    def close(self) -> None:
        self.server.stop(grace=None)
        self._channel.close()

    def __enter__(self) -> Front:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never sends a byte."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                continue
            self._held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for conn in self._held:
            conn.close()
        self.sock.close()

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
