"""`tfwizard install` and `tfwizard verify`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .cli import Environment, ExitStatus, _path
from .core.errors import UsageError
from .core.i18n import _


def cmd_install(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.install import (
        InstallEvent,
        InstallFinished,
        InstallProgress,
        PipLine,
        VenvCreated,
        install_wheel,
        resolve_target,
    )

    recipe = _load_recipe(args, env)
    inst = recipe.install if recipe is not None else None
    # options are relative to where the command runs; the recipe's paths to the recipe
    venv = _path(env, args.venv) if args.venv else (
        recipe.resolve_path("install.venv") if recipe is not None else None)
    python: str | Path | None = (
        (_path(env, args.python) if "/" in args.python else args.python) if args.python
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
        elif isinstance(event, PipLine):
            if args.verbose or event.channel != "stdout" or event.line.startswith("ERROR"):
                (env.err if event.channel == "stderr" else env.out)(f"  pip | {event.line}")
        elif isinstance(event, InstallProgress):
            summary = event.summary()
            if summary != last_summary[0]:
                last_summary[0] = summary
                env.out(f"{summary}: {event.message[:120]}")
        elif isinstance(event, InstallFinished):
            pass

    result = install_wheel(
        _path(env, args.wheel), target, extras,
        index_url=args.index_url or (inst.index_url if inst else ""),
        trusted_host=args.trusted_host or (inst.trusted_host if inst else ""),
        find_links=[str(_path(env, p)) for p in args.find_links], no_index=args.no_index,
        env=env.env, reporter=report, timeout=args.timeout,
    )
    if args.json:
        env.out(json.dumps(result.to_dict(), indent=2))
    elif result.ok:
        env.out(_("Installed {requirement} into {python}.").format(
            requirement=result.requirement, python=result.python))
        if result.installed:
            env.out("  " + " ".join(result.installed))
        env.out(_("Next: `tfwizard verify --python {python}`.").format(python=result.python))
    else:
        from .cli_build import install_failed_text

        env.out(install_failed_text(result.status, result.message))
    return ExitStatus.OK if result.ok else ExitStatus.ERROR


def _load_recipe(args: argparse.Namespace, env: Environment) -> Any:
    if not getattr(args, "recipe", None):
        return None
    from .core.recipe import load_recipe

    return load_recipe(_path(env, args.recipe))


def _python_for(args: argparse.Namespace, env: Environment, recipe: Any) -> str:
    from .core.install import venv_python

    if args.python and args.venv:
        raise UsageError(_("give --python or --venv, not both"))
    if args.python:
        return str(_path(env, args.python)) if "/" in args.python else args.python
    if args.venv:
        return str(venv_python(_path(env, args.venv)))
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


def _record_dir(args: argparse.Namespace, env: Environment) -> Path | None:
    if not args.build:
        return None
    candidate = _path(env, args.build)
    if candidate.is_dir():
        return candidate
    from .core.record import data_dir

    folder = data_dir(env.env) / "builds" / args.build
    if not folder.is_dir():
        raise UsageError(
            _("no build record {id!r} (looked in {folder})").format(id=args.build, folder=folder),
            _("Give a build id from the builds folder, or its path."))
    return folder


def cmd_verify(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.host import HostProfile
    from .core.verify import render_report, verify

    record = _record_dir(args, env)
    recipe = _load_recipe(args, env)
    if recipe is None and record is not None and (record / "recipe.toml").is_file():
        from .core.recipe import load_recipe

        recipe = load_recipe(record / "recipe.toml")
    python = _python_for(args, env, recipe)
    if args.host:
        host = HostProfile.load(_path(env, args.host))
    else:
        from .core.detect import detect_host

        host = detect_host(env=env.env)
    report = verify(python, expect=args.expect, host=host, timeout=args.timeout, env=env.env,
                    recipe=recipe)
    text = report.to_json()
    saved: list[Path] = []
    for target in ([record / "verify.json"] if record else []) + (
            [_path(env, args.save)] if args.save else []):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n", encoding="utf-8")
        saved.append(target)
    if args.json:
        env.out(text)
    else:
        env.out(render_report(report, show_log=not args.quiet_log))
        for path in saved:
            env.out(_("Report saved to {path}").format(path=path))
    return ExitStatus.OK if report.ok else ExitStatus.ERROR


def register(sub: Any) -> None:
    p = sub.add_parser("install", help=_("install a built wheel into a venv or interpreter"))
    p.add_argument("wheel", metavar="WHEEL")
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
    p.add_argument("--recipe", metavar="RECIPE", help=_("take [install] defaults from a recipe"))
    p.add_argument("--timeout", type=float, default=3 * 3600.0, metavar="S",
                   help=_("stop pip after S seconds (default 3 hours)"))
    p.add_argument("--json", action="store_true", help=_("print the result as JSON"))
    p.add_argument("-v", "--verbose", action="store_true", help=_("show every pip line"))
    p.set_defaults(handler=cmd_install)

    p = sub.add_parser("verify", help=_("check that the installed TensorFlow works (exit 1 if not)"))
    where = p.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help=_("the interpreter to verify"))
    where.add_argument("--venv", metavar="DIR", help=_("the venv to verify"))
    p.add_argument("--expect", choices=("cpu", "cuda", "rocm"),
                   help=_("what must work (default: the recipe's backend, else what the wheel "
                   "says it is)"))
    p.add_argument("--recipe", metavar="RECIPE", help=_("the recipe the wheel was built from"))
    p.add_argument("--build", metavar="ID",
                   help=_("a build record (id or folder): save the report there as verify.json"))
    p.add_argument("--host", metavar="PROFILE.json",
                   help=_("this machine's profile (default: detect it)"))
    p.add_argument("--json", action="store_true", help=_("print the report as JSON"))
    p.add_argument("--save", metavar="FILE", help=_("also write the JSON report to FILE"))
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help=_("give the probe S seconds (default 300; a first GPU run may JIT)"))
    p.add_argument("--quiet-log", action="store_true", help=_("leave TensorFlow's log out"))
    p.set_defaults(handler=cmd_verify)
