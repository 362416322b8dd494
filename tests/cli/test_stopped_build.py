"""A build tfwizard stops itself, before any step gives an exit code (here: no Docker
engine answers at DOCKER_HOST), is explained once by tfwizard's own message: the build's
output says it once, not as a live line and again as the result; nothing calls it "not
recognised"; `diagnose ID`, the bundle's diagnosis.txt and the record say the same; the
record keeps the host profiles the build was planned for (host.json, target-host.json)."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

from tfwizard.cli import capture

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "tf221-cpu-portable.toml"
HOSTS = ROOT / "tests" / "data" / "hosts"
NO_ENGINE = "cannot reach the Docker engine"


def stopped_build(tmp_path: Path) -> tuple[str, str, Path]:
    target = sorted(HOSTS.glob("*.json"))[0]
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE.read_text("utf-8").replace(
        "[target]\n", f'[target]\nhost_profile = "{target}"\n', 1)
        if "[target]\n" in RECIPE.read_text("utf-8") else
        RECIPE.read_text("utf-8") + f'\n[target]\nhost_profile = "{target}"\n', "utf-8")
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
           "TFWIZARD_DATA_DIR": str(tmp_path / "data"), "TFWIZARD_LANG": "en"}
    status, out, err = capture(["build", "--force", str(recipe)], env)
    assert int(status) == 1, err
    (record,) = (tmp_path / "data" / "builds").iterdir()
    return out, err, record


def test_a_build_tfwizard_stopped_is_said_once_and_not_called_unrecognised(tmp_path):
    out, err, record = stopped_build(tmp_path)
    assert out.count(NO_ENGINE) == 1, out  # the result, not also the live line
    assert "NOT RECOGNISED" not in out + err
    assert NO_ENGINE in (record / "log.txt").read_text("utf-8")  # the log still has it
    result = json.loads((record / "result.json").read_text("utf-8"))
    assert result["status"] == "error" and result["exit_code"] is None


def test_diagnose_and_the_bundle_say_tfwizard_stopped_it(tmp_path):
    _out, _err, record = stopped_build(tmp_path)
    env = {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data"), "TFWIZARD_LANG": "en"}
    status, out, _ = capture(["diagnose", record.name], env)
    assert int(status) == 0
    assert "tfwizard stopped this build before Bazel ran" in out and NO_ENGINE in out
    assert "NOT RECOGNISED" not in out and "no known failure signature" not in out
    status, out, _ = capture(["diagnose", "--json", record.name], env)
    data = json.loads(out)
    assert NO_ENGINE in data["stopped"] and data["unrecognised"] is None
    archive = tmp_path / "b.tar.gz"
    status, _, err = capture(["bundle", record.name, "--out", str(archive)], env)
    assert int(status) == 0, err
    with tarfile.open(archive) as tar:
        names = {Path(n).name: n for n in tar.getnames()}
        text = tar.extractfile(names["diagnosis.txt"]).read().decode()  # type: ignore[union-attr]
        assert "tfwizard stopped this build before Bazel ran" in text and NO_ENGINE in text
        assert "unrecognised.json" not in names
        # the machine the wheel is for travels with the bundle, not only its path
        assert "target-host.json" in names
        target = json.load(io.BytesIO(
            tar.extractfile(names["target-host.json"]).read()))  # type: ignore[union-attr]
        assert "nvidia" in target


def test_the_record_keeps_the_host_profiles_it_was_planned_for(tmp_path):
    _out, _err, record = stopped_build(tmp_path)
    assert json.loads((record / "host.json").read_text("utf-8"))["os"]
    assert json.loads((record / "target-host.json").read_text("utf-8"))["nvidia"] is not None
