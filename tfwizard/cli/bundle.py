"""`tfwizard bundle`: one archive with what is needed to help with a build (secrets masked)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path


def register(sub: Any) -> None:
    """Add `bundle` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "bundle", help=_("pack a build's recipe, plan, host, log tail, errors and diagnosis "
                       "into one archive to share (secrets masked)"))
    p.add_argument("build", nargs="?", metavar="BUILD",
                   help=_("a build id or a build record folder (default: the latest build)"))
    p.add_argument("--out", metavar="FILE",
                   help=_("the archive to write: .tar.gz (default) or .zip; a folder gets "
                        "tfwizard-diagnostics-BUILD_ID.tar.gz inside it"))
    p.add_argument("--host", metavar="PROFILE",
                   help=_("use this `tfwizard detect --json` file as the host profile when "
                        "the record keeps none (default: detect this machine)"))
    p.add_argument("--json", action="store_true", help=_("print what was written as JSON"))
    p.set_defaults(handler=cmd_bundle)


def cmd_bundle(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Write the bundle of a build record (the latest by default)."""
    from ..core.building.report.bundle import make_bundle
    from ..core.building.run.record import find_record

    record = find_record(args.build, env=env.env, cwd=env.cwd)
    host = None
    if args.host:
        from ..core.host import HostProfile

        host = HostProfile.load(arg_path(env, args.host))
    out = arg_path(env, args.out) if args.out else env.cwd
    bundle = make_bundle(record, out, host=host, env=env.env)
    if args.json:
        env.out(json.dumps({"bundle": str(bundle.path), "build_id": bundle.build_id,
                            "files": list(bundle.files), "size": bundle.size}, indent=2))
    else:
        env.out(_("Wrote {path} ({kib:.1f} KiB): build {build_id}, {count} files, secrets "
                  "masked.").format(path=bundle.path, kib=bundle.size / 1024,
                                    build_id=bundle.build_id, count=len(bundle.files)))
        env.out(_("Read its README.txt (and the files) before you share it."))
    return ExitStatus.OK
