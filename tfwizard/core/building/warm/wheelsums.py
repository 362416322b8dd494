"""The sha256 of wheels in output folders, kept with the file's stat (a no-op warm
rebuild compares the wheel already in the output folder with this build's; hashing a
TensorFlow wheel of several hundred MB again on every no-op costs about a second).

    if same_wheel(kept, want, sums=data_dir / FILE): ...   # no copy: these very bytes
    remember(path, sha256, sums=...)                        # after writing a wheel

Keyed by the file's absolute path; an entry holds, beside the sha256, the stat the file
had when it was hashed or written: size, mtime and ctime in nanoseconds, inode and device.
Any write to the file (or a new file of that name) changes that stat, and the file is
hashed again. Only the newest MAX_ENTRIES paths are kept; a file that cannot be read or
written is no error: the wheel is then hashed every time, as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...paths import atomic_write, private_dir
from .bep import file_sha256, same_file

#: the file under tfwizard's data folder
FILE = "wheel-sums.json"
MAX_ENTRIES = 64


def stamp(path: Path) -> list[int] | None:
    """What changes when the file is written or replaced; None when it is not there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _load(sums: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(sums.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def known_sha256(path: Path, sums: Path) -> str | None:
    """The kept sha256 of `path` when its stat is the one it was kept with, else None."""
    entry = _load(sums).get(str(path.absolute()))
    if not isinstance(entry, dict) or entry.get("stat") != stamp(path):
        return None
    sha = entry.get("sha256")
    return sha if isinstance(sha, str) and len(sha) == 64 else None


def remember(path: Path, sha256: str, sums: Path) -> None:
    """Keep `sha256` for `path` as it is now (call it right after hashing or writing it)."""
    now = stamp(path)
    if now is None:
        return
    data = _load(sums)
    key = str(path.absolute())
    data.pop(key, None)
    data[key] = {"stat": now, "sha256": sha256}
    while len(data) > MAX_ENTRIES:
        data.pop(next(iter(data)))
    try:
        private_dir(sums.parent)
        atomic_write(sums, json.dumps(data))
    except OSError:
        pass  # a read-only data folder: hash again next time


def same_wheel(local: Path, want: str | None, sums: Path | None) -> bool:
    """Whether `local` exists with sha256 `want`; hashed only when its stat changed since
    it was last hashed or written (`sums`: the kept sums; None: always hashed)."""
    if sums is None or not want or not local.is_file():
        return same_file(local, want)
    known = known_sha256(local, sums)
    if known is not None:
        return known == want
    got = file_sha256(local)
    if got is not None:
        remember(local, got, sums)
    return got == want
