"""`tfwizard recipe new|validate|set`: write, check and change recipe files."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.errors import RecipeError, UsageError
from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path


def register(sub: Any) -> None:
    """Add `recipe` and its actions to the `tfwizard` parser's subcommands."""
    from .parser import Parser

    p = sub.add_parser("recipe", help=_("create, validate and change recipe files"))
    rsub = p.add_subparsers(dest="recipe_command", metavar="ACTION", parser_class=Parser)
    p.set_defaults(handler=None, subparser=p)
    q = rsub.add_parser("new", help=_("write a commented default recipe"))
    q.add_argument("out", metavar="OUT.toml")
    q.add_argument("--from-host", action="store_true",
                   help=_("pick backend and GPU targets from this machine"))
    q.add_argument("--target", metavar="PROFILE",
                   help=_("build for the machine of this profile (`tfwizard detect --json` "
                          "there): its GPUs pick the backend, a CUDA its driver runs and its "
                          "compute capabilities"))
    q.add_argument("--backend", choices=("cuda", "rocm", "cpu"),
                   help=_("the backend (default: from the target's GPUs, or this machine's "
                          "with --from-host, else cpu)"))
    q.add_argument("--name", help=_("the recipe's name (default: after the release, the "
                                    "backend and the target)"))
    q.add_argument("--force", action="store_true", help=_("overwrite OUT (a backup is kept)"))
    q.set_defaults(handler=cmd_recipe_new)
    q = rsub.add_parser("validate", help=_("check recipe files; exit 0 valid, 2 invalid"))
    q.add_argument("files", nargs="+", metavar="FILE")
    q.add_argument("--json", action="store_true", help=_("print problems as JSON"))
    q.set_defaults(handler=cmd_recipe_validate)
    q = rsub.add_parser("set", help=_("change recipe keys: KEY=VALUE, KEY+=VALUE (append to "
                                      "a list), KEY-=VALUE (remove from a list)"))
    q.add_argument("recipe", metavar="RECIPE", help=_("the recipe file (.toml)"))
    q.add_argument("assignments", nargs="+", metavar="KEY=VALUE",
                   help=_("e.g. build.jobs=4, cuda.compute_capabilities=sm_80,sm_90, "
                          "build.bazel_flags+=--copt=-Wno-c23-extensions"))
    q.set_defaults(handler=cmd_recipe_set)


def cmd_recipe_new(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Write a commented default recipe (for this machine with --from-host, for another
    with --target), through the wizard's own default_recipe()."""
    import os

    from ..core.defaults import commented_recipe_toml, default_recipe

    out = arg_path(env, args.out)
    if out.exists() and not args.force:
        raise UsageError(_("{path}: already exists").format(path=out),
                         _("Pass --force to overwrite it."))
    host = target = None
    profile = ""
    if args.from_host:
        from ..core.detect import detect_host

        host = detect_host(env=env.env)
    if args.target:
        from ..core.host import HostProfile

        path = arg_path(env, args.target)
        target = HostProfile.load(path)
        # kept relative to the recipe's folder (Recipe.resolve_path) when it is beside it
        relative = os.path.relpath(path, out.parent)
        profile = relative if not relative.startswith("..") else str(path)
    recipe = default_recipe(host, target=target, target_path=profile, backend=args.backend)
    if args.name:
        from ..core.safety import check_name

        problem = check_name(args.name)
        if problem:
            raise UsageError(f"--name: {problem}")
        recipe = recipe.with_changes({"name": args.name, "install.venv": f"~/.venvs/{args.name}"})
    text = commented_recipe_toml(recipe)
    from ..core.recipe import parse_recipe, save_recipe

    new = parse_recipe(text, str(out))
    save_recipe(new, out, backup=args.force)
    # save_recipe re-renders; keep the fully commented text instead
    out.write_text(text, encoding="utf-8")
    env.out(_("Wrote {path} ({backend} build of TensorFlow {version}).").format(
        path=out, backend=recipe.backend.kind, version=recipe.tensorflow.version))
    env.out(_("Next: `tfwizard check {recipe}`, then `tfwizard build {recipe}`.").format(
        recipe=args.out))
    return ExitStatus.OK


def cmd_recipe_validate(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Load each recipe file; exit 2 when one has problems (every problem listed)."""
    from ..core.recipe import load_recipe

    status = ExitStatus.OK
    results = []
    for name in args.files:
        try:
            recipe = load_recipe(arg_path(env, name))
            results.append({"file": name, "valid": True, "problems": [], "name": recipe.name})
            if not args.json:
                env.out(_("{file}: valid ({name})").format(file=name, name=recipe.name))
        except RecipeError as exc:
            status = ExitStatus.USAGE
            results.append({"file": name, "valid": False,
                            "problems": [p.to_dict() for p in exc.problems]})
            if not args.json:
                env.out(str(exc))
    if args.json:
        env.out(json.dumps(results if len(results) > 1 else results[0], indent=2))
    return status


def cmd_recipe_set(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Change recipe keys in place (validated; comments and NAME.toml.bak kept)."""
    from ..core.recipe import load_recipe, save_recipe
    from ..core.recipe_edit import apply_assignments, parse_assignment

    path = arg_path(env, args.recipe)
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
    _say_prerelease(env, new)
    return ExitStatus.OK


def _say_prerelease(env: Environment, recipe: Any) -> None:
    """A recipe that now names a release candidate says so (it is accepted, and marked)."""
    from ..core.knowledge import load_knowledge

    release = load_knowledge().release(recipe.tensorflow.version or "master")
    if release is not None and release.is_prerelease:
        env.out(_("note: TensorFlow {version} is a pre-release (tag {tag})").format(
            version=release.version, tag=release.git_tag))
