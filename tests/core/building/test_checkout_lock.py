"""The source-folder lock (core/building/run/checkout.py): one holder per real path,
across processes, and the holder's build id for the waiting build's message."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tfwizard.core.building.run.checkout import CheckoutLock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")


def test_one_holder_per_real_path_and_the_holder_is_named(tmp_path):
    src = tmp_path / "tf"
    src.mkdir()
    (tmp_path / "link").symlink_to(src)
    data = tmp_path / "data"
    a = CheckoutLock(str(src), data, "20261128-000000-aaaaaa")
    b = CheckoutLock(str(tmp_path / "link"), data, "20261128-000001-bbbbbb")
    other = CheckoutLock(str(tmp_path), data, "20261128-000002-cccccc")
    assert a.take() is None and a.held
    assert b.take() == "20261128-000000-aaaaaa" and not b.held  # the same folder by a link
    assert other.take() is None  # another folder
    a.release()
    assert b.take() is None and b.held
    assert os.stat(a.path.parent).st_mode & 0o077 == 0  # in the private data folder
    b.release()
    other.release()


def test_a_holder_in_another_process_is_seen_and_its_exit_frees_the_folder(tmp_path):
    src = tmp_path / "tf"
    src.mkdir()
    data = tmp_path / "data"
    code = ("import sys,time; from pathlib import Path;"
            "from tfwizard.core.building.run.checkout import CheckoutLock;"
            f"lock = CheckoutLock({str(src)!r}, Path({str(data)!r}), 'other-build');"
            "assert lock.take() is None; print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        mine = CheckoutLock(str(src), data, "mine")
        assert mine.take() == "other-build"
        proc.kill()  # a crashed front end: the kernel releases its lock
        proc.wait()
        assert mine.take() is None
        mine.release()
    finally:
        proc.kill()
        proc.wait()
