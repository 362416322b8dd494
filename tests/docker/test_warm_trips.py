"""Issue 17's no-op bar, the engine side: a warm `tfwizard build` no-op asks the engine only
what it must (a ping once per process, whose header gives the API version; the build image
for the preflight; the warm container by its name; the exec's create, start and exit),
hashes no unchanged wheel again, and still delivers this build's wheel and a complete
record."""

from __future__ import annotations

import json
import os
import uuid

import pytest
import requests

from tests import world
from tfwizard.cli import capture
from tfwizard.cli.context import ExitStatus
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.building.warm import wheelsums
from tfwizard.core.docker import shared as sharedclient
from tfwizard.core.paths import LABEL
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker]


def _record(out: str):
    from pathlib import Path

    line = next(x for x in out.splitlines()[::-1] if x.startswith("Record: "))
    return Path(line.split()[1])


def test_a_warm_noop_build_makes_six_engine_round_trips(tmp_path, monkeypatch):
    world.require_docker()
    world.ensure_images()
    import docker

    workspace = world.copy_workspace(tmp_path)
    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=workspace, prefix=prefix)
    data = tmp_path / "data"
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(data)}
    argv = ["build", str(recipe), "--out", str(tmp_path / "out")]
    client = docker.from_env(timeout=300)
    space = warm.workspace_for(make_plan(load_recipe(recipe), recipe_dir=recipe.parent),
                               str(recipe.resolve()))
    try:
        status, out, err = capture(argv, env)  # makes the warm container
        assert status == ExitStatus.OK, out + err
        first = json.loads((_record(out) / "result.json").read_text())
        sums = json.loads((data / wheelsums.FILE).read_text())
        assert first["wheel"] in sums  # written by this build: its sha256 kept

        sharedclient.forget()  # as a new process: it connects once
        trips: list[str] = []
        send = requests.Session.send

        def counted(session, request, **kw):
            trips.append(f"{request.method} {request.path_url.split('?')[0]}")
            return send(session, request, **kw)

        monkeypatch.setattr(requests.Session, "send", counted)
        status, out, err = capture(argv, env)
        monkeypatch.undo()
        assert status == ExitStatus.OK, out + err
        assert "reused" in out + err
        paths = [t.split("/", 2)[-1] for t in trips]
        assert len(trips) == 6, trips
        assert trips[0] == "GET /_ping"  # the API version from its header, no /version
        assert paths[1].startswith("images/") and paths[2] == \
            f"containers/{space.container_name}/json", trips
        assert [t.split()[0] for t in trips[3:]] == ["POST", "POST", "GET"], trips
        assert not any("/version" in t or "containers/json" in t for t in trips), trips

        record = _record(out)
        again = json.loads((record / "result.json").read_text())
        assert again["status"] == "succeeded" and again["wheel"] == first["wheel"]
        assert sorted(p.name for p in record.iterdir() if not p.name.startswith(".")) == [
            "bep.json", "host.json", "log.txt", "plan.json", "recipe.toml", "result.json",
            "wheel-check.json"]
        assert json.loads((record / "plan.json").read_text())["release"] == "2.21.0"
        assert not [p for p in (data / "builds").iterdir() if p.name.endswith(".tmp")]
    finally:
        monkeypatch.undo()
        world.remove_workspace(client, space)
        for vol in client.volumes.list(filters={"label": LABEL}):
            if vol.name.startswith(prefix):
                vol.remove(force=True)
        client.close()
