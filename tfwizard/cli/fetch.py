"""`tfwizard fetch`: the download phase alone, in the build container with the same caches.

For a machine that goes offline later (fetch while connected, build with network "none")
or to fill the repository cache before a long build. Says what was downloaded: the Build
Event Protocol's fetch events (URLs) and the repository cache's new files.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _, ngettext
from ..core.vocab import status_word
from .context import Environment, ExitStatus
from .gates import Prepared, prepare


def register(sub: Any) -> None:
    """Add `fetch` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("fetch", help=_("download what the build needs (bazel build --nobuild in "
                       "the build container, same caches) and say what came"))
    p.add_argument("recipe", metavar="RECIPE", help=_("the recipe file (.toml)"))
    p.add_argument("--json", action="store_true",
                   help=_("one JSON event per line; the last one is the fetch report"))
    p.add_argument("--dry-run", action="store_true", help=_("print the fetch plan and stop"))
    p.add_argument("--host", metavar="PROFILE", help=_("the build host's profile"))
    p.add_argument("--target", metavar="PROFILE", help=_("the target machine's profile"))
    p.add_argument("--force", action="store_true",
                   help=_("go on even when check or preflight report errors"))
    p.set_defaults(handler=cmd_fetch)


def cmd_fetch(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Run the fetch plan, then say what it downloaded."""
    from ..core.building.plan.fetchplan import fetch_report, make_fetch_plan
    from ..core.building.run.record import read_log
    from ..core.building.run.runner import BuildRunner
    from .follow import follow

    prepared = prepare(args, env, make_fetch_plan)
    if not isinstance(prepared, Prepared):
        return prepared
    plan = prepared.plan
    runner = BuildRunner(plan, recipe_text=prepared.recipe_path.read_text("utf-8"),
                         env=env.env)
    runner.replan = prepared.replan  # --nobuild with the clone's own facts
    follow(runner, env, as_json=args.json, rich=False)
    result = runner.result
    if result is None or result.status == "cancelled":
        return ExitStatus.CANCELLED
    record = runner.record
    assert record is not None
    logs = [text for _n, text in read_log(record.log_path)] if record.log_path.is_file() else []
    bep = record.bep_path.read_text("utf-8", "replace").splitlines() \
        if record.bep_path.is_file() else []
    report = fetch_report(logs, bep)
    if args.json:
        env.out(json.dumps({"type": "fetch", "status": result.status,
                            "record_dir": result.record_dir, **report.to_dict()}))
        return ExitStatus.OK if result.status == "succeeded" else ExitStatus.ERROR
    status = status_word(result.status)
    if report.failed_urls:
        env.out(ngettext("Fetch {status}: {count} download, {failed} failed",
                         "Fetch {status}: {count} downloads, {failed} failed",
                         len(report.urls)).format(
            status=status, count=len(report.urls), failed=len(report.failed_urls)))
    else:
        env.out(ngettext("Fetch {status}: {count} download", "Fetch {status}: {count} downloads",
                         len(report.urls)).format(status=status, count=len(report.urls)))
    for url in report.urls:
        env.out(f"  {url}")
    for url in report.failed_urls:
        env.out("  " + _("FAILED {url}").format(url=url))
    if report.cache_files_after is not None:
        env.out(ngettext("Repository cache: {before} -> {after} file, {new} new ({bytes:,} "
                         "bytes) in volume {volume}",
                         "Repository cache: {before} -> {after} files, {new} new ({bytes:,} "
                         "bytes) in volume {volume}", report.cache_files_after).format(
            before=report.cache_files_before, after=report.cache_files_after,
            new=len(report.new_files), bytes=report.new_bytes,
            volume=plan.cache_volumes.get("repo", "")))
    return ExitStatus.OK if result.status == "succeeded" else ExitStatus.ERROR
