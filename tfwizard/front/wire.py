"""What the front end's client and server share: where the socket is, how a request is
framed, and the snapshot of the code that tells a server it is stale. Standard library only
(the client imports this module, and every import here costs each command's start)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typing costs ~2 ms to import: the client imports this module
    from typing import Any

#: the commands the front end serves; anything else (shell, the GUI, clean, help) runs in
#: the client's own process. None of these needs a controlling terminal.
SERVED = frozenset({"build", "check", "plan", "recipe", "detect", "advise", "diagnose",
                    "verify"})

PACKAGE = Path(__file__).resolve().parent.parent  # .../tfwizard
IDLE_DEFAULT_S = 1800.0
_HEADER = struct.Struct("!I")


def enabled(env: Mapping[str, str]) -> bool:
    """False when TFWIZARD_FRONTEND=0 (or off/no/false): every command runs in process."""
    return env.get("TFWIZARD_FRONTEND", "1").strip().lower() not in ("0", "off", "no", "false")


def command_of(argv: list[str]) -> str | None:
    """The command word of a `tfwizard` argv (the first word not an option), or None."""
    for word in argv:
        if not word.startswith("-"):
            return word
        if word in ("-h", "--help", "--version"):
            return None
    return None


def run_dir(env: Mapping[str, str]) -> Path:
    """The per-user folder of the socket, lock and log: TFWIZARD_FRONTEND_DIR, else
    $XDG_RUNTIME_DIR/tfwizard, else ~/.cache/tfwizard/run. Created 0700; refused (OSError)
    when it exists and another user owns it or others may enter it."""
    if env.get("TFWIZARD_FRONTEND_DIR"):
        folder = Path(env["TFWIZARD_FRONTEND_DIR"])
    elif env.get("XDG_RUNTIME_DIR"):
        folder = Path(env["XDG_RUNTIME_DIR"]) / "tfwizard"
    else:
        home = env.get("HOME") or str(Path.home())
        folder = Path(home) / ".cache" / "tfwizard" / "run"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{folder}: not a private folder of this user")
    return folder


def socket_name(env: Mapping[str, str]) -> str:
    """The socket's name: a hash of this Python (the interpreter and the environment:
    `python` and `python3` of one venv are one), its PYTHON* variables (PYTHONPATH,
    PYTHONHASHSEED, ... shape the interpreter at its start, which a forked child cannot
    change) and this tfwizard, so another venv, checkout or Python setting never talks to
    this one's server."""
    python = sorted((k, v) for k, v in env.items() if k.startswith("PYTHON"))
    key = f"{os.path.realpath(sys.executable)}\0{sys.prefix}\0{PACKAGE}\0{python}".encode()
    return "front-" + hashlib.sha256(key).hexdigest()[:16]


def code_snapshot() -> tuple[tuple[str, int, int], ...]:
    """Every .py file of the package (but the GUI's, which a server never imports) and every
    data file tfwizard reads (resources/), with its mtime and size: a server whose snapshot
    differs from the one it started with runs old code and must not serve."""
    files: list[tuple[str, int, int]] = []
    roots = [(PACKAGE, ".py")] + [(r, "") for r in (PACKAGE / "resources",
                                                    PACKAGE.parent / "resources")]
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


def send_message(sock: socket.socket, message: Mapping[str, Any],
                 fds: list[int] | None = None) -> None:
    """One framed JSON message (length, then the text), with fds on its first byte."""
    data = json.dumps(message).encode()
    frame = _HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [frame], fds)
        frame = frame[sent:]
    if frame:
        sock.sendall(frame)


def _exactly(sock: socket.socket, size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        more = sock.recv(size - len(buf))
        if not more:
            return None
        buf += more
    return bytes(buf)


def recv_message(sock: socket.socket, max_fds: int = 0) -> tuple[dict[str, Any] | None,
                                                                  list[int]]:
    """One framed message and the fds that came with it; (None, []) at end of stream.
    Reads exactly one message, never into the next."""
    fds: list[int] = []
    if max_fds:
        head, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, max_fds)
        if head and len(head) < _HEADER.size:
            head += _exactly(sock, _HEADER.size - len(head)) or b""
    else:
        head = _exactly(sock, _HEADER.size) or b""
    if len(head) < _HEADER.size:
        return None, fds
    (size,) = _HEADER.unpack(head)
    body = _exactly(sock, size)
    if body is None:
        return None, fds
    return json.loads(body), fds
