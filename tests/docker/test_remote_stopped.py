"""A remote execution service that dies mid-build, through the product (issue 21).

`tfwizard build --fresh` runs a recipe with `remote.executor` against the BuildGrid test
service (tests/reapi); once the worker has run two of the build's compiles, the server is
killed. Without `remote.local_fallback` the build fails and its record and result.json
name a diagnosis from resources/knowledge/failures.toml that says what to fix; with it
(and `remote.retries = 0`) the build finishes here, and the record's counts say so.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import world
from tfwizard.cli import ExitStatus, capture

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: the diagnoses that name a remote service gone mid-build (failures.toml)
REMOTE_GONE = {"remote-unavailable"}


def _recipe(tmp_path: Path, reapi, token: str, fallback: bool) -> Path:
    extra = (f'[remote]\nexecutor = "{reapi.endpoint}"\n'
             f'instance_name = "{reapi.instance_name}"\n')
    if fallback:
        # Bazel's default retries (5, with backoff) cost every later action seconds before
        # it falls back (tests/reapi/README.md)
        extra += "local_fallback = true\nretries = 0\n"
    return world.fixture_recipe(
        tmp_path / "r.toml", workspace=world.copy_workspace(tmp_path / "ws"),
        prefix=f"tfwizard-test-rxs-{token}", network="host",
        bazel_flags=[f"--copt=-DTFW_REAPI_RUN={token}"], extra=extra)


def _compiles(reapi, mark: int, token: str) -> int:
    return sum(f"-DTFW_REAPI_RUN={token}" in a.get("argv", []) for a in reapi.actions(mark))


def _build_and_stop(reapi, tmp_path: Path, fallback: bool) -> SimpleNamespace:
    """The product's build in a thread; the server killed after two remote compiles."""
    world.ensure_images()
    token = uuid.uuid4().hex[:8]  # new action keys: the compiles run remotely, not from cache
    recipe = _recipe(tmp_path, reapi, token, fallback)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    mark = reapi.mark()
    out: dict[str, tuple[ExitStatus, str, str]] = {}
    build = threading.Thread(target=lambda: out.setdefault("res", capture(
        ["build", str(recipe), "--fresh", "--out", str(tmp_path / "out")], env_vars=env)))
    t0 = time.monotonic()
    build.start()
    try:
        deadline = time.monotonic() + 300
        while (_compiles(reapi, mark, token) < 2 and build.is_alive()
               and time.monotonic() < deadline):
            time.sleep(0.2)
        assert build.is_alive(), "the build ended before the server could be stopped"
        assert _compiles(reapi, mark, token) >= 2, "no remote compile in 300 s"
        reapi.stop_server(kill=True)
        stopped_s = time.monotonic() - t0
        build.join(900)
        assert not build.is_alive(), "the build did not end within 15 minutes"
    finally:
        reapi.ensure_running()
        world.remove_prefixed(f"tfwizard-test-rxs-{token}")
    status, stdout, stderr = out["res"]
    record = Path(next(line for line in stdout.splitlines()
                       if line.startswith("Record: ")).split()[1])
    return SimpleNamespace(status=status, out=stdout, err=stderr, record=record,
                           result=json.loads((record / "result.json").read_text()),
                           log=(record / "log.txt").read_text(errors="replace"),
                           stopped_s=stopped_s, wall=time.monotonic() - t0)


def test_without_fallback_the_build_fails_with_a_diagnosis_that_names_the_service(
        reapi, tmp_path):
    res = _build_and_stop(reapi, tmp_path, fallback=False)
    assert res.status != ExitStatus.OK, res.out[-3000:]
    assert res.result["status"] == "failed", res.result
    found = set(res.result["findings"])
    assert found & REMOTE_GONE, (found, res.log[-5000:])
    # the record's log carries the diagnosis block, the summary names the fix
    assert "remote.local_fallback" in res.log and "remote.executor" in res.log
    assert "remote.local_fallback" in res.out + res.err, res.out[-3000:]
    print(f"stopped after {res.stopped_s:.0f} s, failed after {res.wall:.0f} s: {found}")


def test_with_local_fallback_the_build_finishes_here(reapi, tmp_path):
    res = _build_and_stop(reapi, tmp_path, fallback=True)
    assert res.status == ExitStatus.OK, res.out[-3000:] + res.err
    cache = res.result["cache"]
    assert cache["ran_here"] > 0, cache  # from Bazel's own `processes:` line
    plan = json.loads((res.record / "plan.json").read_text())
    flags = [f["flag"] for f in plan["bazel_flags"]]
    assert "--remote_local_fallback" in flags and "--remote_retries=0" in flags
    assert res.result["wheel"], res.result
    print(f"stopped after {res.stopped_s:.0f} s, finished after {res.wall:.0f} s: {cache}")
