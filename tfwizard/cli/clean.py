"""`tfwizard clean`: remove what builds left on the Docker engine (only this user's
tfwizard objects)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _, ngettext
from .context import Environment, ExitStatus


def register(sub: Any) -> None:
    """Add `clean` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "clean", help=_("remove tfwizard's leftover containers and volumes (only yours: "
                      "labelled io.tfwizard with your uid as io.tfwizard.owner)"))
    p.add_argument("--caches", action="store_true",
                   help=_("also remove the Bazel cache volumes (the next build starts cold)"))
    p.add_argument("--workspaces", action="store_true",
                   help=_("also remove the warm workspaces' volumes (source, Bazel output "
                          "base, state): the next build of each recipe starts cold"))
    p.add_argument("--running", action="store_true",
                   help=_("also stop and remove the containers of builds still running"))
    p.add_argument("--unowned", action="store_true",
                   help=_("also remove tfwizard objects without an owner label (made by an "
                          "older tfwizard; on a shared engine they may be another user's)"))
    p.add_argument("--dry-run", action="store_true", help=_("list what would go; remove nothing"))
    p.add_argument("--json", action="store_true", help=_("print the list as JSON"))
    p.set_defaults(handler=cmd_clean)


def cmd_clean(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Remove (or with --dry-run list) tfwizard's leftovers on the engine."""
    from ..core.docker import client as dockerutil
    from ..core.docker.leftovers import find_leftovers, remove_leftovers

    client = dockerutil.connect(env.env)
    try:
        items = find_leftovers(client, caches=args.caches, running=args.running,
                               workspaces=args.workspaces, unowned=args.unowned)
        failed = [] if args.dry_run else remove_leftovers(client, items)
    finally:
        client.close()
    errors = {item.name: why for item, why in failed}
    if args.json:
        env.out(json.dumps({"dry_run": args.dry_run, "items": [
            {**i.to_dict(), "removed": not args.dry_run and not i.skipped
             and i.name not in errors, "error": errors.get(i.name, "")} for i in items]},
            indent=2))
        return ExitStatus.ERROR if failed else ExitStatus.OK
    for i in items:
        what = _describe(i)
        if i.skipped:
            env.out(_("kept {item}: {why}").format(item=what, why=i.skipped))
        elif i.name in errors:
            env.err("tfwizard: " + _("could not remove {item}: {error}").format(
                item=what, error=errors[i.name]))
        elif args.dry_run:
            env.out(_("would remove {item}").format(item=what))
        else:
            env.out(_("removed {item}").format(item=what))
    gone = sum(1 for i in items if not i.skipped and i.name not in errors)
    if args.dry_run:
        summary = ngettext("Would remove {count} of {total} tfwizard object; nothing without "
                           "the io.tfwizard label is ever touched.",
                           "Would remove {count} of {total} tfwizard objects; nothing "
                           "without the io.tfwizard label is ever touched.", len(items))
    else:
        summary = ngettext("Removed {count} of {total} tfwizard object; nothing without the "
                           "io.tfwizard label is ever touched.",
                           "Removed {count} of {total} tfwizard objects; nothing without the "
                           "io.tfwizard label is ever touched.", len(items))
    env.out(summary.format(count=gone, total=len(items)))
    return ExitStatus.ERROR if failed else ExitStatus.OK


def _describe(item: Any) -> str:
    """"container NAME (build ID, STEP)" or "volume NAME (PURPOSE)": one leftover."""
    if item.kind == "container":
        text = (_("container {name} (build {build_id}, {what})") if item.build_id
                else _("container {name} ({what})"))
    else:  # a volume
        text = (_("volume {name} (build {build_id}, {what})") if item.build_id
                else _("volume {name} ({what})"))
    return text.format(name=item.name, build_id=item.build_id, what=item.what)
