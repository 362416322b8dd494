"""What stands between a recipe and Docker work: hosts, the check, the preflight.

`prepare()` is the common start of `tfwizard build` and `tfwizard fetch`: load the recipe
and the hosts, stop on check errors, make the plan, print it for --dry-run, refuse a bad
output folder, run the preflight (proxies, paths, the build image). Each gate returns None
to go on, or the exit status to stop with; `--force` goes past errors.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..core.i18n import _, ngettext
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


def check_gate(recipe: Recipe, build_host: HostProfile, target_host: HostProfile | None,
               args: argparse.Namespace, env: Environment) -> ExitStatus | None:
    """Refuse to build while `tfwizard check` reports an error (unless --force)."""
    from ..core.findings import errors
    from ..core.rules import evaluate

    findings = evaluate(recipe, build_host, target_host)
    failed = errors(findings)
    show_findings(failed + [f for f in findings if f.severity == "warning"], args, env)
    if failed and not args.force:
        show_note(ngettext("{count} error in the recipe; fix it (`tfwizard check {recipe}`) "
                           "or pass --force to build anyway.",
                           "{count} errors in the recipe; fix them (`tfwizard check {recipe}`) "
                           "or pass --force to build anyway.", len(failed)).format(
            count=len(failed), recipe=args.recipe), env)
        return ExitStatus.ERROR
    return None


def image_findings(recipe: Recipe, env: Environment, build: HostProfile | None,
                   target: HostProfile | None, plan: Any = None) -> list[Any]:
    """The build image's findings (preflight.check_image) for the recipe's plan."""
    from ..core.building.plan.plan import make_plan
    from ..core.building.run.preflight import check_image
    from ..core.errors import TfWizardError

    if plan is None:
        try:
            plan = make_plan(recipe, build_host=build, target_host=target)
        except TfWizardError:
            return []  # no plan (unknown release...): the rules already say why
    return check_image(plan, env=env.env)


def remote_findings(recipe: Recipe, env: Environment, plan: Any = None,
                    build: HostProfile | None = None,
                    target: HostProfile | None = None) -> list[Any]:
    """What the remote executor says (remotecheck.py): capabilities, then the probe with
    the plan's platform properties (made here when not given)."""
    if not recipe.remote.executor:
        return []  # before the imports: the REAPI client loads for a remote recipe only
    from ..core.building.plan.plan import make_plan
    from ..core.errors import TfWizardError
    from ..core.remote.check import check_service, plan_properties

    if plan is None:
        try:
            plan = make_plan(recipe, build_host=build, target_host=target)
        except TfWizardError:
            plan = None
    properties = plan_properties(plan.flag_list) if plan is not None else []
    return check_service(recipe, env.env, properties).findings


def preflight_gate(recipe: Recipe, args: argparse.Namespace, env: Environment,
                   plan: Any = None) -> ExitStatus | None:
    """Before starting Docker work (build, fetch): the preflight checks, then (when they
    found no error) the build image of `plan`; errors stop the command unless --force."""
    from ..core.building.run.preflight import preflight
    from ..core.findings import errors, sort_findings

    findings = preflight(recipe, env.env)
    # the remote check repeats the preflight's consent findings for the executor's headers
    findings += [f for f in remote_findings(recipe, env, plan) if f not in findings]
    if plan is not None and not errors(findings):
        findings = sort_findings(findings + image_findings(recipe, env, None, None, plan))
    show_findings(findings, args, env)
    failed = errors(findings)
    if failed and not getattr(args, "force", False):
        show_note(ngettext("preflight found {count} error; fix it (`tfwizard check "
                           "--preflight RECIPE`) or pass --force to go on anyway.",
                           "preflight found {count} errors; fix them (`tfwizard check "
                           "--preflight RECIPE`) or pass --force to go on anyway.", len(failed))
                  .format(count=len(failed)), env)
        return ExitStatus.ERROR
    return None


def check_out(out_dir: Path | None) -> None:
    """Refuse an output folder that is a file, not writable or a system folder, now."""
    from ..core.safety import check_output_dir

    problem = check_output_dir(out_dir) if out_dir is not None else None
    if problem:
        raise UsageError(_("the output folder {path} {problem}").format(path=out_dir,
                                                                         problem=problem),
                         _("Choose another with --out DIR (or output.dir in the recipe)."))


@dataclass(frozen=True)
class Prepared:
    """A recipe that passed the gates, and the plan made for it."""

    recipe_path: Path
    recipe: Recipe
    build_host: HostProfile
    plan: Any  # a core.building.plan.plan.BuildPlan
    #: plans the recipe again with a clone's own facts (core/building/run/sourcefollow.py)
    replan: Any = None


def prepare(args: argparse.Namespace, env: Environment, planner: Callable[..., Any]
            ) -> ExitStatus | Prepared:
    """Shared by build and fetch: load the recipe and hosts, stop on check errors, make the
    plan with `planner`, print it for --dry-run, and run the preflight; returns an exit
    status to stop with, or what passed."""
    from ..core.building.plan.render import render_commands
    from ..core.recipe import load_recipe

    recipe_path = arg_path(env, args.recipe)
    recipe = load_recipe(recipe_path)
    build_host, target_host = load_hosts(args, env, recipe)
    status = check_gate(recipe, build_host, target_host, args, env)
    if status is not None:
        return status
    from ..core.building.run.sourcefollow import SourceReplan

    replan = SourceReplan(recipe, planner, {"build_host": build_host,
                                            "target_host": target_host})
    plan = planner(recipe, **replan.kwargs)
    if args.dry_run:
        env.out(plan.to_json() if args.json else render_commands(plan).rstrip("\n"))
        return ExitStatus.OK
    if getattr(args, "out", None):
        check_out(arg_path(env, args.out))  # a usage error before looking at the image
    if recipe.remote.executor:  # flags for the Bazel in the image, actions pinned to it
        plan = fit_plan_to_image(recipe, plan, replan, env)
    status = preflight_gate(recipe, args, env, plan)  # proxies, paths, the image
    if status is not None:
        return status
    return Prepared(recipe_path, recipe, build_host, plan, replan)


def fit_plan_to_image(recipe: Recipe, plan: Any, replan: Any, env: Environment) -> Any:
    """The plan again with what the build image says: its Bazel (`bazel --version`) and
    repo digests (kept in `replan`, so a plan remade after the clone has them too); the
    same plan when the image cannot be asked."""
    from ..core.docker.imagefacts import read_image_facts

    facts = read_image_facts(plan.image, env.env, user=plan.user)
    if facts is None:
        return plan
    replan.kwargs.update(image_bazel=facts.bazel, repo_digests=facts.repo_digests)
    return replan.planner(recipe, **replan.kwargs)

