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

from .client import (
    ProbeResult,
    container_image_property,
    get_capabilities,
    parse_properties,
    probe_blobs,
    probe_execution,
    system_roots,
    unlisted_properties,
)
from .messages import Capabilities
from .target import (
    ERROR_KINDS,
    Endpoint,
    ReapiError,
    ReapiTarget,
    TlsSettings,
    classify,
    diagnose_bazel_output,
    error_for,
    headers_from_recipe,
    parse_endpoint,
)
from .wire import DEFAULT_TIMEOUT_S, PROBE_ARGV

__all__ = ["DEFAULT_TIMEOUT_S", "ERROR_KINDS", "PROBE_ARGV", "Capabilities", "Endpoint",
           "ProbeResult", "ReapiError", "ReapiTarget", "TlsSettings", "classify",
           "container_image_property", "diagnose_bazel_output", "error_for",
           "get_capabilities", "headers_from_recipe", "parse_endpoint", "parse_properties",
           "probe_blobs", "probe_execution", "system_roots", "unlisted_properties"]
