"""The `tfwizard` console script, as a person runs it, against the real engine: a second
`tfwizard build` of an unchanged recipe is a warm no-op (the warm container's exec, exit 0,
the same wheel as the first build, a succeeded record of its own). bench/startup.py times
this command against bare Bazel's no-op."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import world

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TFWIZARD = str(Path(sys.executable).parent / "tfwizard")


def _build(recipe: Path, out: Path, env: dict[str, str]) -> tuple[dict, str]:
    """`tfwizard build RECIPE --json`: its result, and the record's log."""
    done = subprocess.run([TFWIZARD, "build", str(recipe), "--out", str(out), "--json"],
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    result = [e for e in events if e.get("type") == "finished"][-1]["result"]
    return result, (Path(result["record_dir"]) / "log.txt").read_text("utf-8")


def _sha(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_a_second_build_of_the_console_script_is_a_warm_noop(tmp_path):
    recipe, prefix, client, space = world.warm_fixture(tmp_path)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    try:
        first, _log = _build(recipe, tmp_path / "out", env)  # makes the warm workspace
        again, log = _build(recipe, tmp_path / "out-again", env)
        assert again["status"] == "succeeded", again
        assert "warm build container" in log and "reused" in log
        assert "step build: warm exec" in log
        assert "configure inputs unchanged" in log, log[-3000:]
        assert _sha(again["wheel"]) == _sha(first["wheel"])  # a no-op: the same wheel
        assert again["record_dir"] != first["record_dir"]
        assert sorted(again) == sorted(first)  # the same record fields
        assert {p.name for p in Path(again["record_dir"]).iterdir()} == \
            {p.name for p in Path(first["record_dir"]).iterdir()}
    finally:
        world.remove_warm(client, space, prefix)
