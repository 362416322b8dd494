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

from .i18n import _
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
        host, _bracket, tail = netloc[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _colon, port_text = netloc.partition(":")
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
        return _("no host:port in the URL")
    try:
        conn = connect(where, timeout_s)
    except TimeoutError:
        return _("no answer from {host}:{port} within {timeout:g} s").format(
            host=where[0], port=where[1], timeout=timeout_s)
    except OSError as exc:
        return f"{where[0]}:{where[1]}: {exc.strerror or exc}"
    close = getattr(conn, "close", None)
    if close is not None:
        close()
    return None


def preflight(recipe: Recipe, env: Mapping[str, str] | None = None, *,
              recipe_dir: Path | None = None, timeout_s: float = CONNECT_TIMEOUT_S,
              connect: Connect = _tcp, uid: int | None = None) -> list[Finding]:
    """Findings about proxies, remote services and host paths, errors first.

    `uid`: the user the build containers run as (default: this process's)."""
    env = os.environ if env is None else env
    if uid is None and hasattr(os, "getuid"):
        uid = os.getuid()
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
                                   _("network.{key} refers to ${{{name}}}, which is not set in "
                                     "this environment; export it before building.").format(
                                       key=key, name=ref.group(1)),
                                   ("bazel-docs",), f"network.{key}"))
                continue
            value = env[ref.group(1)]
        why = reachable(value, timeout_s=timeout_s, connect=connect)
        if why:
            shown = endpoint(value)
            if shown:
                message = _("network.{key}: the proxy {where} does not answer from this "
                            "machine ({why}); every download of the build would fail.").format(
                    key=key, where=f"{shown[0]}:{shown[1]}", why=why)
            else:  # no host:port to name (and the URL may hold a password)
                message = _("network.{key}: {why}; every download of the build would "
                            "fail.").format(key=key, why=why)
            out.append(Finding("PROXY_UNREACHABLE", "error", message, ("bazel-docs",),
                               f"network.{key}"))
    for key in ("cache", "executor", "bes_backend"):
        value = getattr(remote, key)
        if not value or value.startswith("unix:"):
            continue
        why = reachable(value, timeout_s=timeout_s, connect=connect)
        if why:
            out.append(Finding("REMOTE_UNREACHABLE", "warning",
                               _("remote.{key} ({value}) does not answer from this machine "
                                 "({why}); Bazel will fail or fall back to building "
                                 "locally.").format(key=key, value=value, why=why),
                               ("bazel-docs",), f"remote.{key}"))
    paths = [("tensorflow.source_dir", recipe.tensorflow.source_dir),
             ("network.distdir", net.distdir), ("cuda.local_cuda_path", recipe.cuda.local_cuda_path),
             ("cuda.local_cudnn_path", recipe.cuda.local_cudnn_path),
             ("cuda.local_nccl_path", recipe.cuda.local_nccl_path)]
    git_url = recipe.tensorflow.git_url
    if git_url.startswith("file://") and not recipe.tensorflow.source_dir:
        paths.append(("tensorflow.git_url", git_url[len("file://"):]))
    for key, text in paths:
        if not text:
            continue
        path = (recipe.resolve_path(key, base=recipe_dir) if key != "tensorflow.git_url"
                else Path(text))
        assert path is not None
        if not path.exists():
            out.append(Finding("PATH_MISSING", "error",
                               _("{key}: {path} does not exist on this machine.").format(
                                   key=key, path=path), ("docker-api",), key))
        elif key == "tensorflow.git_url" and uid is not None:
            owner = path.stat().st_uid
            if owner != uid:
                out.append(Finding(
                    "GIT_MIRROR_OWNER", "warning",
                    _("tensorflow.git_url: the mirror {path} belongs to uid {owner} and the "
                      "build runs as uid {uid}; git since 2.39.4 refuses to read a repository "
                      "another user owns (\"detected dubious ownership\"), so the fetch step "
                      "would fail. Serve the mirror over http(s) or git://, or build as its "
                      "owner.").format(path=path, owner=owner, uid=uid),
                    ("git-docs",), key))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.severity])
