"""Past builds, read from their records: what the history page lists, what it may delete,
and what this machine's own builds say about how long a build takes here.

A record's result.json and plan.json are the figures: status, elapsed time, wheel, cache
summary, backend, Bazel's --jobs. Nothing here writes a record; `delete_build` removes one
that no front end follows and whose build is over.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import UsageError
from ...i18n import _
from ..run.progress import CacheSummary, cache_summary_text
from ..run.record import BuildRecord, list_records

#: a build whose actions came from a cache for more than this share says nothing about
#: how long compiling takes here
CACHED_SHARE = 0.5


@dataclass(frozen=True)
class BuildSummary:
    """One past (or running) build as the history lists it."""

    build_id: str
    path: Path
    status: str  # a vocab.BuildStatus, or "unknown" for an unreadable result.json
    started: float | None  # epoch seconds, from the build id
    elapsed_s: float | None
    wheel: str | None
    message: str
    release: str
    backend: str
    jobs: int | None
    actions: int | None
    cache: dict[str, Any] | None
    watched: bool  # a live front end holds the record's lock

    @property
    def cache_text(self) -> str:
        """The cache summary as one sentence, or "" when Bazel never said."""
        if not self.cache:
            return ""
        try:
            return cache_summary_text(CacheSummary(**self.cache))
        except TypeError:  # a record of another version
            return ""

    @property
    def cached_share(self) -> float:
        """The share of the actions a cache answered (0 without a summary)."""
        if not self.cache or not self.cache.get("processes"):
            return 0.0
        return float(self.cache.get("cache_hits") or 0) / float(self.cache["processes"])

    @property
    def running(self) -> bool:
        """The record says the build has not ended."""
        return self.status == "running"

    @property
    def attachable(self) -> bool:
        """Running, and no front end follows it: `attach` may pick it up."""
        return self.running and not self.watched


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _started(build_id: str) -> float | None:
    try:
        return time.mktime(time.strptime(build_id[:15], "%Y%m%d-%H%M%S"))
    except ValueError:
        return None


def _jobs(plan: Mapping[str, Any]) -> int | None:
    for flag in plan.get("bazel_flags") or ():
        text = flag.get("flag", "") if isinstance(flag, dict) else str(flag)
        if text.startswith("--jobs="):
            try:
                return int(text.split("=", 1)[1])
            except ValueError:
                return None
    return None


def is_watched(record: BuildRecord) -> bool:
    """Whether a live process holds the record's front-end lock."""
    if not (record.path / ".lock").exists():
        return False
    if record.lock():
        record.unlock()
        return False
    return True


def summarize(record: BuildRecord) -> BuildSummary:
    """The summary of one record folder (missing files give empty fields)."""
    result = _read_json(record.result_path)
    plan = _read_json(record.path / "plan.json")
    elapsed = result.get("elapsed_s")
    return BuildSummary(
        build_id=record.build_id, path=record.path,
        status=str(result.get("status") or "unknown"), started=_started(record.build_id),
        elapsed_s=float(elapsed) if isinstance(elapsed, (int, float)) else None,
        wheel=result.get("wheel"), message=str(result.get("message") or ""),
        release=str(plan.get("release") or ""), backend=str(plan.get("backend") or ""),
        jobs=_jobs(plan), actions=result.get("actions"), cache=result.get("cache"),
        watched=result.get("status") == "running" and is_watched(record))


def history(root: Path | None = None, env: Mapping[str, str] | None = None
            ) -> list[BuildSummary]:
    """Every build record, newest first."""
    return [summarize(r) for r in reversed(list_records(root, env))]


def delete_build(summary: BuildSummary) -> None:
    """Remove a build's record folder. UsageError for a build that has not ended: cancel
    it, or attach and let it end, first (its containers still write to the record)."""
    record = BuildRecord(summary.path)
    status = _read_json(record.result_path).get("status")
    if status == "running" or is_watched(record):
        raise UsageError(_("build {id} has not ended; it cannot be deleted").format(
                             id=summary.build_id),
                         _("Attach to it and cancel it, or wait until it ends."))
    shutil.rmtree(summary.path)


@dataclass(frozen=True)
class Calibration:
    """What this machine's finished builds of one backend say: thread-hours of work."""

    backend: str
    builds: int  # how many builds the figure comes from
    thread_hours: float  # median of elapsed hours x jobs
    build_ids: tuple[str, ...]


def calibration(summaries: Iterable[BuildSummary], backend: str, *,
                overhead_hours: float = 0.0) -> Calibration | None:
    """Thread-hours per build from this machine's succeeded, mostly uncached builds of
    `backend` (elapsed minus the fixed overhead, times Bazel's jobs); None without one."""
    usable = [s for s in summaries
              if s.status == "succeeded" and s.backend == backend and s.elapsed_s
              and s.jobs and s.cached_share <= CACHED_SHARE]
    if not usable:
        return None
    work = [max(0.0, s.elapsed_s / 3600 - overhead_hours) * s.jobs  # type: ignore[operator]
            for s in usable]
    return Calibration(backend, len(usable), statistics.median(work),
                       tuple(s.build_id for s in usable))
