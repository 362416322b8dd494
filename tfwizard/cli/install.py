"""`tfwizard install`: install a built wheel, or an official one named by its requirement,
into a venv or interpreter (its tags checked first; a failed install is compared with
`pip freeze` from before). A requirement's wheel is downloaded first with the target's pip
(core/install/requirement.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.i18n import _
from ..core.vocab import install_outcome
from .context import Environment, ExitStatus, arg_path
from .options import load_recipe_option, python_option
from .words import NOTE


def register(sub: Any) -> None:
    """Add `install` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("install", help=_("install a built wheel, or an official one by its "
                                         "requirement, into a venv or interpreter"))
    p.add_argument("wheel", metavar="WHEEL|REQUIREMENT", nargs="?",
                   help=_("a wheel file, or a requirement such as "
                          "tensorflow[and-cuda]==2.20.0: its wheel is downloaded with the "
                          "target's pip, its tags checked, then installed with its extras "
                          "(none, or tensorflow, with --wheelhouse: the wheelhouse's best "
                          "wheel for this machine)"))
    p.add_argument("--wheelhouse", metavar="URL",
                   help=_("install the team's wheelhouse wheel that serves this machine (a "
                          "simple index URL or a folder; default with no WHEEL or with "
                          "tensorflow: the --recipe's [wheelhouse] url, else "
                          "TFWIZARD_WHEELHOUSE): its hash checked against the "
                          "index, its provenance against the wheel, [and-cuda] for a CUDA "
                          "build, the provenance kept in the install record"))
    p.add_argument("--host", metavar="PROFILE",
                   help=_("with a wheelhouse: this machine's `tfwizard detect --json` file "
                          "(default: detect it)"))
    where = p.add_mutually_exclusive_group()
    where.add_argument("--venv", metavar="DIR", help=_("the virtualenv to install into"))
    where.add_argument("--python", metavar="PATH",
                       help=_("the interpreter to install into (may be tfwizard's own, if named)"))
    p.add_argument("--create", action="store_true", help=_("create the --venv first"))
    p.add_argument("--extras", action="append", metavar="NAME",
                   help=_("wheel extra, e.g. and-cuda (repeatable or comma-separated; "
                   "default: the recipe's, else none)"))
    p.add_argument("--index-url", metavar="URL", default="", help=_("pip index (a mirror)"))
    p.add_argument("--trusted-host", metavar="HOST", default="",
                   help=_("pip --trusted-host for the mirror"))
    p.add_argument("--find-links", action="append", default=[], metavar="DIR",
                   help=_("also look for packages in DIR (repeatable)"))
    p.add_argument("--no-index", action="store_true",
                   help=_("offline: only --find-links, no package index"))
    p.add_argument("--download-dir", metavar="DIR",
                   help=_("keep a requirement's downloaded wheel in DIR (default: a temporary "
                          "folder, removed afterwards)"))
    p.add_argument("--wheel-only", action="store_true",
                   help=_("replace only the installed TensorFlow with this wheel (pip "
                          "--no-deps --force-reinstall, no extras): for a venv that already "
                          "has the dependencies, after a rebuild"))
    p.add_argument("--recipe", metavar="RECIPE", help=_("take [install] defaults from a recipe"))
    p.add_argument("--timeout", type=float, default=3 * 3600.0, metavar="S",
                   help=_("stop pip after S seconds (default 3 hours)"))
    p.add_argument("--json", action="store_true", help=_("print the result as JSON"))
    p.add_argument("-v", "--verbose", action="store_true", help=_("show every pip line"))
    p.set_defaults(handler=cmd_install)


