"""The download-only plan (`tfwizard fetch`) and what a fetch downloaded.

`make_fetch_plan` is make_plan's plan with `bazel build --nobuild`; `fetch_report` reads
the fetch's log (the repository cache listed before and after) and its BEP fetch events.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from ...i18n import _
from ...paths import LABEL
from ...recipe import Recipe
from .flags import REPO_CACHE
from .plan import BuildPlan, Step, make_plan

#: printed by the fetch plan's repository-cache listing steps: "<marker> SIZE PATH"
REPO_CACHE_MARKER = "tfwizard-repo-cache"


def make_fetch_plan(recipe: Recipe, **kwargs: Any) -> BuildPlan:
    """The download phase only: make_plan's steps with `bazel build --nobuild`.

    `--nobuild` loads and analyses the target with exactly the build's flags, configure
    answers and caches, so every external repository analysis needs is fetched into the
    repository cache (and network.distdir is honoured) and the real build later finds
    them there; nothing is compiled. With a repository cache, listing steps before and
    after say which archives are new. No wheel comes out (wheel_dir is empty).
    """
    plan = make_plan(recipe, **kwargs)
    steps: list[Step] = []
    listing = recipe.cache.repository_cache
    for step in plan.steps:
        if step.role == "package":
            continue
        if step.role == "build":
            if listing:
                steps.append(_repo_cache_listing("before"))
            at = step.argv.index("build") + 1
            steps.append(dataclasses.replace(
                step, argv=(*step.argv[:at], "--nobuild", *step.argv[at:]), phase="fetch"))
            if listing:
                steps.append(_repo_cache_listing("after"))
            continue
        steps.append(step)
    notes = [*plan.notes, _("fetch only: `bazel build --nobuild` downloads what loading and "
                            "analysis need (nearly all of TensorFlow's external repositories) "
                            "and compiles nothing")]
    if not listing:
        notes.append(_("cache.repository_cache is false: the downloads are not kept for the "
                       "build; only the Build Event Protocol's fetch events list them"))
    return dataclasses.replace(plan, steps=steps, wheel_dir="", notes=notes,
                               labels={**plan.labels, f"{LABEL}.fetch": "1"})


def _repo_cache_listing(when: str) -> Step:
    return Step(f"cache-{when}", "fetch",
                ("find", REPO_CACHE, "-type", "f", "-name", "file", "-printf",
                 f"{REPO_CACHE_MARKER}-{when} %s %P\\n"), workdir="/", needs_network=False,
                role="list", needs_record=False)


# -- what a fetch downloaded ---------------------------------------------------------------


@dataclass
class FetchReport:
    """What `tfwizard fetch` downloaded: the BEP's fetch events and the repository cache."""

    urls: list[str] = field(default_factory=list)  # fetched with success (BEP fetch events)
    failed_urls: list[str] = field(default_factory=list)
    new_files: list[tuple[str, int]] = field(default_factory=list)  # (cache path, bytes)
    cache_files_before: int | None = None  # None: no listing (no repository cache)
    cache_files_after: int | None = None

    @property
    def new_bytes(self) -> int:
        """The size of the files the fetch added to the repository cache."""
        return sum(size for _path, size in self.new_files)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data, with new_bytes."""
        return {**asdict(self), "new_bytes": self.new_bytes}


def fetch_report(log_lines: Any, bep_lines: Any = ()) -> FetchReport:
    """Read a fetch's log lines (the listing steps' output) and BEP JSON lines."""
    report = FetchReport()
    listed: dict[str, dict[str, int]] = {"before": {}, "after": {}}
    seen: set[str] = set()
    for line in log_lines:
        for when, files in listed.items():
            prefix = f"{REPO_CACHE_MARKER}-{when} "
            if line.startswith(prefix):
                seen.add(when)
                size, _space, path = line[len(prefix):].partition(" ")
                if size.isdigit() and path:
                    files[path] = int(size)
    if "before" in seen or "after" in seen:
        report.cache_files_before = len(listed["before"])
        report.cache_files_after = len(listed["after"])
        report.new_files = sorted((p, s) for p, s in listed["after"].items()
                                  if p not in listed["before"])
    for raw in bep_lines:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        url = event.get("id", {}).get("fetch", {}).get("url") if isinstance(event, dict) else None
        if not url:
            continue
        # proto3 JSON leaves out false: a fetch without "success" failed
        target = report.urls if event.get("fetch", {}).get("success") else report.failed_urls
        if url not in target:
            target.append(url)
    return report
