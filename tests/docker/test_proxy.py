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
from tfwizard.core.building.plan.plan import Step, make_plan
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("proxy")
    prefix = f"tfwizard-test-px-{uuid.uuid4().hex[:8]}"
    client = docker.from_env(timeout=120)
    nginx, proxy = NginxServer(base, put=False), TinyProxy(base)
    try:
        nginx.start()
        proxy.start()
        payload = os.urandom(40_000)
        (nginx.root / "probe.bin").write_bytes(payload)
        yield SimpleNamespace(base=base, nginx=nginx, proxy=proxy, client=client,
                              payload=payload, prefix=prefix)
    finally:
        proxy.stop()
        nginx.stop()
        # only this run's volumes: another run's (one killed mid-build leaves its exited
        # containers holding theirs) are not ours to remove
        kit.remove_caches(client, prefix)
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
    status, stdout, stderr = capture(["build", "--fresh", str(offline), "--out", str(tmp_path / "out"),
                                      "--json"], env)
    assert status == ExitStatus.OK, stderr + stdout[-3000:]
    assert net.proxy.requests()[before:] == requests  # nothing more went out


# -- secrets stay out of the containers' config (issue 15 item 7) --------------------------------

PROXY_USER, PROXY_PASS = "tfw", "proxy-pass-7q2Zk"
API_KEY = "api-key-Wq93xRt5"


def test_secrets_reach_the_build_but_no_containers_command_or_environment(net, tmp_path):
    """A real build that needs both secrets: its download (a payload no earlier test put
    in the repository cache) goes through a tinyproxy that demands Basic auth (the recipe's
    http_proxy is ${TFWT_PROXY}, a URL with a password), and it fills an nginx WebDAV
    cache with an x-api-key header from ${TFWT_API_KEY}.
    `docker inspect` of every step container (Cmd, Args, Env) and the engine's log of it
    must not show either value: they travel in files only the step reads."""
    payload = os.urandom(30_000)
    (net.nginx.root / "secret-probe.bin").write_bytes(payload)
    ws = _workspace_with_download(tmp_path, f"{net.nginx.url}secret-probe.bin", payload)
    with TinyProxy(basic_auth=(PROXY_USER, PROXY_PASS)) as proxy, \
            NginxServer(tmp_path / "cache") as cache:
        proxy_url = f"http://{PROXY_USER}:{PROXY_PASS}@127.0.0.1:{proxy.port}"
        extra = ('[network]\nhttp_proxy = "${TFWT_PROXY}"\n'
                 f'[remote]\ncache = "{cache.url}"\nupload = true\n'
                 'headers = ["x-api-key=${TFWT_API_KEY}"]\n')
        recipe = load_recipe(world.fixture_recipe(
            tmp_path / "secret.toml", workspace=ws, prefix=net.prefix, network="host",
            name=f"secrets-{net.prefix[-8:]}", disk_cache=False, extra=extra))
        plan = make_plan(recipe, recipe_dir=tmp_path)
        env = kit.consented(plan, {**os.environ, "TFWT_PROXY": proxy_url,
                                   "TFWT_API_KEY": API_KEY})
        runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path / "data",
                             client=net.client, env=env, keep_containers=True)
        try:
            result = kit.run(runner)[-1].result
            assert result.status == "succeeded", result.message
            # the secrets did their work: the proxy let the download through (it answers
            # 407 without them) and the cache got the header with every PUT
            assert any("secret-probe.bin" in r for r in proxy.requests()), proxy.requests()
            puts = [line for line in cache.access_lines() if '"PUT /' in line]
            assert puts and all(line.endswith(f'"{API_KEY}"') for line in puts), puts[:3]
            containers = net.client.containers.list(
                all=True, filters={"label": f"{LABEL}.build={runner.build_id}"})
            assert {c.labels[f"{LABEL}.step"] for c in containers} >= {"configure", "build"}
            for c in containers:
                c.reload()
                shown = json.dumps([c.attrs["Config"].get("Cmd"), c.attrs.get("Args"),
                                    c.attrs["Path"], c.attrs["Config"].get("Env")])
                logs = c.logs().decode(errors="replace")
                for secret in (PROXY_PASS, API_KEY):
                    assert secret not in shown, (c.name, shown)
                    assert secret not in logs, c.name
            build = next(c for c in containers if c.labels[f"{LABEL}.step"] == "build")
            assert "${TFWT" not in json.dumps(build.attrs["Config"])  # nothing left unresolved
            log = (runner.record.path / "log.txt").read_text()
            assert PROXY_PASS not in log and API_KEY not in log
            print(f"build container: {build.attrs['Config']['Cmd'][:6]}...")
        finally:
            kit.remove_build(net.client, runner.build_id)