def cmd_install(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Install the wheel; pip's progress as it goes, the result at the end."""
    from ..core.install.job import (
        InstallEvent,
        InstallProgress,
        PipLine,
        VenvCreated,
        install_wheel,
        resolve_target,
        run_installation,
    )
    from ..core.install.requirement import RequirementInstallation, parse_requirement
    from ..core.streams import TFWIZARD

    recipe = load_recipe_option(args, env)
    inst = recipe.install if recipe is not None else None
    # options are relative to where the command runs; the recipe's paths to the recipe
    venv = arg_path(env, args.venv) if args.venv else (
        recipe.resolve_path("install.venv") if recipe is not None else None)
    python: str | Path | None = (
        python_option(env, args.python) if args.python
        else recipe.resolve_path("install.python") if recipe is not None else None)
    target = resolve_target(venv=venv, python=python, create=args.create)
    extras = args.extras if args.extras is not None else (list(inst.extras) if inst else [])
    extras = [e for item in extras for e in item.split(",") if e]
    last_summary = [""]

    def report(event: InstallEvent) -> None:
        if args.json:
            return
        if isinstance(event, VenvCreated):
            env.out(_("created venv {path}").format(path=event.path))
        elif isinstance(event, PipLine) and event.channel == TFWIZARD:
            env.out(NOTE + event.line)
        elif isinstance(event, PipLine):
            if args.verbose or event.channel != "stdout" or event.line.startswith("ERROR"):
                (env.err if event.channel == "stderr" else env.out)(f"  pip | {event.line}")
        elif isinstance(event, InstallProgress):
            summary = event.summary()
            if summary != last_summary[0]:
                last_summary[0] = summary
                env.out(f"{summary}: {event.message[:120]}")

    options: dict[str, Any] = dict(
        index_url=args.index_url or (inst.index_url if inst else ""),
        trusted_host=args.trusted_host or (inst.trusted_host if inst else ""),
        find_links=[str(arg_path(env, p)) for p in args.find_links],
        no_index=args.no_index, env=env.env, timeout=args.timeout,
        wheel_only=args.wheel_only)
    house = wheelhouse_option(args, env, recipe)
    record = None
    if house:
        result, record = install_from_wheelhouse(args, env, house, target, extras, options,
                                                 report)
    elif not args.wheel:
        raise UsageError(_("name a wheel or a requirement, or a wheelhouse"),
                         _("tfwizard install WHEEL|REQUIREMENT --venv DIR, or --wheelhouse URL"))
    elif (requirement := parse_requirement(args.wheel)) is None:
        result = install_wheel(arg_path(env, args.wheel), target, extras, reporter=report,
                               **options)
    else:
        result = run_installation(RequirementInstallation(
            requirement, target, extras, download_dir=arg_path(env, args.download_dir)
            if args.download_dir else None, **options), report)
    if args.json:
        env.out(json.dumps(result.to_dict(), indent=2))
    elif result.ok:
        env.out(_("Installed {requirement} into {python}.").format(
            requirement=result.requirement, python=result.python))
        if result.installed:
            env.out("  " + " ".join(result.installed))
        env.out(_("Next: `tfwizard verify --python {python}`.").format(python=result.python))
    else:
        env.out(install_outcome(result.status, result.message))
    if record is not None and not args.json:
        env.out(_("Install record: {path}").format(path=record))
    return ExitStatus.OK if result.ok else ExitStatus.ERROR


def wheelhouse_option(args: argparse.Namespace, env: Environment, recipe: Any) -> str:
    """The wheelhouse to install from: --wheelhouse (WHEEL then must be none or tensorflow),
    else the recipe's or TFWIZARD_WHEELHOUSE's when WHEEL is none or tensorflow; "" for an
    install as before."""
    from ..core.wheelhouse import wheelhouse_url
    from ..core.wheelhouse.fetch import wheelhouse_requirement

    fits = wheelhouse_requirement(args.wheel) is not None
    if args.wheelhouse and not fits:
        raise UsageError(_("--wheelhouse installs tensorflow from the wheelhouse, not "
                           "{wheel}").format(wheel=args.wheel),
                         _("Leave WHEEL out, or name tensorflow (with a version: "
                           "tensorflow==2.21.*)."))
    return wheelhouse_url(args.wheelhouse, recipe, env.env) if fits else ""


def install_from_wheelhouse(args: argparse.Namespace, env: Environment, url: str,
                            target: Any, extras: list[str], options: dict[str, Any],
                            report: Any) -> tuple[Any, Any]:
    """The wheelhouse's best wheel for this machine, installed; (result, install record)."""
    from ..core.host import HostProfile
    from ..core.install.job import run_installation
    from ..core.knowledge import load_knowledge
    from ..core.wheelhouse.fetch import WheelhouseInstallation, wheelhouse_requirement

    if args.host:
        host = HostProfile.load(arg_path(env, args.host))
    else:
        from ..core.detect import detect_host

        host = detect_host(env=env.env)
    options = {k: v for k, v in options.items() if k != "wheel_only"}
    job = WheelhouseInstallation(
        url, target, host=host, kb=load_knowledge(), requirement=wheelhouse_requirement(
            args.wheel), extras=extras, download_dir=arg_path(env, args.download_dir)
        if args.download_dir else None, **options)
    return run_installation(job, report), job.record
