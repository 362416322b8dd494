"""Where tfwizard keeps its data, how it writes a file there, and the label its Docker
objects carry: leaves every layer reads (records, caches, detection, leftovers)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

import platformdirs

#: the label on every container, volume and image tfwizard makes (its sub-labels:
#: io.tfwizard.build, .step, .workspace, .volume, ...)
LABEL = "io.tfwizard"

DATA_DIR_ENV = "TFWIZARD_DATA_DIR"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """tfwizard's data folder: $TFWIZARD_DATA_DIR, else the platform's user data dir."""
    env = os.environ if env is None else env
    override = env.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("tfwizard"))


def private_dir(path: Path) -> Path:
    """`path` made (with its parents) and kept 0700: tfwizard's data, records and config
    hold what another user of the machine must not read (logs, plans, the consent list)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):  # mkdir(parents=True) would give the parents 0755
        folder.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def atomic_write(path: Path, data: bytes | str, mode: int = 0o600) -> None:
    """Write to a temporary name beside `path`, then rename over it; the file gets `mode`
    (0600: what tfwizard writes into its data folder is the user's alone)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)  # the umask must not widen or narrow it
            fh.write(raw)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
