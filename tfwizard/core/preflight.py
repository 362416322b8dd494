"""Preflight: the checks that touch the world (network, files) before a build starts.

The rules in `rules.py` stay pure and fast (the GUI re-runs them on every change); these
open TCP connections (2 s each, at most a handful) and look at host paths, so they run only
on `tfwizard check --preflight`, before `tfwizard build` and before `tfwizard fetch`.
Findings use the rules' `Finding`, so they print and serialise the same way.

Reachability is tried from this machine: with DOCKER_HOST pointing at another machine, or
a bridge network, the build container may see the network differently (rules.py warns
about loopback addresses in a bridge container).
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .recipe import Recipe
from .rules import Finding

#: seconds per TCP connect
CONNECT_TIMEOUT_S = 2.0
DEFAULT_PORTS = {"http": 80, "https": 443, "grpc": 80, "grpcs": 443, "socks5": 1080,
                 "socks5h": 1080}
_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")

Connect = Callable[[tuple[str, int], float], Any]


def endpoint(url: str) -> tuple[str, int] | None:
    """(host, port) of scheme://[user:pass@]host[:port][/...]; None when there is none."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    netloc = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if netloc.startswith("["):
        host, _, tail = netloc[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = netloc.partition(":")
    if not host:
        return None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return None
        return host, int(port_text)
    port = DEFAULT_PORTS.get(scheme.lower())
    return (host, port) if port else None


def _tcp(address: tuple[str, int], timeout: float) -> Any:
    return socket.create_connection(address, timeout=timeout)


def reachable(url: str, *, timeout_s: float = CONNECT_TIMEOUT_S,
              connect: Connect = _tcp) -> str | None:
    """None when a TCP connection to the URL's host:port opens, else why not."""
    where = endpoint(url)
    if where is None:
        return "no host:port in the URL"
    try:
        conn = connect(where, timeout_s)
    except TimeoutError:
        return f"no answer from {where[0]}:{where[1]} within {timeout_s:g} s"
    except OSError as exc:
        return f"{where[0]}:{where[1]}: {exc.strerror or exc}"
    close = getattr(conn, "close", None)
    if close is not None:
        close()
    return None


def preflight(recipe: Recipe, env: Mapping[str, str] | None = None, *,
              recipe_dir: Path | None = None, timeout_s: float = CONNECT_TIMEOUT_S,
              connect: Connect = _tcp) -> list[Finding]:
    """Findings about proxies, remote services and host paths, errors first."""
    env = os.environ if env is None else env
    out: list[Finding] = []
    net, remote = recipe.network, recipe.remote
    for key in ("http_proxy", "https_proxy"):
        value = getattr(net, key)
        if not value:
            continue
        ref = _REF.match(value)
        if ref:
            if ref.group(1) not in env:
                out.append(Finding("PROXY_UNSET", "error",
                                   f"network.{key} refers to ${{{ref.group(1)}}}, which is not "
                                   "set in this environment; export it before building.",
                                   ("bazel-docs",), f"network.{key}"))
                continue
            value = env[ref.group(1)]
        why = reachable(value, timeout_s=timeout_s, connect=connect)
        if why:
            shown = endpoint(value)
            where = f"{shown[0]}:{shown[1]}" if shown else "the proxy"
            out.append(Finding("PROXY_UNREACHABLE", "error",
                               f"network.{key}: the proxy {where} does not answer from this "
                               f"machine ({why}); every download of the build would fail.",
                               ("bazel-docs",), f"network.{key}"))
    for key in ("cache", "executor", "bes_backend"):
        value = getattr(remote, key)
        if not value or value.startswith("unix:"):
            continue
        why = reachable(value, timeout_s=timeout_s, connect=connect)
        if why:
            out.append(Finding("REMOTE_UNREACHABLE", "warning",
                               f"remote.{key} ({value}) does not answer from this machine "
                               f"({why}); Bazel will fail or fall back to building locally.",
                               ("bazel-docs",), f"remote.{key}"))
    paths = [("network.distdir", net.distdir), ("cuda.local_cuda_path", recipe.cuda.local_cuda_path),
             ("cuda.local_cudnn_path", recipe.cuda.local_cudnn_path),
             ("cuda.local_nccl_path", recipe.cuda.local_nccl_path)]
    git_url = recipe.tensorflow.git_url
    if git_url.startswith("file://") and not recipe.tensorflow.source_dir:
        paths.append(("tensorflow.git_url", git_url[len("file://"):]))
    for key, text in paths:
        if not text:
            continue
        path = Path(text).expanduser()
        if not path.is_absolute() and recipe_dir is not None:
            path = recipe_dir / path
        if not path.exists():
            out.append(Finding("PATH_MISSING", "error", f"{key}: {path} does not exist on this "
                               "machine.", ("docker-api",), key))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.severity])
