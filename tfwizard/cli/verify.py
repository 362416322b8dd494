"""`tfwizard verify`: check that the installed TensorFlow works (exit 1 if not)."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.errors import UsageError
from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path
from .options import load_recipe_option, python_option


def register(sub: Any) -> None:
    """Add `verify` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("verify", help=_("check that the installed TensorFlow works (exit 1 if not)"))
    where = p.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help=_("the interpreter to verify"))
    where.add_argument("--venv", metavar="DIR", help=_("the venv to verify"))
    p.add_argument("--expect", choices=("cpu", "cuda", "rocm"),
                   help=_("what must work (default: the recipe's backend, else what the wheel "
                   "says it is)"))
    p.add_argument("--recipe", metavar="RECIPE", help=_("the recipe the wheel was built from"))
    p.add_argument("--build", metavar="ID",
                   help=_("a build record (id or folder): hold TensorFlow against what that "
                          "build's wheel had to be (its wheel-check.json), and save the report "
                          "there as verify.json"))
    p.add_argument("--host", metavar="PROFILE.json",
                   help=_("this machine's profile (default: detect it)"))
    p.add_argument("--json", action="store_true", help=_("print the report as JSON"))
    p.add_argument("--save", metavar="FILE", help=_("also write the JSON report to FILE"))
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help=_("give the probe S seconds (default 300; a first GPU run may JIT)"))
    p.add_argument("--quiet-log", action="store_true", help=_("leave TensorFlow's log out"))
    p.set_defaults(handler=cmd_verify)


def interpreter(args: argparse.Namespace, env: Environment, recipe: Any) -> str:
    """The interpreter to verify: --python, --venv's, else the recipe's [install] target."""
    from ..core.install.job import venv_python

    if args.python:
        return str(python_option(env, args.python))
    if args.venv:
        return str(venv_python(arg_path(env, args.venv)))
    if recipe is not None and (recipe.install.python or recipe.install.venv):
        python = recipe.resolve_path("install.python")
        if python is not None:
            return str(python)
        venv = recipe.resolve_path("install.venv")
        assert venv is not None
        return str(venv_python(venv))
    raise UsageError(_("no interpreter to verify"),
                     _("Pass --python PATH or --venv DIR (the one the wheel was installed "
                       "into)."))


def cmd_verify(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Probe TensorFlow in the interpreter and print the report (saved where asked)."""
    from ..core.building.run.record import find_record
    from ..core.host import HostProfile
    from ..core.session import record_verification, verification_host, verify_installed
    from ..core.verify.job import render_report
    from .follow import run_job

    record = find_record(args.build, env=env.env, cwd=env.cwd) if args.build else None
    recipe = load_recipe_option(args, env)
    if recipe is None and record is not None and (record / "recipe.toml").is_file():
        from ..core.recipe import load_recipe

        recipe = load_recipe(record / "recipe.toml")
    python = interpreter(args, env, recipe)
    # judged against this machine, where the probe runs: --host's profile, else detected
    host = verification_host(HostProfile.load(arg_path(env, args.host)) if args.host else None,
                             env.env)
    # Ctrl-C stops the probe through the job's cancel(); the report then says "cancelled".
    # A build record keeps what its wheel had to be: the installed TensorFlow must still be
    report = run_job(verify_installed(python, host, recipe=recipe, record=record,
                                      expect=args.expect, env=env.env, timeout=args.timeout))
    text = report.to_json()
    saved = record_verification(report, record,
                                [arg_path(env, args.save)] if args.save else [])
    if args.json:
        env.out(text)
    else:
        env.out(render_report(report, show_log=not args.quiet_log, env=env.env))
        for path in saved:
            env.out(_("Report saved to {path}").format(path=path))
    if report.status == "cancelled":
        return ExitStatus.CANCELLED
    return ExitStatus.OK if report.ok else ExitStatus.ERROR
