"""Which disk a build's "No space left on device" filled, from the path the log's line names.

A build writes to two kinds of disk: Docker's data root (the container's own files, its
volumes: Bazel's output base and caches) and folders of this machine (tfwizard's data
folder with the record, a bind-mounted source checkout). Their fixes differ, so the
disk-full diagnosis names the one the line's path is on: a host folder tfwizard writes to
(the data folder, the record, the wheel's folder), a bind mount's host folder, else the container's disk.
A line without a path keeps the catalogue's words.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from ..i18n import _
from ..paths import data_dir

#: the failure signature this placement refines (failures.toml)
DISK_FULL = "disk-full"

_FULL = re.compile(r"No space left on device|ENOSPC|Disk quota exceeded")
#: an absolute path in a line: quoted, or up to a space, a colon or a bracket
_PATH = re.compile(r"""(?:^|[\s'"`(=])(/[^\s'"`():,]+)""")

D = TypeVar("D")


def full_path(texts: Iterable[str]) -> str | None:
    """The first absolute path on a line that says a disk is full (None: no line names one)."""
    for text in texts:
        for line in text.splitlines():
            if _FULL.search(line):
                found = _PATH.search(line)
                if found:
                    return found.group(1)
    return None


def host_dirs(record_dir: Path | None = None) -> list[str]:
    """This machine's folders a build writes to: its record, the wheel's folder the
    record's result.json names, tfwizard's data folder."""
    out = [] if record_dir is None else [str(record_dir)]
    if record_dir is not None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            result = json.loads((record_dir / "result.json").read_text(encoding="utf-8"))
            if result.get("out_dir"):
                out.append(str(result["out_dir"]))
    return [*out, str(data_dir())]


def _under(path: str, folder: str) -> bool:
    p, f = PurePosixPath(path), PurePosixPath(folder)
    return p == f or f in p.parents


def _mounts(plan: Any) -> list[tuple[str, str, str]]:
    """(source, target, kind) of a plan's mounts (a BuildPlan or its plan.json)."""
    if plan is None:
        return []
    raw = plan.get("mounts") if isinstance(plan, Mapping) else getattr(plan, "mounts", [])
    out = []
    for m in raw or []:
        get = m.get if isinstance(m, Mapping) else lambda k, m=m: getattr(m, k, "")
        out.append((str(get("source") or ""), str(get("target") or ""), str(get("kind") or "")))
    return out


def place(path: str, *, plan: Any = None, host_dirs: Iterable[str] = ()) -> str | None:
    """The host folder whose disk `path` is on, or None when it is on Docker's data root
    (a path inside the container that no bind mount brings from this machine)."""
    for folder in host_dirs:
        if folder and _under(path, folder):
            return folder
    for source, target, kind in sorted(_mounts(plan), key=lambda m: -len(m[1])):
        if target and _under(path, target):
            return source if kind == "bind" else None
    return None


def placed(diagnosis: D, *, plan: Any = None, host_dirs: Iterable[str] = ()) -> D:
    """A disk-full diagnosis worded for the disk its line names (others as they are)."""
    if getattr(diagnosis, "id", "") != DISK_FULL:
        return diagnosis
    texts = getattr(diagnosis, "excerpt", None) or getattr(diagnosis, "evidence", None) or ()
    path = full_path(texts)
    if path is None:
        return diagnosis
    folder = place(path, plan=plan, host_dirs=host_dirs)
    if folder is not None:
        cause = _("The disk of this machine that holds {folder} is full ({path} could not be "
                  "written); it is not Docker's data root.").format(folder=folder, path=path)
        step = _("Free space on that disk (`df -h {folder}`), or move what lives there to a "
                 "bigger one: tfwizard's data folder with TFWIZARD_DATA_DIR, the source with "
                 "tensorflow.source_dir.").format(folder=folder)
    else:
        cause = _("{path} is inside the build container, whose files and volumes live in "
                  "Docker's data root (usually /var/lib/docker): that disk filled up. Bazel's "
                  "output base and caches take tens of GB for TensorFlow.").format(path=path)
        step = _("Free space there (`docker system df`, remove old tfwizard volumes or "
                 "images), or move Docker's data root to a bigger disk.")
    return dataclasses.replace(diagnosis, cause=cause, next_step=step)  # type: ignore[type-var]
