"""What a look inside a build image found, kept per image ID (a warm rebuild does
not start a probe container, about half a second, to learn what it learnt last time).

    found = cached_probe(image_id, user, args, lambda: probe(...), env=env)

The key is the sha256 of the image ID (a content address: the same ID is the same files and
the same PATH), the user the probe runs as, the probe's arguments (what is looked for) and
the probe script. A probe that ran is stored under that key in the data folder
(`probe-cache/KEY.json`); one that raised is not. Without an image ID nothing is cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..paths import atomic_write, data_dir, private_dir

#: the folder under tfwizard's data folder
FOLDER = "probe-cache"

Found = list[str | None]


def probe_key(image_id: str, user: str | None, args: Sequence[str], script: str) -> str:
    """The cache key of one probe: its image, user, arguments and script."""
    data = json.dumps([image_id, user or "", list(args), script])
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def cache_path(key: str, env: Mapping[str, str] | None = None) -> Path:
    """Where the probe with `key` is kept."""
    return data_dir(env) / FOLDER / f"{key}.json"


def cached_probe(image_id: str | None, user: str | None, args: Sequence[str], script: str,
                 probe: Callable[[], Found], *,
                 env: Mapping[str, str] | None = None) -> Found:
    """What `probe()` finds for these inputs: from the cache when it ran before for the same
    image ID, user, arguments and script; else run now and kept (when there is an ID)."""
    if not image_id:
        return probe()
    path = cache_path(probe_key(image_id, user, args, script), env)
    try:
        kept = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        kept = None
    if isinstance(kept, list) and len(kept) == len(args) and all(
            x is None or isinstance(x, str) for x in kept):
        return kept
    found = probe()
    try:
        private_dir(path.parent)
        atomic_write(path, json.dumps(found))
    except OSError:
        pass  # a read-only data folder: probe again next time
    return found
