"""`tfwizard recipe set`: change recipe keys from the command line (comments kept)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .cli import Environment, ExitStatus, _path
from .core.i18n import _


def register(rsub: Any) -> None:
    """Add `set` to the `tfwizard recipe` actions."""
    q = rsub.add_parser("set", help=_("change recipe keys: KEY=VALUE, KEY+=VALUE (append to "
                                      "a list), KEY-=VALUE (remove from a list)"))
    q.add_argument("recipe", metavar="RECIPE", help=_("the recipe file (.toml)"))
    q.add_argument("assignments", nargs="+", metavar="KEY=VALUE",
                   help=_("e.g. build.jobs=4, cuda.compute_capabilities=sm_80,sm_90, "
                          "build.bazel_flags+=--copt=-Wno-c23-extensions"))
    q.set_defaults(handler=cmd_recipe_set)


def cmd_recipe_set(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.recipe import load_recipe, save_recipe
    from .core.recipe_edit import apply_assignments, parse_assignment

    path = _path(env, args.recipe)
    assignments = [parse_assignment(text) for text in args.assignments]
    recipe = load_recipe(path)
    new, changed = apply_assignments(recipe, assignments)
    if not changed:
        env.out(_("{path}: nothing to change.").format(path=path))
        return ExitStatus.OK
    save_recipe(new, path)  # validates, keeps the comments and NAME.toml.bak
    for key, value in changed.items():
        env.out(_("{path}: {key} = {value} (was {old})").format(
            path=path, key=key, value=json.dumps(value), old=json.dumps(recipe.get(key))))
    return ExitStatus.OK
