"""The client's start is what every `tfwizard` command pays before its first line of work
(issue 17): it imports only built-in and C modules, and the wire format it shares with the
server (marshal frames, fds by SCM_RIGHTS) works from a bare _socket and from socket.py."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys

import pytest

from tests.front.front_world import ROOT
from tests.front.test_front import RECIPE
from tfwizard.front import wire

#: what the client may add to a bare `python -c pass`, and why
ALLOWED = {
    "tfwizard": "its own package",
    "tfwizard.front": "its own package",
    "tfwizard.front.client": "itself",
    "tfwizard.front.wire": "what it shares with the server",
    "__future__": "postponed annotations (~0.1 ms)",
    "_socket": "the socket, SCM_RIGHTS",
    "_sha256": "the socket's name (Python 3.10, 3.11)",
    "_sha2": "the socket's name (Python 3.12+)",
    "time": "the request's sent_at (built in)",
}

#: run by the venv's python: a served command through the client's own functions, then the
#: modules it added to the interpreter's start, one per line, to the file in argv[1]
SERVED = """
import os, sys
bare = set(sys.modules)
from tfwizard.front import client
status = client._served(sys.argv[2:], dict(os.environ))
with open(sys.argv[1], "w") as out:
    out.write(f"{status}\\n" + "\\n".join(sorted(set(sys.modules) - bare)))
"""


def test_a_served_command_imports_only_built_in_modules_in_the_client(front, tmp_path):
    front.up()
    served = front.served()
    listing = tmp_path / "modules.txt"
    done = subprocess.run([sys.executable, "-c", SERVED, str(listing), "recipe", "validate",
                           str(RECIPE)], env=front.env, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    status, *added = listing.read_text().splitlines()
    assert status == "0", done.stdout + done.stderr + front.log()
    assert front.served() == served + 1  # served, not run in the client's process
    assert sorted(set(added) - set(ALLOWED)) == [], "the client imports more than it may"


def test_importing_the_client_adds_only_built_in_modules():
    code = ("import sys; bare = set(sys.modules); import tfwizard.front.client; "
            "print(' '.join(sorted(set(sys.modules) - bare)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, check=True)
    added = set(done.stdout.split())
    assert "tfwizard.front.client" in added
    assert sorted(added - set(ALLOWED)) == []


def test_the_socket_name_is_hashlibs_sha256():
    env = {"PYTHONHASHSEED": "7", "HOME": "/nowhere"}
    key = (f"{os.path.realpath(sys.executable)}\0{sys.prefix}\0{wire.PACKAGE}\0"
           f"{[('PYTHONHASHSEED', '7')]}").encode()
    assert wire.socket_name(env) == "front-" + hashlib.sha256(key).hexdigest()[:16]
    assert wire.socket_name(env) != wire.socket_name({})


@pytest.mark.parametrize("bare", [False, True], ids=["socket.py", "_socket"])
def test_messages_and_fds_cross_a_socket_pair(bare, tmp_path):
    import _socket

    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    sender = _socket.socket(fileno=left.detach()) if bare else left
    sent = tmp_path / "sent.txt"
    sent.write_text("through SCM_RIGHTS")
    with open(sent, "rb") as passed:
        message = {"argv": ["build", "r.toml"], "env": {"LANG": "zh_CN.UTF-8"}, "umask": 0o022,
                   "sent_at": 1.5, "go": True, "none": None}
        wire.send_message(sender, message, [passed.fileno()])
        wire.send_message(sender, {"signal": 2})
        got, fds = wire.recv_message(right, max_fds=3)
        assert got == message and len(fds) == 1
        with os.fdopen(fds[0], "rb") as received:
            assert received.read() == b"through SCM_RIGHTS"
        assert wire.recv_message(right) == ({"signal": 2}, [])  # one message, never into the next
        sender.sendall(len(b"\xff").to_bytes(4, "big") + b"\xff")  # not a marshalled dict
        with pytest.raises(ValueError):
            wire.recv_message(right)
        sender.close()
        assert wire.recv_message(right) == (None, [])  # end of stream
    right.close()


def test_the_server_drops_a_request_that_is_not_a_marshalled_dict(front):
    front.up()
    served = front.served()
    import marshal

    request = marshal.dumps({"argv": ["recipe", "validate", str(RECIPE)]})
    for body in (b"\xff", marshal.dumps([1, 2]), request[:-3]):  # garbage, a list, cut short
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(front.socket))
            sock.sendmsg([len(body).to_bytes(4, "big") + body],
                         [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                           b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2)))])
            assert sock.recv(64) == b""  # closed without an answer
    assert front.log().count("request dropped: ") == 3, front.log()
    done = front.run("recipe", "validate", str(RECIPE))  # and it still serves
    assert done.returncode == 0, done.stderr
    assert front.served() == served + 1
