"""Where a REAPI service is and how to reach it (endpoint, TLS, headers: secrets, never
printed), and every way talking to it fails (ReapiError: a kind, a message, a hint), also
as Bazel's own output words them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import TfWizardError
from ..i18n import _
from ..secrets import resolve

#: default seconds for each call: a service answers capabilities in milliseconds, and a
#: preflight should say "no answer" while the person still waits for it
from .wire import DEFAULT_PORTS, DEFAULT_TIMEOUT_S, RPC_CODES

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
