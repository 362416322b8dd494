"""wheelsums.py: a wheel in the output folder is hashed again only when its stat changed."""

from __future__ import annotations

import hashlib
import json
import os

from tfwizard.core.building.warm.wheelsums import known_sha256, remember, same_wheel


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_an_unchanged_wheel_is_not_hashed_again(tmp_path):
    wheel, sums = tmp_path / "tf.whl", tmp_path / "data" / "wheel-sums.json"
    wheel.write_bytes(b"first")
    assert same_wheel(wheel, _sha(b"first"), sums)  # hashed, and kept
    assert known_sha256(wheel, sums) == _sha(b"first")
    # the kept sum is what is compared while the stat is the same: a sum kept wrongly on
    # purpose shows that the file was not read again
    data = json.loads(sums.read_text())
    data[str(wheel.absolute())]["sha256"] = _sha(b"other")
    sums.write_text(json.dumps(data))
    assert same_wheel(wheel, _sha(b"other"), sums)
    assert not same_wheel(wheel, _sha(b"first"), sums)


def test_a_rewritten_wheel_of_the_same_size_is_hashed_again(tmp_path):
    wheel, sums = tmp_path / "tf.whl", tmp_path / "wheel-sums.json"
    wheel.write_bytes(b"aaaa")
    remember(wheel, _sha(b"aaaa"), sums)
    st = wheel.stat()
    wheel.write_bytes(b"bbbb")  # same size; even with the old mtime put back
    os.utime(wheel, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert known_sha256(wheel, sums) is None  # the ctime moved
    assert not same_wheel(wheel, _sha(b"aaaa"), sums)
    assert same_wheel(wheel, _sha(b"bbbb"), sums)
    # a new file renamed over it (as copy_wheel writes one) is another inode
    new = tmp_path / "new.whl"
    new.write_bytes(b"bbbb")
    new.replace(wheel)
    assert known_sha256(wheel, sums) is None


def test_no_sums_or_an_unreadable_store_hashes_every_time(tmp_path):
    wheel = tmp_path / "tf.whl"
    wheel.write_bytes(b"x")
    assert same_wheel(wheel, _sha(b"x"), None)
    bad = tmp_path / "wheel-sums.json"
    bad.write_text("not json")
    assert same_wheel(wheel, _sha(b"x"), bad)
    assert not same_wheel(tmp_path / "missing.whl", _sha(b"x"), bad)
    assert not same_wheel(wheel, None, bad)
