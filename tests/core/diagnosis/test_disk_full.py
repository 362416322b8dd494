"""The disk-full diagnosis names the disk its line's path is on: this machine's (the record,
the wheel's folder, a bind-mounted source) or Docker's data root.

The container lines were printed by busybox in tfwizard-test/busybox on Docker 20.10.24,
writing into a 64 KiB tmpfs at /root/.cache and into a full host folder bind-mounted at
/src; the host line is tfwizard's own message for a wheel copy that hit ENOSPC."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.diagnosis.build import diagnose_file
from tfwizard.core.docker.client import output_error
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / "tests" / "data" / "real-logs" / "build" / "disk-full-no-space-gcc-tf10.log"


def _record(tmp_path: Path, line: str, out_dir: Path) -> Path:
    """A build record folder whose log ends in `line`, planned with a bind-mounted source."""
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml").with_changes(
        {"tensorflow.source_dir": str(tmp_path / "ws")})
    record = tmp_path / "data" / "builds" / "20260101-000000-abcdef"
    record.mkdir(parents=True)
    (record / "plan.json").write_text(make_plan(recipe).to_json())
    (record / "result.json").write_text(json.dumps(
        {"status": "failed", "exit_code": 1, "out_dir": str(out_dir)}))
    (record / "log.txt").write_text("tfw | step build: bazel build //tensorflow/...\n"
                                    f"out | {line}\n")
    return record


def _disk_full(record: Path):
    found = [d for d in diagnose_file(record) if d.id == "disk-full"]
    assert len(found) == 1
    return found[0]


def test_a_full_disk_in_the_container_is_dockers(tmp_path, monkeypatch):
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    d = _disk_full(_record(tmp_path, "dd: error writing '/root/.cache/bazel/x': "
                                     "No space left on device", tmp_path / "out"))
    assert "/root/.cache/bazel/x is inside the build container" in d.cause
    assert "Docker's data root" in d.cause and "docker system df" in d.next_step


def test_a_full_bind_mounted_source_is_this_machines_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    d = _disk_full(_record(tmp_path, "dd: error writing '/src/fill2': No space left on device",
                           tmp_path / "out"))
    assert f"holds {tmp_path / 'ws'} is full" in d.cause
    assert "it is not Docker's data root" in d.cause
    assert f"df -h {tmp_path / 'ws'}" in d.next_step


def test_a_full_wheel_folder_is_this_machines_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "out"
    error = output_error(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), out / "t.whl")
    d = _disk_full(_record(tmp_path, f"tfwizard: {error.message}", out))
    assert f"holds {out} is full" in d.cause and "docker system df" not in d.next_step


def test_a_line_without_a_path_keeps_the_catalogues_words(tmp_path, monkeypatch):
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    record = _record(tmp_path, "x", tmp_path / "out")
    (record / "log.txt").write_text(REAL.read_text())
    d = _disk_full(record)
    assert "usually /var/lib/docker" in d.cause and "inside the build container" not in d.cause
