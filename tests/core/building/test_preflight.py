"""Preflight (network and file checks before a build) against real loopback sockets."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.run.preflight import endpoint, preflight, reachable
from tfwizard.core.consent import CONSENT_ENV
from tfwizard.core.recipe import Recipe, load_recipe

ROOT = Path(__file__).resolve().parents[3]
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")


@pytest.fixture
def listening():
    """A TCP port on 127.0.0.1 that accepts connections (closed at the end)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    yield srv.getsockname()[1]
    srv.close()


@pytest.fixture
def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connect is refused at once
    return port


@pytest.mark.parametrize(("url", "where"), [
    ("http://proxy.corp:3128", ("proxy.corp", 3128)),
    ("http://u:p@proxy.corp:3128/", ("proxy.corp", 3128)),
    ("https://cache.example", ("cache.example", 443)),
    ("grpcs://remote.buildbuddy.io", ("remote.buildbuddy.io", 443)),
    ("grpc://10.0.0.2:9092", ("10.0.0.2", 9092)),
    ("http://[::1]:8080/x", ("::1", 8080)),
    ("proxy.corp:3128", None),
    ("http://host:99999", None),
])
def test_endpoint(url, where):
    assert endpoint(url) == where


def test_reachable_against_real_sockets(listening, closed_port):
    assert reachable(f"http://127.0.0.1:{listening}") is None
    why = reachable(f"http://127.0.0.1:{closed_port}")
    assert why and "refused" in why.lower()


def test_unanswered_connect_is_bounded_by_the_timeout():
    calls = []

    def stalling(address, timeout):  # what a firewall that drops packets looks like
        calls.append((address, timeout))
        raise TimeoutError

    why = reachable("http://proxy.corp:3128", timeout_s=2.0, connect=stalling)
    assert calls == [(("proxy.corp", 3128), 2.0)]
    assert why == "no answer from proxy.corp:3128 within 2 s"


def test_proxy_findings(listening, closed_port, tmp_path):
    up = LAPTOP.with_changes({"network.http_proxy": f"http://127.0.0.1:{listening}"})
    assert preflight(up, {}) == []
    down = LAPTOP.with_changes({"network.https_proxy": "${TFW_PROXY}"})
    proxy = f"http://u:secret@127.0.0.1:{closed_port}"
    refused = preflight(down, {"TFW_PROXY": proxy})
    assert [f.code for f in refused] == ["SECRET_NOT_ALLOWED", "PROXY_UNREACHABLE"]
    assert "TFW_PROXY@127.0.0.1" in refused[0].message and "u:secret" not in refused[0].message
    found = preflight(down, {"TFW_PROXY": proxy, CONSENT_ENV: "TFW_PROXY@127.0.0.1"})
    assert [f.code for f in found] == ["PROXY_UNREACHABLE"]
    assert found[0].severity == "error" and found[0].key == "network.https_proxy"
    assert "secret" not in found[0].message and f"127.0.0.1:{closed_port}" in found[0].message
    assert [f.code for f in preflight(down, {})] == ["PROXY_UNSET"]


def test_remote_and_path_findings(closed_port, tmp_path):
    recipe = LAPTOP.with_changes({
        "remote.cache": f"grpc://127.0.0.1:{closed_port}",
        "network.distdir": str(tmp_path / "absent"),
        "cuda.local_cuda_path": str(tmp_path)})
    found = {f.code: f for f in preflight(recipe, {})}
    assert set(found) == {"REMOTE_UNREACHABLE", "PATH_MISSING"}
    assert found["REMOTE_UNREACHABLE"].severity == "warning"
    assert found["PATH_MISSING"].key == "network.distdir"
    mirror = LAPTOP.with_changes({"tensorflow.git_url": f"file://{tmp_path}/tf.git"})
    assert [f.key for f in preflight(mirror, {})] == ["tensorflow.git_url"]


def _write(path: Path, extra: str) -> Path:
    text = (ROOT / "recipes" / "tf221-cpu-portable.toml").read_text()
    path.write_text(text + "\n" + extra, encoding="utf-8")
    return path


def test_check_preflight_and_build_stop_before_docker(closed_port, tmp_path):
    recipe = _write(tmp_path / "r.toml",
                    f'[network]\nhttp_proxy = "http://127.0.0.1:{closed_port}"\n')
    host = str(ROOT / "tests/data/hosts/no-gpu-server.json")
    status, out, _ = capture(["check", str(recipe), "--host", host])
    assert "PROXY_UNREACHABLE" not in out  # pure rules only without --preflight
    t0 = time.monotonic()
    status, out, _ = capture(["check", str(recipe), "--host", host, "--preflight"])
    assert status == ExitStatus.ERROR and "ERROR PROXY_UNREACHABLE" in out
    assert time.monotonic() - t0 < 10
    # build refuses before any Docker work (DOCKER_HOST points nowhere: never reached)
    status, out, err = capture(["build", str(recipe), "--host", host],
                               env_vars={"DOCKER_HOST": f"tcp://127.0.0.1:{closed_port}",
                                         "HOME": str(tmp_path)})
    assert status == ExitStatus.ERROR
    assert "PROXY_UNREACHABLE" in err and "preflight found 1 error" in err


def test_check_preflight_passes_with_a_listening_proxy(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    stop = threading.Event()
    try:
        port = srv.getsockname()[1]
        recipe = _write(tmp_path / "r.toml",
                        f'[network]\nhttp_proxy = "http://127.0.0.1:{port}"\n')
        status, out, _ = capture(["check", str(recipe), "--preflight", "--json", "--host",
                                  str(ROOT / "tests/data/hosts/no-gpu-server.json")])
        assert "PROXY_UNREACHABLE" not in out
    finally:
        stop.set()
        srv.close()


def test_a_git_mirror_owned_by_another_uid_is_a_warning(tmp_path):
    """git >= 2.39.4 refuses a repository another user owns ("dubious ownership")."""
    mirror = tmp_path / "tensorflow.git"
    mirror.mkdir()
    recipe = Recipe().with_changes({"tensorflow.git_url": f"file://{mirror}"})
    owner = mirror.stat().st_uid
    found = {f.code: f for f in preflight(recipe, {}, uid=owner + 1)}
    assert found["GIT_MIRROR_OWNER"].severity == "warning"
    assert f"uid {owner}" in found["GIT_MIRROR_OWNER"].message
    assert "GIT_MIRROR_OWNER" not in {f.code for f in preflight(recipe, {}, uid=owner)}
    checkout = recipe.with_changes({"tensorflow.source_dir": str(tmp_path)})
    assert "GIT_MIRROR_OWNER" not in {f.code for f in preflight(checkout, {}, uid=owner + 1)}
