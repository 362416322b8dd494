"""This machine's HostProfile for `tfwizard build`, kept a short while (a warm
rebuild loop does not detect the host again every few seconds, ~60-100 ms each time).

    host = cached_host(env)              # detect_host(env=env), or the one kept

The profile is kept in the data folder (`host-cache.json`) with its key: the boot id
(/proc/sys/kernel/random/boot_id: a reboot, a new driver or GPU, starts again), the user,
and the sha256 of the variables detection reads (KEY_VARS, KEY_PREFIXES: DOCKER_HOST, PATH,
CUDA_VISIBLE_DEVICES, the locale...; a shell's OLDPWD or SHLVL is not one of them, so it
never costs a detection). It is used for TTL_S seconds after it was detected, never
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
from ..paths import atomic_write, data_dir, private_dir

#: how long a detected profile is used again, in seconds
TTL_S = 120
#: the file under tfwizard's data folder
FILE = "host-cache.json"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


#: the variables core/detect reads, itself or through what it runs: env.get in core/detect
#: (tests/core/detect/test_hostcache.py checks each of those is here), the docker client's
#: (docker.from_env, requests' proxies), the data folder's (the disk probe), the language
#: of the messages, and what shapes the programs detection runs (nvidia-smi, rocminfo,
#: pythons: PATH, the loader's path, HOME)
KEY_VARS = frozenset({
    "PATH", "HOME", "USER", "LD_LIBRARY_PATH", "LD_PRELOAD", "WSL_DISTRO_NAME",
    "TFWIZARD_DATA_DIR", "TFWIZARD_LANG", "LANG", "LANGUAGE",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
})
#: whole families of variables detection reads (or the GPU and Docker tools it runs do)
KEY_PREFIXES = ("DOCKER_", "CUDA_", "NVIDIA_", "HIP_", "ROCR_", "ROCM_", "HSA_", "GPU_",
                "XDG_", "LC_", "PYTHON")


def key_env(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The part of ENV that can change what detection finds, sorted."""
    return sorted((name, value) for name, value in env.items()
                  if name in KEY_VARS or name.startswith(KEY_PREFIXES))


def host_key(env: Mapping[str, str], boot_id: str) -> str:
    """The cache key: the boot, the user and the variables detection reads."""
    data = json.dumps([boot_id, os.getuid() if hasattr(os, "getuid") else "",
                       key_env(env)])
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _boot_id(path: Path) -> str | None:
    try:
        return path.read_text("ascii").strip() or None
    except OSError:
        return None


def _detector(env: Mapping[str, str],
              detect: Callable[[], HostProfile] | None) -> Callable[[], HostProfile]:
    if detect is not None:
        return detect

    def detect_here() -> HostProfile:
        from . import detect_host  # only when no kept profile serves

        return detect_host(env=env)

    return detect_here


def _kept(path: Path, key: str, now: float) -> HostProfile | None:
    """The profile kept under KEY, while younger than TTL_S."""
    try:
        kept = json.loads(path.read_text("utf-8"))
        age = now - float(kept["at"])
        if kept["key"] == key and 0 <= age < TTL_S:
            return HostProfile.from_dict(kept["profile"])
    except (OSError, ValueError, KeyError, TypeError, TfWizardError):
        pass  # none kept, another key, or a file that is not ours: detect
    return None


def _detect_and_keep(path: Path, key: str, now: float,
                     detect: Callable[[], HostProfile]) -> HostProfile:
    found = detect()
    if found.docker.status != "ok":
        return found
    try:
        private_dir(path.parent)
        atomic_write(path, json.dumps({"key": key, "at": now, "profile": found.to_dict()}))
    except OSError:
        pass  # a read-only data folder: detect again next time
    return found


def cached_host(env: Mapping[str, str], detect: Callable[[], HostProfile] | None = None, *,
                now: float | None = None, boot_id_path: Path = BOOT_ID) -> HostProfile:
    """`detect()` (default: detect_host(env=env)), or the profile it gave less than TTL_S
    seconds ago in this boot, for this user and the variables detection reads."""
    detect = _detector(env, detect)
    boot = _boot_id(boot_id_path)
    if boot is None:
        return detect()
    now = time.time() if now is None else now
    key, path = host_key(env, boot), data_dir(env) / FILE
    kept = _kept(path, key, now)
    if kept is not None:
        return kept
    return _detect_and_keep(path, key, now, detect)

