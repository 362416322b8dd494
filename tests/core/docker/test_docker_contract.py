"""The docker SDK calls tfwizard makes that are not its public API (dockerutil.py), held to
the pinned major version (issue 15 item 9). The same calls against a real engine:
tests/docker/test_docker_contract.py."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import docker
from docker.api.client import APIClient
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[3]

#: name -> the parameters dockerutil.py relies on (LogFollower, raw_socket)
PRIVATE = {
    "_get": ["self", "args", "kwargs"],  # a requests call: stream=True, timeout=None, params
    "_url": ["self", "pathfmt", "args", "kwargs"],
    "_raise_for_status": ["self", "response"],
    "_get_raw_response_socket": ["self", "response"],
}


#: instance attributes dockerutil.py sets: connect() negotiates the API version on a ping
ATTRIBUTES = ("_version",)


def test_docker_is_pinned_below_the_next_major():
    text = (ROOT / "pyproject.toml").read_text()
    spec = SpecifierSet(re.search(r'"docker([^"]+)"', text).group(1).split(";")[0])
    assert Version("7.1.0") in spec and Version("8.0.0") not in spec, spec
    assert Version(docker.__version__) in spec  # what the tests run is what is pinned


def test_the_private_calls_exist_with_the_parameters_used():
    for name, params in PRIVATE.items():
        assert callable(getattr(APIClient, name, None)), name
        assert list(inspect.signature(getattr(APIClient, name)).parameters) == params, name
    # the one used by name in dockerutil.py, and nothing private beyond the list
    source = (ROOT / "tfwizard" / "core" / "docker" / "client.py").read_text()
    used = set(re.findall(r"api\.(_\w+)", source))
    assert used == set(PRIVATE) | set(ATTRIBUTES), used
    client = APIClient(base_url="unix:///nonexistent.sock", version="1.41")
    for name in ATTRIBUTES:  # set on the instance by __init__
        assert hasattr(client, name), name
    assert "._sock" in source  # raw_socket: attach_socket's SocketIO wraps a socket here
