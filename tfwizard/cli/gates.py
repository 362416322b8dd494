"""What stands between a recipe and Docker work, as the command line shows it.

`prepare()` is the common start of `tfwizard build` and `tfwizard fetch`: load the recipe
and the hosts, then run the core's pipeline (core/session.py: stop on check errors, make
the plan, refuse a bad output folder, run the preflight: proxies, paths, the build image)
and print what it finds, the plan for --dry-run, and why it stops; `--force` goes past
errors. The decisions are the session's, shared with the wizard; this only renders them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.i18n import ngettext
from ..core.session import Prepared
from ..core.vocab import severity_word
from .context import Environment, ExitStatus, arg_path
from .render import finding_json
from .term import finding_lines, terminal
from .words import NOTE

if TYPE_CHECKING:  # the recipe and host modules load when a command reads them
    from ..core.host import HostProfile
    from ..core.recipe import Recipe


def load_hosts(args: argparse.Namespace, env: Environment,
               recipe: Recipe) -> tuple[HostProfile, HostProfile | None]:
    """The build host (--host or this machine) and the target (--target, the recipe's, or
    None)."""
    from ..core.host import HostProfile

    if getattr(args, "host", None):
        build = HostProfile.load(arg_path(env, args.host))
    else:
        from ..core.detect.cache import cached_host

        build = cached_host(env.env)  # detected, or kept from the last TTL_S seconds
    target: HostProfile | None = None
    if getattr(args, "target", None):
        target = HostProfile.load(arg_path(env, args.target))
    else:
        path = recipe.resolve_path("target.host_profile")
        target = HostProfile.load(path) if path is not None else None
    return build, target


def show_findings(findings: list[Any], args: argparse.Namespace, env: Environment) -> None:
    """A gate's findings: JSON objects with --json, else lines on standard error, wrapped
    and coloured there as `check` does when it is a terminal (cli/term.py)."""
    term = terminal(env, stderr=True)
    for f in findings:
        if getattr(args, "json", False):
            env.out(finding_json(f))
        else:
            for line in finding_lines(term, f.severity, severity_word(f.severity), f.code,
                                      f.message):
                env.err(line)


def show_note(text: str, env: Environment) -> None:
    """A gate's closing note on standard error, wrapped under its "note:" word."""
    term = terminal(env, stderr=True)
    lines = term.wrap(NOTE, text, indent=len(NOTE))
    if term.width is not None:  # wrap() indents the first line: the word goes there
        lines[0] = NOTE + lines[0][len(NOTE):]
    for line in lines:
        env.err(line)


def refused(prepared: Prepared, args: argparse.Namespace, env: Environment) -> ExitStatus | None:
    """The closing note of the stage that refused the build (the check or the preflight),
    and the status to stop with; None when it may go on."""
    from ..core.findings import errors
    from ..core.session import CHECK

    stage = prepared.refused_by
    if stage is None:
        return None
    if stage == CHECK:
        count = len(errors(list(prepared.check)))
        show_note(ngettext("{count} error in the recipe; fix it (`tfwizard check {recipe}`) "
                           "or pass --force to build anyway.",
                           "{count} errors in the recipe; fix them (`tfwizard check {recipe}`) "
                           "or pass --force to build anyway.", count).format(
            count=count, recipe=args.recipe), env)
    else:
        count = len(errors(list(prepared.preflight)))
        show_note(ngettext("preflight found {count} error; fix it (`tfwizard check "
                           "--preflight RECIPE`) or pass --force to go on anyway.",
                           "preflight found {count} errors; fix them (`tfwizard check "
                           "--preflight RECIPE`) or pass --force to go on anyway.", count)
                  .format(count=count), env)
    return ExitStatus.ERROR


def check_out(out_dir: Path | None) -> None:
    """Refuse an output folder that is a file, not writable or a system folder, now."""
    from ..core.session import check_output

    check_output(out_dir)


def prepare(args: argparse.Namespace, env: Environment, planner: Callable[..., Any],
            out_dir: Path | None = None, wheel: bool = True) -> ExitStatus | Prepared:
    """Shared by build and fetch: load the recipe and hosts, then the core's pipeline
    (core/session.py: check, plan, refit to the image, preflight) with each stage's findings
    shown as it ends, the plan printed for --dry-run; returns an exit status to stop with,
    or what passed. `out_dir` (the wheel's folder, default the recipe's output.dir; none
    without a `wheel`) is refused before the image is asked."""
    from ..core.building.plan.render import render_commands
    from ..core.recipe import load_recipe
    from ..core.session import prepare as prepare_build

    recipe_path = arg_path(env, args.recipe)
    recipe = load_recipe(recipe_path)
    build_host, target_host = load_hosts(args, env, recipe)
    prepared = prepare_build(
        recipe, build_host, target_host, recipe_path=recipe_path, env=env.env,
        planner=planner, force=getattr(args, "force", False), preflight=not args.dry_run,
        out_dir=out_dir, wheel=wheel, report=lambda _stage, found: show_findings(found, args, env))
    status = refused(prepared, args, env)
    if status is not None:
        return status
    if args.dry_run:
        plan = prepared.plan
        assert plan is not None  # not refused: the check passed (or --force)
        env.out(plan.to_json() if args.json else render_commands(plan).rstrip("\n"))
        return ExitStatus.OK
    return prepared
