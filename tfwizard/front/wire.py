"""What the front end's client and server share: where the socket is, how a request is
framed, and the snapshot of the code that tells a server it is stale.

Built-in and C modules only (os, sys, marshal, _socket, a sha256 of C): the client imports
this module, and every import here costs each command's start (issue 17; no pathlib, typing,
json, hashlib or socket.py, whose enums alone cost milliseconds; tests/front/test_client_imports.py
keeps it so). Paths are strings. A message is a dict framed as a 4-byte big-endian length and
its `marshal` bytes: both ends are the same interpreter (the socket's name keys on it), and
the server decodes a request only after SO_PEERCRED said it comes from its own user.
"""

from __future__ import annotations

import marshal
import os
import sys
from _socket import CMSG_LEN, SCM_RIGHTS, SOL_SOCKET

TYPE_CHECKING = False  # typing costs ~2 ms to import (mypy reads this name as typing's)
if TYPE_CHECKING:
    from _socket import socket  # socket.socket's base: the client uses it bare
    from collections.abc import Mapping
    from typing import Any

#: the commands the front end serves; anything else (shell, the GUI, clean, help) runs in
#: the client's own process. None of these needs a controlling terminal.
SERVED = frozenset({"build", "check", "plan", "recipe", "detect", "advise", "diagnose",
                    "verify"})

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # .../tfwizard
IDLE_DEFAULT_S = 1800.0
_HEADER = 4  # the body's length, big-endian
_FD = 4  # bytes of one fd in SCM_RIGHTS data (a C int)


def enabled(env: Mapping[str, str]) -> bool:
    """False when TFWIZARD_FRONTEND=0 (or off/no/false): every command runs in process."""
    return env.get("TFWIZARD_FRONTEND", "1").strip().lower() not in ("0", "off", "no", "false")


def command_of(argv: list[str]) -> str | None:
    """The command word of a `tfwizard` argv (the first word not an option; tfwizard's own
    options take no value), or None after a -h/--help/--version before it. The client's
    choice to serve, and cli's choice of the one parser to build (the whole one for None:
    its help lists every command)."""
    for word in argv:
        if not word.startswith("-"):
            return word
        if word in ("-h", "--help", "--version"):
            return None
    return None


def run_dir(env: Mapping[str, str]) -> str:
    """The per-user folder of the socket, lock and log: TFWIZARD_FRONTEND_DIR, else
    $XDG_RUNTIME_DIR/tfwizard, else ~/.cache/tfwizard/run. Created 0700; refused (OSError)
    when it exists and another user owns it or others may enter it."""
    if env.get("TFWIZARD_FRONTEND_DIR"):
        folder = env["TFWIZARD_FRONTEND_DIR"]
    elif env.get("XDG_RUNTIME_DIR"):
        folder = os.path.join(env["XDG_RUNTIME_DIR"], "tfwizard")
    else:
        home = env.get("HOME") or os.path.expanduser("~")
        folder = os.path.join(home, ".cache", "tfwizard", "run")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.stat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{folder}: not a private folder of this user")
    return folder


def socket_path(env: Mapping[str, str]) -> str:
    """The server's socket: run_dir's socket_name (OSError as run_dir's)."""
    return os.path.join(run_dir(env), socket_name(env) + ".sock")


def _sha256_hex(data: bytes) -> str:
    """sha256 from the C module hashlib wraps (hashlib itself loads OpenSSL: ~2.7 ms)."""
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


def socket_name(env: Mapping[str, str]) -> str:
    """The socket's name: a hash of this Python (the interpreter and the environment:
    `python` and `python3` of one venv are one), its PYTHON* variables (PYTHONPATH,
    PYTHONHASHSEED, ... shape the interpreter at its start, which a forked child cannot
    change) and this tfwizard, so another venv, checkout or Python setting never talks to
    this one's server."""
    python = sorted((k, v) for k, v in env.items() if k.startswith("PYTHON"))
    key = f"{os.path.realpath(sys.executable)}\0{sys.prefix}\0{PACKAGE}\0{python}".encode()
    return "front-" + _sha256_hex(key)[:16]


def code_snapshot() -> tuple[tuple[str, int, int], ...]:
    """Every .py file of the package (but the GUI's, which a server never imports) and every
    data file tfwizard reads (resources/), with its mtime and size: a server whose snapshot
    differs from the one it started with runs old code and must not serve."""
    files: list[tuple[str, int, int]] = []
    roots = [(PACKAGE, ".py")] + [(r, "") for r in (os.path.join(PACKAGE, "resources"),
                                                    os.path.join(os.path.dirname(PACKAGE),
                                                                 "resources"))]
    for root, suffix in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")
                       and not (suffix and d in ("resources", "gui"))]
            for name in names:
                if name.endswith(suffix):
                    path = os.path.join(folder, name)
                    try:
                        info = os.stat(path)
                    except OSError:
                        continue
                    files.append((path, info.st_mtime_ns, info.st_size))
    return tuple(sorted(files))


def send_message(sock: socket, message: Mapping[str, Any], fds: list[int] | None = None) -> None:
    """One framed message (length, then its marshal bytes), with fds on its first byte.
    sock: a socket.socket or a bare _socket.socket (what the client uses)."""
    data = marshal.dumps(dict(message))
    frame = len(data).to_bytes(_HEADER, "big") + data
    if fds:
        rights = b"".join(fd.to_bytes(_FD, sys.byteorder, signed=True) for fd in fds)
        sent = sock.sendmsg([frame], [(SOL_SOCKET, SCM_RIGHTS, rights)])
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def _exactly(sock: socket, size: int) -> bytes | None:
    buf = b""
    while len(buf) < size:
        more = sock.recv(size - len(buf))
        if not more:
            return None
        buf += more
    return buf


def _fds_of(ancdata: list[tuple[int, int, bytes]]) -> list[int]:
    """The fds of SCM_RIGHTS control messages (a truncated last one's whole fds only)."""
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == SOL_SOCKET and kind == SCM_RIGHTS:
            fds += [int.from_bytes(data[i:i + _FD], sys.byteorder, signed=True)
                    for i in range(0, len(data) - len(data) % _FD, _FD)]
    return fds


def recv_message(sock: socket, max_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    """One framed message and the fds that came with it; (None, []) at end of stream;
    ValueError for a body that is not a marshalled dict. Reads exactly one message, never
    into the next."""
    fds: list[int] = []
    if max_fds:
        head, ancdata, _flags, _addr = sock.recvmsg(_HEADER, CMSG_LEN(max_fds * _FD))
        fds = _fds_of(ancdata)
        if head and len(head) < _HEADER:
            head += _exactly(sock, _HEADER - len(head)) or b""
    else:
        head = _exactly(sock, _HEADER) or b""
    if len(head) < _HEADER:
        return None, fds
    body = _exactly(sock, int.from_bytes(head, "big"))
    if body is None:
        return None, fds
    try:
        message = marshal.loads(body)
    except (EOFError, TypeError) as exc:
        raise ValueError(f"not a front-end message: {exc}") from exc
    if not isinstance(message, dict):
        raise ValueError(f"not a front-end message: {type(message).__name__}")
    return message, fds
