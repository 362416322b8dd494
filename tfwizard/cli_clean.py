"""`tfwizard clean`: remove what builds left on the Docker engine (only tfwizard's)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .cli import Environment, ExitStatus
from .core.i18n import _


def register(sub: Any) -> None:
    p = sub.add_parser(
        "clean", help=_("remove tfwizard's leftover containers and volumes (only those "
                      "labelled io.tfwizard)"))
    p.add_argument("--caches", action="store_true",
                   help=_("also remove the Bazel cache volumes (the next build starts cold)"))
    p.add_argument("--running", action="store_true",
                   help=_("also stop and remove the containers of builds still running"))
    p.add_argument("--dry-run", action="store_true", help=_("list what would go; remove nothing"))
    p.add_argument("--json", action="store_true", help=_("print the list as JSON"))
    p.set_defaults(handler=cmd_clean)


def cmd_clean(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core import dockerutil
    from .core.leftovers import find_leftovers, remove_leftovers

    client = dockerutil.connect(env.env)
    try:
        items = find_leftovers(client, caches=args.caches, running=args.running)
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
    verb = "would remove" if args.dry_run else "removed"
    for i in items:
        what = f"{i.kind} {i.name}" + (f" (build {i.build_id}, {i.what})" if i.build_id
                                       else f" ({i.what})")
        if i.skipped:
            env.out(f"kept {what}: {i.skipped}")
        elif i.name in errors:
            env.err(f"tfwizard: could not remove {what}: {errors[i.name]}")
        else:
            env.out(f"{verb} {what}")
    gone = sum(1 for i in items if not i.skipped and i.name not in errors)
    env.out(f"{'Would remove' if args.dry_run else 'Removed'} {gone} of {len(items)} tfwizard "
            "object(s); nothing without the io.tfwizard label is ever touched.")
    return ExitStatus.ERROR if failed else ExitStatus.OK
