"""This machine's HostProfile for `tfwizard build`, kept a short while (issue 17: a warm
rebuild loop does not detect the host again every few seconds, ~60-100 ms each time).

    host = cached_host(env)              # detect_host(env=env), or the one kept

The profile is kept in the data folder (`host-cache.json`) with its key: the boot id
(/proc/sys/kernel/random/boot_id: a reboot, a new driver or GPU, starts again), the user,
and the sha256 of the environment detection was given (DOCKER_HOST, PATH,
CUDA_VISIBLE_DEVICES...). It is used for TTL_S seconds after it was detected, never
longer; without a boot id (not Linux) nothing is cached, and a profile whose Docker did not
answer is not kept (the gate would refuse builds after the engine came back).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ..errors import TfWizardError
from ..host import HostProfile
from .record import atomic_write, data_dir

#: how long a detected profile is used again, in seconds
TTL_S = 120
#: the file under tfwizard's data folder
FILE = "host-cache.json"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def host_key(env: Mapping[str, str], boot_id: str) -> str:
    """The cache key: the boot, the user and the environment detection reads."""
    data = json.dumps([boot_id, os.getuid() if hasattr(os, "getuid") else "",
                       sorted(env.items())])
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _boot_id(path: Path) -> str | None:
    try:
        return path.read_text("ascii").strip() or None
    except OSError:
        return None


def cached_host(env: Mapping[str, str], detect: Callable[[], HostProfile] | None = None, *,
                now: float | None = None, boot_id_path: Path = BOOT_ID) -> HostProfile:
    """`detect()` (default: detect_host(env=env)), or the profile it gave less than TTL_S
    seconds ago in this boot, for this user and environment."""
    if detect is None:
        from ..detect import detect_host

        def detect() -> HostProfile:
            return detect_host(env=env)

    boot = _boot_id(boot_id_path)
    if boot is None:
        return detect()
    now = time.time() if now is None else now
    key, path = host_key(env, boot), data_dir(env) / FILE
    try:
        kept = json.loads(path.read_text("utf-8"))
        if kept["key"] == key and 0 <= now - float(kept["at"]) < TTL_S:
            return HostProfile.from_dict(kept["profile"])
    except (OSError, ValueError, KeyError, TypeError, TfWizardError):
        pass  # none kept, another key, or a file that is not ours: detect
    found = detect()
    if found.docker.status != "ok":
        return found
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"key": key, "at": now, "profile": found.to_dict()}))
    except OSError:
        pass  # a read-only data folder: detect again next time
    return found
