"""${ENV} secrets on the warm path (issue 17, core/building/warm/secrets.py), real engine, real
servers: a tinyproxy that demands Basic auth (the recipe's http_proxy is ${TFWS_PROXY}) in
front of the fixture's one download, and an nginx WebDAV cache that logs the x-api-key
header (${TFWS_API_KEY}) of every PUT.

The warm build must take the warm path (no cold fallback), the servers must see the values,
and the container's config, every exec's inspect, the container's log, the record and the
log must not. A changed value must reach the next build and leave no stale copy in the
Bazel server that stays up.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tests.docker.test_proxy import _workspace_with_download
from tests.net.servers import NginxServer, TinyProxy
from tfwizard.core.building.plan.flags import RECORD
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm.run import WarmRunner, cold_reason
from tfwizard.core.building.warm.secrets import RC_VAR, RESTART_LINE
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PROXY_USER, PROXY_PASS = "tfw", "warm-proxy-pass-8Hq2"
# the second ends as base64 padding does: the BEP file writes "=" as \u003d
KEY1, KEY2 = "warm-key-one-Zt81", "warm-key-two-Pq07=="


class ExecSpy:
    """The docker client's low-level API, with the id of every exec created kept (the
    engine lists an exec only while it runs; inspect by id still answers after)."""

    def __init__(self, api):
        self._api, self.ids = api, []

    def exec_create(self, *args, **kwargs):
        got = self._api.exec_create(*args, **kwargs)
        self.ids.append(got["Id"])
        return got

    def __getattr__(self, name):
        return getattr(self._api, name)


#: what the workspace's configure.py prints about RC_VAR in its environment
CONFIGURE_SAYS = "tfw-test: configure's environment: rc lines"


def _say_whether_configure_sees_the_rc(ws: Path) -> None:
    """Make the fixture's configure.py print whether RC_VAR is in its environment."""
    script = ws / "configure.py"
    text = script.read_text("utf-8")
    probe = (f'import os\nprint("{CONFIGURE_SAYS}", "set" if "{RC_VAR}" in os.environ '
             'else "unset", flush=True)\n')
    script.write_text(text.replace("\nimport argparse\n", "\n" + probe + "import argparse\n", 1),
                      "utf-8")
    assert CONFIGURE_SAYS in script.read_text("utf-8")


def _server_environ(client, container: str) -> str:
    """The running Bazel server's environment, read in the container (NUL -> newline)."""
    box = client.containers.get(container)
    got = box.exec_run(["sh", "-c", 'for f in /tmp/tfwizard-bazel/*/server/server.pid.txt; do '
                                    'tr "\\0" "\\n" < /proc/$(cat "$f")/environ; done'])
    return got.output.decode("utf-8", "replace")


def _run(client, plan, recipe: Path, tmp: Path, env: dict[str, str], tag: str):
    runner = WarmRunner(plan, recipe_id=str(recipe), out_dir=tmp / f"out-{tag}",
                        data_root=tmp / "data", client=client, env=env)
    t0 = time.perf_counter()
    result = kit.run(runner)[-1].result
    print(f"warm build {tag}: {time.perf_counter() - t0:.1f} s")
    assert result.status == "succeeded", result.message
    return runner, (runner.record.path / "log.txt").read_text("utf-8")


def _nothing_shows(runner, spy: ExecSpy, client, secrets: tuple[str, ...]) -> None:
    box = client.containers.get(runner.workspace.container_name)
    shown = json.dumps(box.attrs) + box.logs().decode("utf-8", "replace")
    inspected = [client.api.exec_inspect(i) for i in spy.ids]
    assert inspected and all(i["ProcessConfig"] for i in inspected)
    shown += json.dumps(inspected)
    files = [p for p in runner.record.path.rglob("*") if p.is_file()]
    assert any(p.name == "log.txt" for p in files)
    shown += "".join(p.read_text("utf-8", "replace") for p in files)
    # the state volume keeps this build's BEP file (for --attach) masked of the values
    at_rest = box.exec_run(["sh", "-c", f"ls {RECORD}/bep-*.json && cat {RECORD}/*"])
    assert at_rest.exit_code == 0 and b"optionsParsed" in at_rest.output, at_rest.output[:300]
    where = at_rest.output.find(b"x-api-key")
    assert b"x-api-key\\u003d***" in at_rest.output, at_rest.output[where - 200:where + 200]
    shown += at_rest.output.decode("utf-8", "replace")
    for secret in secrets:
        assert secret not in shown
    assert RC_VAR not in json.dumps(box.attrs["Config"])


