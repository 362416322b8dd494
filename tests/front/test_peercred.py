"""The front-end server serves only its own user (SO_PEERCRED): a request from another uid
is refused before it is read, with a real second user (needs root to become one; CI runs
as root)."""

from __future__ import annotations

import os
import socket

import pytest

from tests.front.test_front import RECIPE
from tfwizard.front import wire

NOBODY = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user needs root")


def _request_as(uid: int, path: str) -> int:
    """In a forked child that became `uid`: connect to the server and send a whole served
    request with fds 0/1/2 (the socket by its name from its folder, entered while still
    root: the folders above it, pytest's own, are closed to others). The child's exit status: 0 when the server closed without an
    answer, 3 when it answered, 2 when the child could not even ask."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            os.chdir(os.path.dirname(path))
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            request = {"argv": ["recipe", "validate", str(RECIPE)], "cwd": "/", "env": {},
                       "umask": 0o022}
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(os.path.basename(path))
                try:
                    wire.send_message(sock, request, [0, 1, 2])  # as a client sends one
                    answer = sock.recv(64)
                except (BrokenPipeError, ConnectionResetError):
                    answer = b""  # closed unread, before or while this was sent
                code = 0 if answer == b"" else 3
        finally:
            os._exit(code)
    _pid, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_request_from_another_user_is_refused(front):
    front.up()
    served = front.served()
    path = front.socket
    # let the other user reach the socket at all (the run folder is 0700, the socket 0600):
    # what is tested is the server's own check, not the file modes in front of it
    os.chmod(front.folder, 0o711)
    os.chmod(path, 0o666)
    try:
        status = _request_as(NOBODY, str(path))
    finally:
        os.chmod(path, 0o600)
        os.chmod(front.folder, 0o700)
    assert status == 0, f"the other user's request was not just closed: {status}\n{front.log()}"
    assert f"refused a request of uid {NOBODY}" in front.log(), front.log()
    assert front.served() == served  # nothing was forked or run for it
    done = front.run("recipe", "validate", str(RECIPE))  # and its own user is still served
    assert done.returncode == 0, done.stderr
    assert front.served() == served + 1
