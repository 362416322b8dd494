"""dockerutil.py's private docker SDK calls against the real engine (issue 15 item 9): the
attach socket it unwraps and the log stream it follows."""

from __future__ import annotations

import socket

import pytest

from tests import world
from tfwizard.core.docker import client as dockerutil

pytestmark = [pytest.mark.docker]


@pytest.fixture
def client():
    world.require_docker()
    world.ensure_images()
    import docker

    c = docker.from_env(timeout=60)
    yield c
    c.close()


def test_raw_socket_and_log_follower_on_a_real_container(client):
    c = client.containers.create(world.BUSYBOX, ["sh", "-c", "echo out; echo err >&2"],
                                 labels={"io.tfwizard.test": "contract"}, network_mode="none")
    try:
        sock = client.api.attach_socket(c.id, params={"stdout": 1, "stderr": 1, "stream": 1})
        raw = dockerutil.raw_socket(sock)
        assert isinstance(raw, socket.socket)  # the SocketIO's ._sock
        c.start()
        frames = [f for batch in dockerutil.read_frames(raw) for f in batch]
        dockerutil.close_quietly(raw)
        dockerutil.close_quietly(sock)
        assert sorted(frames) == [(1, b"out\n"), (2, b"err\n")]
        c.wait(timeout=30)
        follower = dockerutil.LogFollower(client, c.id)  # _get, _url, _raise_for_status...
        try:
            again = [f for batch in follower.frames() for f in batch]
        finally:
            follower.close()
        assert sorted(again) == [(1, b"out\n"), (2, b"err\n")]
    finally:
        c.remove(force=True)
