"""Proxies and prefetch against real servers on loopback: tinyproxy (a forward proxy with its
own log) in front of nginx (a file server standing in for a download mirror).

The containers use the host's network (build.network = "host"): both servers listen on
127.0.0.1 only. The proxy settings come from the recipe ([network] http_proxy) through the
plan into the container's environment; tinyproxy's log is the proof the traffic went
through it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.docker import kit
from tests.net.servers import NginxServer, TinyProxy
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.plan import LABEL, Step, make_plan
from tfwizard.core.recipe import load_recipe
from tfwizard.core.runner import BuildRunner

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("proxy")
    client = docker.from_env(timeout=120)
    nginx, proxy = NginxServer(base, put=False), TinyProxy(base)
    try:
        nginx.start()
        proxy.start()
        payload = os.urandom(40_000)
        (nginx.root / "probe.bin").write_bytes(payload)
        yield SimpleNamespace(base=base, nginx=nginx, proxy=proxy, client=client,
                              payload=payload, prefix=f"tfwizard-test-px-{uuid.uuid4().hex[:8]}")
    finally:
        proxy.stop()
        nginx.stop()
        for vol in client.volumes.list(filters={"label": f"{LABEL}.recipe"}):
            if vol.name.startswith(base.name) or "-px-" in vol.name:
                vol.remove(force=True)
        client.close()


def _recipe(path: Path, *, workspace: Path, prefix: str, network: str,
            proxy: str = "") -> Path:
    net = f'[network]\nhttp_proxy = "{proxy}"\n' if proxy else ""
    return world.fixture_recipe(path, workspace=workspace, prefix=prefix,
                                name=f"proxy-{prefix[-8:]}", network=network, disk_cache=False,
                                extra=net)


def test_container_traffic_goes_through_the_recipes_proxy(net, tmp_path):
    """busybox wget in a step container, HTTP_PROXY from the recipe via the plan."""
    ws = world.copy_workspace(tmp_path)
    recipe = load_recipe(_recipe(tmp_path / "r.toml", workspace=ws, prefix=net.prefix,
                                 network="host", proxy=net.proxy.url))
    plan = make_plan(recipe)
    assert plan.container_env["http_proxy"] == plan.container_env["HTTP_PROXY"] == net.proxy.url
    url = f"{net.nginx.url}probe.bin"
    plan = dataclasses.replace(
        plan, image=world.BUSYBOX, wheel_dir="", mounts=[], cache_volumes={},
        steps=[Step("build", "analyse", ("busybox", "wget", "-q", "-O", "/dev/null", url),
                    workdir="/")])
    before = len(net.proxy.requests())
    runner = BuildRunner(plan, data_root=tmp_path, client=net.client)
    result = kit.run(runner)[-1].result
    assert result.status == "succeeded", result.message
    requests = net.proxy.requests()[before:]
    assert f"GET {url} HTTP/1.1" in requests, requests
    assert any('"GET /probe.bin HTTP/1.1" 200' in line for line in net.nginx.access_lines())
    print(f"tinyproxy logged: {requests}")


def _workspace_with_download(tmp_path: Path, url: str, payload: bytes) -> Path:
    """The fixture (a copy) with one http_file the wheel depends on: a real download."""
    ws = world.copy_workspace(tmp_path)
    with (ws / "WORKSPACE").open("a", encoding="utf-8") as fh:
        fh.write(f"""
load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_file")

http_file(
    name = "tfw_probe",
    urls = ["{url}"],
    sha256 = "{hashlib.sha256(payload).hexdigest()}",
    downloaded_file_path = "probe.bin",
)
""")
    build = ws / "tensorflow/tools/pip_package/BUILD"
    text = build.read_text()
    build.write_text(text.replace('        ":build_stamp",\n',
                                  '        ":build_stamp",\n        "@tfw_probe//file",\n', 1))
    return ws


def test_fetch_downloads_through_the_proxy_then_an_offline_build_uses_it(net, tmp_path):
    url = f"{net.nginx.url}probe.bin"
    ws = _workspace_with_download(tmp_path, url, net.payload)
    recipe = _recipe(tmp_path / "fetch.toml", workspace=ws, prefix=net.prefix, network="host",
                     proxy=net.proxy.url)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    before = len(net.proxy.requests())
    status, stdout, stderr = capture(["fetch", str(recipe), "--json"], env)
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert status == ExitStatus.OK, stderr + stdout[-3000:]
    report = [e for e in events if e["type"] == "fetch"][-1]
    assert report["status"] == "succeeded"
    assert report["urls"] == [url], report
    assert [size for _, size in report["new_files"]] == [len(net.payload)], report
    requests = net.proxy.requests()[before:]
    assert f"GET {url} HTTP/1.1" in requests, requests
    logs = [e["line"] for e in events if e["type"] == "log"]
    assert not any("Compiling" in line for line in logs)  # --nobuild: nothing compiled
    print(f"fetch report: {report['urls']} new={report['new_files']}; tinyproxy: {requests}")

    # the same caches, no network at all: the download comes from the repository cache
    offline = _recipe(tmp_path / "offline.toml", workspace=ws, prefix=net.prefix,
                      network="none")
    status, stdout, stderr = capture(["build", str(offline), "--out", str(tmp_path / "out"),
                                      "--json"], env)
    assert status == ExitStatus.OK, stderr + stdout[-3000:]
    assert net.proxy.requests()[before:] == requests  # nothing more went out
