"""One docker client per process and engine (a warm no-op rebuild is a fraction
of a second, and every new client costs two round trips before its first call: the API
version and the ping).

    client = shared_client(env)   # dockerutil.connect(env) the first time, then the same

Kept per process, keyed by what picks the engine and how to reach it: DOCKER_HOST,
DOCKER_CONTEXT, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH and DOCKER_CONFIG of `env`, and the
timeout. A client that failed to connect is not kept (the next call tries again); nobody
closes a kept client (`forget()` does, for tests and a front end that outlives an engine
change). The docker SDK's client keeps a connection pool: it reconnects by itself when
the engine restarted, and it may be used from several threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any

from . import client as dockerutil

#: the environment variables that choose the engine and how the SDK talks to it
ENGINE_ENV = ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH",
              "DOCKER_CONFIG")
#: the runner's timeout for engine calls (seconds), as dockerutil.connect's default
TIMEOUT_S = 60

_clients: dict[tuple[str, ...], Any] = {}
_lock = threading.Lock()


def engine_key(env: Mapping[str, str] | None, timeout: int) -> tuple[str, ...]:
    """What a kept client is found by: the engine settings of `env` and the timeout."""
    env = os.environ if env is None else env
    return (*(env.get(name, "") for name in ENGINE_ENV), str(timeout))


def shared_client(env: Mapping[str, str] | None = None, *, timeout: int = TIMEOUT_S) -> Any:
    """The process's checked client for the engine `env` names (connected and pinged the
    first time: dockerutil.connect, whose errors it raises)."""
    key = engine_key(env, timeout)
    with _lock:
        client = _clients.get(key)
    if client is not None:
        return client
    client = dockerutil.connect(env, timeout=timeout)
    with _lock:
        kept = _clients.setdefault(key, client)
    if kept is not client:  # another thread connected first
        client.close()
    return kept


def forget() -> None:
    """Close and drop every kept client."""
    with _lock:
        kept = list(_clients.values())
        _clients.clear()
    for client in kept:
        client.close()
