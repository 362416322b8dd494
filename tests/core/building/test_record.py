"""The build record: its folder, its log as lines arrive, atomic writes."""

from __future__ import annotations

import os

from tfwizard.core.building.run.record import BuildRecord, new_build_id, read_log
from tfwizard.core.paths import atomic_write, data_dir


def test_record_is_written_as_lines_arrive(tmp_path):
    build_id = new_build_id()
    record = BuildRecord.create(build_id, root=tmp_path)
    assert record.path == tmp_path / "builds" / build_id
    assert record.read_result()["status"] == "running"
    assert record.append("stdout", ["one", "two"]) == 1
    # flushed per batch: another reader sees it while the record is still open
    assert record.log_path.read_text() == "out | one\nout | two\n"
    assert record.append("stderr", ["three"]) == 3
    assert record.append("tfwizard", ["four"]) == 4
    record.close()
    assert list(read_log(record.log_path)) == [
        ("stdout", "one"), ("stdout", "two"), ("stderr", "three"), ("tfwizard", "four")]


def test_data_dir_and_atomic_write(tmp_path):
    assert data_dir({"TFWIZARD_DATA_DIR": str(tmp_path)}) == tmp_path
    assert "tfwizard" in str(data_dir({}))
    target = tmp_path / "wheel.whl"
    atomic_write(target, b"new")
    atomic_write(target, b"newer")
    assert target.read_bytes() == b"newer"
    assert [p.name for p in tmp_path.iterdir()] == ["wheel.whl"]  # no temporary left
    assert target.stat().st_mode & 0o777 == 0o600  # the data folder's files: the user's only
    umask = os.umask(0o077)
    try:
        atomic_write(target, b"shared", mode=0o644)  # asked for: the umask does not narrow it
    finally:
        os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_new_data_folder_and_its_records_are_the_users_alone(tmp_path):
    """Logs, plans and recipes are nobody else's business on a shared machine: the data
    folder is made 0700, each record folder too, every file in it 0600, whatever the umask."""
    import stat

    umask = os.umask(0o022)
    try:
        data = tmp_path / "new" / "data"
        record = BuildRecord.create("20260101-000000-abcdef", root=data,
                                    files={"plan.json": "{}", "recipe.toml": "x = 1\n",
                                           "result.json": "{}"})
        record.write_result({"status": "succeeded"})
        record.append("stdout", ["a line"])
        record.close()
    finally:
        os.umask(umask)
    for folder in (data.parent, data, data / "builds", record.path):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for name in ("plan.json", "recipe.toml", "result.json", "log.txt"):
        assert stat.S_IMODE((record.path / name).stat().st_mode) == 0o600, name
