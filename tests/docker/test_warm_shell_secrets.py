"""`tfwizard shell` and `tfwizard test` with a recipe that holds ${ENV} secrets (issue 17):
the values go into each exec's environment (core/building/warm/secrets.py, as WarmRunner's
builds), never into the warm container's config, an exec's inspect or the output.

Real servers: a tinyproxy that demands Basic auth (the recipe's http_proxy is
${TFWSH_PROXY}) and an nginx WebDAV cache that logs the x-api-key header
(${TFWSH_API_KEY}) of every PUT. The shell's command prints whether the variable is set
and its length, never its value; `bazel test`'s uploads must carry the key.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.docker import kit
from tests.docker.test_warm_secrets import ExecSpy
from tests.net.servers import NginxServer, TinyProxy
from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.building.warm.secrets import RC_VAR
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PROXY_USER, PROXY_PASS = "tfw", "shell-proxy-pass-4Kd9"
KEY = "shell-key-Wm52-secret"
PASSING = "//tensorflow/core:reduction_ops_test"
#: prints whether HTTP_PROXY is set and its length: never the value
PROBE = 'if [ -n "${HTTP_PROXY+x}" ]; then echo "proxy set ${#HTTP_PROXY}"; ' \
        'else echo "proxy unset"; fi; echo "rc:${TFWIZARD_SECRET_BAZELRC+set}:"'


@pytest.fixture(scope="module")
def sw(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("warm-shell-secrets")
    prefix = f"tfwizard-test-ws-{uuid.uuid4().hex[:8]}"
    client = docker.from_env(timeout=300)
    space = None
    with TinyProxy(basic_auth=(PROXY_USER, PROXY_PASS)) as proxy, \
            NginxServer(base / "cache") as cache:
        extra = ('[network]\nhttp_proxy = "${TFWSH_PROXY}"\n'
                 f'[remote]\ncache = "{cache.url}"\nupload = true\n'
                 'headers = ["x-api-key=${TFWSH_API_KEY}"]\n')
        recipe = world.fixture_recipe(base / "r.toml", workspace=world.copy_workspace(base),
                                      prefix=prefix, network="host", disk_cache=False,
                                      name=f"wsh-{prefix[-8:]}", extra=extra)
        plan = make_plan(load_recipe(recipe), recipe_dir=base)
        space = warm.workspace_for(plan, str(recipe.resolve()))
        proxy_url = f"http://{PROXY_USER}:{PROXY_PASS}@127.0.0.1:{proxy.port}"
        env = kit.consented(plan, {**os.environ, "TFWIZARD_DATA_DIR": str(base / "data"),
                                   "TFWSH_PROXY": proxy_url, "TFWSH_API_KEY": KEY})
        try:
            yield SimpleNamespace(recipe=recipe, env=env, proxy_url=proxy_url, cache=cache,
                                  client=client, space=space)
        finally:
            world.remove_workspace(client, space)
            kit.remove_caches(client, prefix)
            client.close()


@pytest.fixture
def spy(monkeypatch):
    """The ids of the execs the CLI creates (Docker lists an exec only while it runs;
    inspect by id answers for minutes after)."""
    from tfwizard.core.docker import client as dockerutil

    ids: list[str] = []
    connect = dockerutil.connect

    def spied(*args, **kwargs):
        client = connect(*args, **kwargs)
        client.api = ExecSpy(client.api)
        client.api.ids = ids
        return client

    monkeypatch.setattr(dockerutil, "connect", spied)
    return ids


def _nothing_shows(sw, ids: list[str], *texts: str) -> None:
    """The container's config and log, every exec's inspect and `texts` hold no value."""
    box = sw.client.containers.get(sw.space.container_name)
    shown = json.dumps(box.attrs) + box.logs().decode("utf-8", "replace") + "".join(texts)
    inspected = [sw.client.api.exec_inspect(i) for i in ids]
    assert inspected and all(i["ProcessConfig"] for i in inspected)
    shown += json.dumps(inspected)
    for secret in (PROXY_PASS, KEY, sw.proxy_url):
        assert secret not in shown
    assert RC_VAR not in json.dumps(box.attrs["Config"])
    assert not any(e.startswith(("HTTP_PROXY=", "http_proxy=")) for e in box.attrs["Config"]["Env"])


def test_shell_command_sees_the_secret_variable_and_the_container_does_not(sw, spy):
    status, out, err = capture(["shell", str(sw.recipe), "--", "sh", "-c", PROBE], sw.env)
    assert int(status) == 0, out + err
    # the exec's own environment holds the resolved value; no rc lines outside a build
    assert f"proxy set {len(sw.proxy_url)}" in out and "rc::" in out, out + err
    _nothing_shows(sw, spy, out, err)
    # without the value the command says which reference is unset, and runs nothing
    bare = {k: v for k, v in sw.env.items() if k != "TFWSH_PROXY"}
    status, out, err = capture(["shell", str(sw.recipe), "--", "true"], bare)
    assert int(status) != 0 and "TFWSH_PROXY" in err, out + err


def test_test_command_passes_the_secret_header_per_exec(sw, spy):
    seen = len([x for x in sw.cache.access_lines() if '"PUT /' in x])
    status, out, err = capture(["test", "--json", str(sw.recipe), PASSING], sw.env)
    assert int(status) == 0, (out + err)[-4000:]
    run = json.loads(out)
    assert [t["status"] for t in run["tests"]] == ["PASSED"], run["tests"]
    # the uploads of this run carried the header's value: the rc file reached `bazel test`
    puts = [x for x in sw.cache.access_lines() if '"PUT /' in x][seen:]
    assert puts and all(x.endswith(f'"{KEY}"') for x in puts), puts[:3]
    # the record keeps the reference, never the value
    assert "x-api-key=${TFWSH_API_KEY}" in " ".join(run["argv"]), run["argv"]
    record = "".join(p.read_text("utf-8", "replace")
                     for p in Path(run["record_dir"]).rglob("*") if p.is_file())
    _nothing_shows(sw, spy, out, err, record)


def test_interactive_shell_on_a_terminal_sees_the_secret_variable(sw, tmp_path):
    """`tfwizard shell RECIPE` on a pseudo-terminal: bash -l in an exec with a TTY, the
    secret variable resolved in that exec's environment."""
    import pty
    import select
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tfwizard", "shell", str(sw.recipe)],
                            stdin=slave, stdout=slave, stderr=slave, env=sw.env,
                            close_fds=True)
    os.close(slave)
    out, sent = b"", False
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _w, _x = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # the other side closed
                break
            out += data
            # type only once bash prompts: the raw mode switch discards earlier input
            if not sent and out.rstrip().endswith((b"$", b"#")):
                os.write(master, b'echo "len=${#HTTP_PROXY}"; exit\n')
                sent = True
        assert proc.wait(timeout=30) == 0, out[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = out.decode("utf-8", "replace")
    assert sent and f"len={len(sw.proxy_url)}" in text, text[-2000:]
    assert PROXY_PASS not in text
