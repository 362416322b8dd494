"""`tfwizard consent`: which environment variables recipes may send, and where."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus


def register(sub: Any) -> None:
    """Add `consent` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "consent", help=_("allow or revoke sending an environment variable to a host (a "
                          "recipe's ${VAR} in remote.headers or a proxy)"))
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (("allow", _("always allow sending VARIABLE to HOST")),
                       ("revoke", _("take an allowed VARIABLE and HOST back"))):
        a = actions.add_parser(name, help=text)
        a.add_argument("variable", metavar="VARIABLE")
        a.add_argument("host", metavar="HOST",
                       help=_("the host as `tfwizard check` lists it (\"container\": the "
                              "build container only)"))
    listing = actions.add_parser("list", help=_("list what is allowed"))
    listing.add_argument("--json", action="store_true", help=_("print the list as JSON"))
    p.set_defaults(handler=cmd_consent)


def cmd_consent(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Change or list the allow-list in the user's config folder."""
    from ..core import consent

    if args.action == "allow":
        path = consent.allow(args.variable, args.host, env.env)
        env.out(_("allowed: ${{{name}}} may be sent to {host} ({path})").format(
            name=args.variable, host=args.host.lower(), path=path))
        return ExitStatus.OK
    if args.action == "revoke":
        if consent.revoke(args.variable, args.host, env.env):
            env.out(_("revoked: ${{{name}}} is no longer sent to {host}").format(
                name=args.variable, host=args.host.lower()))
            return ExitStatus.OK
        env.err(_("{pair} was not allowed in {path}").format(
            pair=f"{args.variable}@{args.host.lower()}", path=consent.consent_path(env.env)))
        return ExitStatus.ERROR
    pairs = consent.stored(env.env)
    if getattr(args, "json", False):
        env.out(json.dumps({"file": str(consent.consent_path(env.env)),
                            "allowed": [{"variable": v, "host": h} for v, h in pairs]},
                           indent=2))
    elif not pairs:
        env.out(_("nothing is allowed ({path})").format(path=consent.consent_path(env.env)))
    else:
        for variable, host in pairs:
            env.out(f"{variable}@{host}")
    return ExitStatus.OK
