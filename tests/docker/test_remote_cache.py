"""Bazel's HTTP remote cache against a real server: nginx with WebDAV PUT on loopback.

One fixture build fills the cache (remote.upload = true, no local disk cache), a second
build in fresh containers (a fresh output root, no disk cache) reads every compile back from
it; a read-only build (remote.upload = false) against an empty cache writes nothing.

The build containers use the host's network (build.network = "host") to reach 127.0.0.1:
nginx listens on loopback only (a rule of this workplace), and loopback is reachable from a
container only in the host's network namespace. A bridge would need nginx to listen on the
docker0 address and the container to be given that gateway address instead.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tests.net.servers import Http10Cache, NginxServer
from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe
from tfwizard.core.rules import evaluate

pytestmark = [pytest.mark.docker, pytest.mark.slow]

_PROCESSES = re.compile(r"^INFO: (\d+) processes: (.*)$")


def _recipe(path: Path, *, workspace: Path, prefix: str, cache_url: str, upload: bool) -> Path:
    remote = f'[remote]\ncache = "{cache_url}"\nupload = {"true" if upload else "false"}\n'
    return world.fixture_recipe(path, workspace=workspace, prefix=prefix,
                                name=f"remote-cache-{prefix[-8:]}", network="host",
                                disk_cache=False, extra=remote)


def _build(recipe: Path, data: Path, out: Path) -> SimpleNamespace:
    status, stdout, stderr = capture(
        ["build", "--fresh", str(recipe), "--out", str(out), "--json"],
        env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(data)})
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    finished = [e for e in events if e["type"] == "finished"]
    lines = [e["line"] for e in events if e["type"] == "log"]
    processes = [m.groups() for m in map(_PROCESSES.match, lines) if m]
    return SimpleNamespace(status=status, stderr=stderr, tail=stdout[-3000:], lines=lines,
                           result=finished[-1]["result"] if finished else None,
                           processes=processes)


def _hits(processes: list[tuple[str, str]]) -> int:
    m = re.search(r"(\d+) remote cache hit", processes[-1][1]) if processes else None
    return int(m.group(1)) if m else 0


@pytest.fixture(scope="module")
def rc(tmp_path_factory):
    world.require_docker()
    world.ensure_images()
    import docker

    base = tmp_path_factory.mktemp("remote-cache")
    ns = SimpleNamespace(base=base, workspace=world.copy_workspace(base),
                         prefix=f"tfwizard-test-rc-{uuid.uuid4().hex[:8]}", data=base / "data",
                         client=docker.from_env(timeout=120))
    yield ns
    for vol in ns.client.volumes.list(filters={"label": f"{LABEL}.recipe"}):
        if vol.name.startswith(ns.prefix):
            vol.remove(force=True)
    ns.client.close()


def test_recipe_and_plan_for_the_loopback_cache(rc):
    recipe = load_recipe(_recipe(rc.base / "plan.toml", workspace=rc.workspace,
                                 prefix=rc.prefix, cache_url="http://127.0.0.1:9/",
                                 upload=True))
    plan = make_plan(recipe)
    assert "--remote_cache=http://127.0.0.1:9/" in plan.flag_list
    assert "--remote_upload_local_results=true" in plan.flag_list
    assert not any(f.startswith("--disk_cache") for f in plan.flag_list)
    assert plan.network_mode == "host"
    found = {f.code: f for f in evaluate(recipe)}
    host_net = found["HOST_NETWORK_EXPOSES_HOST"]
    assert host_net.severity == "warning" and host_net.fix is None  # needed for 127.0.0.1
    assert "LOOPBACK_NOT_REACHABLE" not in found
    bridged = recipe.with_changes({"build.network": "bridge"})
    assert evaluate(bridged) and "LOOPBACK_NOT_REACHABLE" in {f.code for f in evaluate(bridged)}


def test_upload_then_a_fresh_container_reads_the_http_cache(rc, tmp_path):
    with NginxServer(tmp_path) as nginx:
        recipe = _recipe(tmp_path / "fill.toml", workspace=rc.workspace, prefix=rc.prefix,
                         cache_url=nginx.url, upload=True)
        first = _build(recipe, rc.data, tmp_path / "out1")
        assert first.status == ExitStatus.OK, first.stderr + first.tail
        assert first.result["status"] == "succeeded"
        assert _hits(first.processes) == 0, first.processes
        ac, cas = nginx.stored("ac"), nginx.stored("cas")
        assert ac and cas, os.listdir(nginx.root)
        puts = [line for line in nginx.access_lines() if '"PUT /' in line]
        assert len(puts) >= len(ac) + len(cas) - 1

        second = _build(recipe, rc.data, tmp_path / "out2")
        assert second.status == ExitStatus.OK, second.stderr + second.tail
        assert second.result["build_id"] != first.result["build_id"]
        hits = _hits(second.processes)
        assert hits > 0 and second.result["cache_hits"] == hits, second.processes
        # the summary every build ends with (issue 15 item 10): from the remote cache
        cache = second.result["cache"]
        assert cache["remote_cache_hits"] == hits and cache["disk_cache_hits"] == 0, cache
        assert cache["ran_here"] == int(second.processes[-1][0]) - hits - cache["internal"]
        assert first.result["cache"]["remote_cache_hits"] == 0
        assert first.result["cache"]["ran_here"] > 0
        gets = [line for line in nginx.access_lines() if '"GET /ac/' in line and '" 200 ' in line]
        assert len(gets) >= hits
        print(f"fill: {first.processes[-1]}; read: {second.processes[-1]}; "
              f"stored ac={len(ac)} cas={len(cas)}; PUTs={len(puts)}; AC hits={len(gets)}")
        assert Path(second.result["wheel"]).is_file()


def test_read_only_cache_is_never_written(rc, tmp_path):
    with NginxServer(tmp_path) as nginx:
        recipe = _recipe(tmp_path / "ro.toml", workspace=rc.workspace, prefix=rc.prefix,
                         cache_url=nginx.url, upload=False)
        run = _build(recipe, rc.data, tmp_path / "out")
        assert run.status == ExitStatus.OK, run.stderr + run.tail
        assert _hits(run.processes) == 0
        assert nginx.stored("ac") == [] and nginx.stored("cas") == []
        log = nginx.access_lines()
        assert log, "Bazel never asked the cache"
        assert not any('"PUT /' in line for line in log), log[:5]
        print(f"read-only: {run.processes[-1]}; {len(log)} requests, all GET/HEAD")


def test_a_cache_answering_http_1_0_is_a_warning_with_the_servers_words(rc, tmp_path):
    """Issue 15 item 10: Bazel refuses the hits of a server that answers HTTP/1.0, warns
    ("WARNING: Reading from Remote Cache:" / "HTTP version 1.1 is required, was: HTTP/1.0")
    and silently builds everything itself. tfwizard says so: a warning diagnosis with
    those words and the fix, and the cache summary shows nothing came from the cache."""
    with Http10Cache(tmp_path / "store") as cache:
        recipe = _recipe(tmp_path / "h10.toml", workspace=rc.workspace, prefix=rc.prefix,
                         cache_url=cache.url, upload=True)
        fill = _build(recipe, rc.data, tmp_path / "out1")  # PUTs work; every GET is a 404
        assert fill.status == ExitStatus.OK, fill.stderr + fill.tail
        assert any(r.startswith("PUT /ac/") for r in cache.requests)
        status, out, err = capture(["build", "--fresh", str(recipe), "--out", str(tmp_path / "out2")],
                                   env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(rc.data)})
    assert status == ExitStatus.OK, err + out[-3000:]  # the build itself succeeds
    assert any(r.startswith("GET /ac/") and r.endswith(" 200") for r in cache.requests)
    assert "WARNING remote-cache-unusable:" in out, out[-3000:]
    assert "> HTTP version 1.1 is required, was: HTTP/1.0" in out
    assert "remote.upload = false" in out  # the fix
    summary = next(line for line in out.splitlines() if line.startswith("Actions: "))
    assert "0 from the remote cache" in summary and " 0 ran here" not in summary, summary
    record = Path(next(line for line in out.splitlines()
                       if line.startswith("Record: ")).split()[1])
    result = json.loads((record / "result.json").read_text())
    assert result["status"] == "succeeded" and "remote-cache-unusable" in result["findings"]
    assert result["cache"]["remote_cache_hits"] == 0 and result["cache"]["ran_here"] > 0
    print(f"HTTP/1.0 cache: {summary}")
