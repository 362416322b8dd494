"""Ordinary file-system failures are explained, never "internal error": a read-only
folder, a name too long, a full disk (a real tmpfs in a mount namespace of its own: a
read-only one, a full one), with --json an error event on standard output; a recipe path
that is not a regular file is refused at once; `recipe set` edits through a symlink and
keeps a hard link one file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tfwizard.cli import capture

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "tf221-cpu-portable.toml"


def in_tmpfs(mnt: Path, setup: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`tfwizard ARGV` in a mount namespace where `mnt` is a 64 KiB tmpfs prepared by the
    shell lines `setup` (they may fill it or remount it read-only)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare for a tmpfs of its own")
    script = (f'mount -t tmpfs -o size=64k tfwt-errors "$0" && cd "$0" && {setup} && '
              'shift && exec "$@"')
    return subprocess.run(["unshare", "-m", "sh", "-c", script, str(mnt), "-",
                           sys.executable, "-m", "tfwizard", *argv],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TFWIZARD_LANG": "en"})


def test_a_read_only_folder_names_the_path_and_the_fix(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    got = in_tmpfs(mnt, "mount -o remount,ro \"$0\"", ["recipe", "new", str(mnt / "new.toml")])
    assert got.returncode == 2, got.stderr
    assert f"cannot use {mnt / 'new.toml'}: the file system is read-only" in got.stderr
    assert "internal error" not in got.stderr and ".tmp" not in got.stderr


def test_a_full_disk_names_the_path_and_keeps_the_recipe(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    setup = (f'cp {RECIPE} r.toml && (dd if=/dev/zero of=fill bs=1k count=100 2>/dev/null; '
             'true)')
    got = in_tmpfs(mnt, setup, ["recipe", "set", str(mnt / "r.toml"), "build.jobs=4"])
    assert got.returncode == 2, got.stderr
    assert "no space is left on its disk" in got.stderr and "internal error" not in got.stderr


def test_a_name_too_long_is_explained_with_a_json_event(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(RECIPE.read_text().replace(
        "[tensorflow]\n", f'[tensorflow]\nsource_dir = "/tmp/{"x" * 300}"\n', 1))
    status, out, err = capture(["check", "--json", str(path)])
    assert int(status) == 2 and "internal error" not in err
    assert "too long" in err
    event = json.loads(out.strip().splitlines()[-1])
    assert event["type"] == "error" and event["errno"] == "ENAMETOOLONG"
    assert event["path"].startswith("/tmp/xxx")


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_recipe_that_is_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "r.toml"
    if kind == "device":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    done: list = []
    worker = threading.Thread(target=lambda: done.append(capture(["check", str(path)])),
                              daemon=True)
    worker.start()
    worker.join(20)  # /dev/zero never ends and a FIFO waits for a writer: refused first
    assert done, "check did not return"
    status, _out, err = done[0]
    assert int(status) == 2 and "is not a regular file" in err


def test_recipe_set_edits_through_a_symlink_and_keeps_mode_and_hard_links(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    shared = real / "shared.toml"
    shared.write_text(RECIPE.read_text())
    shared.chmod(0o644)
    link = tmp_path / "link.toml"
    link.symlink_to(shared)
    status, _out, err = capture(["recipe", "set", str(link), "build.jobs=4"])
    assert int(status) == 0, err
    assert link.is_symlink() and "jobs = 4" in shared.read_text()
    assert shared.stat().st_mode & 0o777 == 0o644
    bak = tmp_path / "link.toml.bak"
    assert not bak.is_symlink() and "jobs = 4" not in bak.read_text()
    hard = tmp_path / "hard.toml"
    os.link(shared, hard)
    status, _out, err = capture(["recipe", "set", str(hard), "build.jobs=3"])
    assert int(status) == 0, err
    assert os.path.samefile(hard, shared) and "jobs = 3" in shared.read_text()
