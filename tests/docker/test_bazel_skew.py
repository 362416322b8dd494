"""A source that asks for a Bazel the build image does not have, built for real: the
failure's diagnosis names both versions, from the source's .bazelversion and from the
image itself (asked after the failure), and the record keeps what the image said, so
`tfwizard diagnose` on the record says the same.

The image's `bazel` is Debian's wrapper around bazel-bootstrap 4.2.3 ("bazel no_version":
only its package names the release); given a .bazelversion of 7.4.1 it refuses to run
with its own words, as a user's own image with a distribution's Bazel would.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import world
from tests.docker import kit
from tfwizard.cli import capture
from tfwizard.core.diagnosis.bazelskew import SKEW

pytestmark = pytest.mark.docker

FACT = ("the source's .bazelversion asks for Bazel 7.4.1; Bazel 4.2.3 ran (the image's "
        "bazel-bootstrap package)")


@pytest.fixture(scope="module")
def skw(tmp_path_factory):
    yield from kit.docker_world(tmp_path_factory, "bazelskew")


def test_a_bazel_the_source_does_not_ask_for(skw, tmp_path):
    ws = world.copy_workspace(tmp_path)
    (ws / ".bazelversion").write_text("7.4.1\n")
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=ws, prefix=skw.prefix)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(skw.base / "data")}
    status, out, err = capture(["build", str(recipe), "--out", str(tmp_path / "out"),
                                "--json", "--force", "--fresh"], env_vars=env)
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    done = [e for e in events if e.get("type") == "finished"][-1]["result"]
    skw.builds.append(done["build_id"])
    assert status != 0 and done["status"] == "failed", out[-3000:] + err
    found = [e for e in events if e.get("type") == "finding"]
    assert found and found[0]["id"] == SKEW, found
    excerpt = found[0]["excerpt"]
    assert excerpt[0] == FACT, excerpt
    # the log's own words follow: the wrapper's refusal
    assert any("requires Bazel 7.4.1" in line for line in excerpt[1:]), excerpt
    record = Path(done["record_dir"])
    log = (record / "log.txt").read_text()
    assert "tfw | the build image's Bazel: 4.2.3 (image-package)" in log
    assert kit.leftovers(skw.client, done["build_id"]) == []
    # the record alone says the same, without the image
    status, out, err = capture(["diagnose", str(record), "--json"], env_vars=env)
    said = json.loads(out)
    first = said["diagnoses"][0]
    assert (first["id"], first["excerpt"][0]) == (SKEW, FACT), out
