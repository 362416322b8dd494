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


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write to a temporary name beside `path`, then rename over it."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    # "x" mode with a random name instead of mkstemp: the file gets the umask's mode
    # (0644 usually), as any file the user writes, not mkstemp's 0600
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        with tmp.open("xb") as fh:
            fh.write(raw)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
