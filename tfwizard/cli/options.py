"""Options and helpers several commands share (a command module never imports another):
--recipe and --python as `install`, `verify` and `advise` read them, --idle and the warm
container as `shell` and `test` start it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.i18n import _
from .context import Environment, arg_path


def load_recipe_option(args: argparse.Namespace, env: Environment) -> Any:
    """The recipe --recipe names, or None."""
    if not getattr(args, "recipe", None):
        return None
    from ..core.recipe import load_recipe

    return load_recipe(arg_path(env, args.recipe))


def python_option(env: Environment, value: str) -> str | Path:
    """--python: a path (relative to where the command runs), or a command name on PATH."""
    return arg_path(env, value) if "/" in value else value


def add_idle_option(p: Any) -> None:
    """--idle MIN, for the commands that start the warm container (shell, test)."""
    p.add_argument("--idle", type=float, default=None, metavar="MIN",
                   help=_("stop the warm container after this many idle minutes "
                          "(default: the recipe's build.warm_idle_min, else 30)"))


def start_warm(env: Environment, client: Any, path: Any, recipe: Any, plan: Any,
               idle_min: float | None) -> Any:
    """The recipe's warm container (a WarmContainer), reused or started (said on stderr);
    the recipe's ${ENV} secrets from this environment, passed per exec (warmsecrets.py)."""
    from ..core.building.warm import container as warm
    from ..core.building.warm.run import recipe_idle_s
    from ..core.building.warm.secrets import secret_values

    idle = recipe_idle_s(recipe.build.warm_idle_min) if idle_min is None else int(idle_min * 60)
    box = warm.WarmContainer(client, plan, warm.workspace_for(plan, str(path.resolve())),
                             idle_s=idle, secrets=secret_values(plan, env.env))
    if not box.ensure():
        env.err(_("started the warm build container {name} (idle timeout {minutes} min)"
                  ).format(name=box.workspace.container_name, minutes=idle // 60))
    return box
