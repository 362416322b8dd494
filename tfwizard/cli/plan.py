"""`tfwizard plan`: print what the build will run (configure answers, bazelrc, commands,
or the whole plan as JSON)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path
from .gates import load_hosts


def register(sub: Any) -> None:
    """Add `plan` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("plan", help=_("print what the build will run"))
    p.add_argument("recipe", metavar="RECIPE")
    p.add_argument("--format", choices=("env", "bazelrc", "command", "json"), default="command",
                   help=_("env: configure answers; bazelrc: the predicted .tf_configure.bazelrc; "
                   "command: docker run + ./configure + bazel build; json: the whole plan"))
    p.add_argument("--host", metavar="PROFILE.json", help=_("the build host's profile"))
    p.add_argument("--target", metavar="PROFILE.json", help=_("the target machine's profile"))
    p.set_defaults(handler=cmd_plan)


def cmd_plan(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Make the plan and print it in the asked format."""
    from ..core.building.plan.plan import make_plan
    from ..core.building.plan.render import (
        comment,
        render_bazelrc,
        render_commands,
        render_env,
        render_json,
    )
    from ..core.consent import describe, secret_uses, unconsented
    from ..core.recipe import load_recipe
    from ..core.secrets import literal_secrets, mask

    recipe = load_recipe(arg_path(env, args.recipe))
    build, target = load_hosts(args, env, recipe)
    plan = make_plan(recipe, build_host=build, target_host=target)
    render = {"env": render_env, "bazelrc": render_bazelrc, "command": render_commands,
              "json": render_json}[args.format]
    text = mask(render(plan), literal_secrets(recipe))  # a credential written in the recipe
    uses = secret_uses(plan.flag_list, plan.container_env, env.env)
    if args.format == "json" and uses:
        data = json.loads(text)
        missing = unconsented(uses, env.env)
        data["secret_uses"] = [{**u.to_dict(), "allowed": u not in missing} for u in uses]
        text = json.dumps(data, indent=2)
    elif args.format == "command":
        text += "".join(comment(describe(u)) + "\n" for u in uses)
    env.stdout.write(text)
    return ExitStatus.OK