def test_warm_build_passes_secrets_per_exec_and_a_changed_one_restarts_the_server(tmp_path):
    world.require_docker()
    world.ensure_images()
    import docker

    client = docker.from_env(timeout=300)
    prefix = f"tfwizard-test-ws-{uuid.uuid4().hex[:8]}"
    payload = os.urandom(30_000)
    space = None
    with TinyProxy(basic_auth=(PROXY_USER, PROXY_PASS)) as proxy, \
            NginxServer(tmp_path / "cache") as cache:
        (cache.root / "warm-secret-probe.bin").write_bytes(payload)
        ws = _workspace_with_download(tmp_path, f"{cache.url}warm-secret-probe.bin", payload)
        _say_whether_configure_sees_the_rc(ws)
        extra = ('[network]\nhttp_proxy = "${TFWS_PROXY}"\n'
                 f'[remote]\ncache = "{cache.url}"\nupload = true\n'
                 'headers = ["x-api-key=${TFWS_API_KEY}"]\n')
        recipe = world.fixture_recipe(tmp_path / "secret.toml", workspace=ws, prefix=prefix,
                                      network="host", name=f"ws-{prefix[-8:]}",
                                      disk_cache=False, extra=extra)
        plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path)
        assert cold_reason(plan) is None  # no cold fallback for secrets any more
        spy = ExecSpy(client.api)
        client.api = spy
        proxy1 = f"http://{PROXY_USER}:{PROXY_PASS}@127.0.0.1:{proxy.port}"
        env = kit.consented(plan, {**os.environ, "TFWS_PROXY": proxy1, "TFWS_API_KEY": KEY1})
        try:
            runner, log = _run(client, plan, recipe, tmp_path, env, "1")
            space = runner.workspace
            assert "warm build container" in log and "step build: warm exec" in log
            # ./configure ran in the build's exec, without the rc lines meant for Bazel
            assert f"{CONFIGURE_SAYS} unset" in log and f"{CONFIGURE_SAYS} set" not in log
            # the values did their work: the download went through the proxy (407 without
            # them) and each cache PUT carried the header
            assert any("warm-secret-probe.bin" in r for r in proxy.requests())
            puts = [line for line in cache.access_lines() if '"PUT /' in line]
            assert puts and all(line.endswith(f'"{KEY1}"') for line in puts), puts[:3]
            assert f"HTTP_PROXY={proxy1}" in _server_environ(client, space.container_name)
            _nothing_shows(runner, spy, client, (PROXY_PASS, KEY1))

            # new values (the same proxy by another name, another key) and an edit: the
            # same container, the server restarted once, the new key on the new PUTs
            kernel = next(ws.rglob("*.cc"))
            kernel.write_text(kernel.read_text("utf-8") + "\n// warm secrets edit\n", "utf-8")
            proxy2 = f"http://{PROXY_USER}:{PROXY_PASS}@localhost:{proxy.port}"
            env2 = kit.consented(plan, {**env, "TFWS_PROXY": proxy2, "TFWS_API_KEY": KEY2})
            seen = len(puts)
            runner2, log2 = _run(client, plan, recipe, tmp_path, env2, "2")
            assert "reused" in log2 and RESTART_LINE in log2
            puts2 = [line for line in cache.access_lines() if '"PUT /' in line][seen:]
            assert puts2 and all(line.endswith(f'"{KEY2}"') for line in puts2), puts2[:3]
            server = _server_environ(client, space.container_name)
            assert f"HTTP_PROXY={proxy2}" in server and proxy1 not in server
            assert KEY1 not in server and KEY2 not in server and RC_VAR not in server
            _nothing_shows(runner2, spy, client, (PROXY_PASS, KEY1, KEY2))

            # the same values again: the server is not restarted (it stays warm)
            _runner3, log3 = _run(client, plan, recipe, tmp_path, env2, "3")
            assert "reused" in log3 and RESTART_LINE not in log3
        finally:
            client.api = spy._api
            if space is not None:
                world.remove_workspace(client, space)
            kit.remove_caches(client, prefix)
            client.close()
