"""Parsed TOML files kept on disk by content (a new `tfwizard build` process parses
~25 ms of knowledge TOML before it does anything else; the marshalled result loads in ~2).

    data = load_toml(path)    # tomllib's dict, from the cache when the bytes are the same

For package data (resources/knowledge/*.toml): the cache entry is named after the sha256 of
the file's bytes and of this Python's version, so an edited file, another release or
another interpreter never reads an old entry. Entries live in $TFWIZARD_CACHE_DIR, else
the platform's user cache folder; one that cannot be read or written costs only the parse.
Only what marshal writes exactly (dicts, lists, strings, numbers, booleans) is cached: a
file holding TOML dates is parsed every time.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import secrets
import sys
from pathlib import Path
from typing import Any

import tomllib

CACHE_ENV = "TFWIZARD_CACHE_DIR"
_PLAIN = (dict, list, str, int, float, bool)


def cache_dir() -> Path:
    """Where parsed files are kept: $TFWIZARD_CACHE_DIR, else the user cache folder."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("tfwizard")) / "toml"


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return isinstance(value, _PLAIN)


def load_toml(path: Path) -> dict[str, Any]:
    """tomllib.loads of the file's text (its errors and OSError as tomllib.load raises
    them), from the cache when an entry for these very bytes is there."""
    raw = path.read_bytes()
    key = hashlib.sha256(sys.version.encode() + b"\0" + raw).hexdigest()[:32]
    entry = cache_dir() / f"{path.stem}-{key}.marshal"
    try:
        data = marshal.loads(entry.read_bytes())
        if isinstance(data, dict):
            return data
    except (OSError, ValueError, EOFError, TypeError):
        pass
    data = tomllib.loads(raw.decode("utf-8"))
    if _plain(data):
        _keep(entry, data)
    return data


def _keep(entry: Path, data: dict[str, Any]) -> None:
    """Write the entry (a new name, renamed into place); drop older ones of that file."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.parent / f".{entry.name}.{secrets.token_hex(4)}.tmp"
        tmp.write_bytes(marshal.dumps(data))
        os.replace(tmp, entry)
        stem = entry.name.rsplit("-", 1)[0]
        for old in entry.parent.glob(f"{stem}-*.marshal"):
            if old != entry and old.name.rsplit("-", 1)[0] == stem:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only cache folder: parse again next time
