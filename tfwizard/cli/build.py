"""`tfwizard build`: build the recipe's wheel in Docker, with live progress; `--attach`
follows a build whose front end stopped; `--install [--verify]` chains into those."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.i18n import _
from ..core.vocab import install_outcome
from .context import Environment, ExitStatus, arg_path
from .gates import Prepared, check_out, prepare


def register(sub: Any) -> None:
    """Add `build` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("build", help=_("build the recipe's wheel in Docker, with live progress"))
    p.add_argument("recipe", metavar="RECIPE", nargs="?", help=_("the recipe file (.toml)"))
    p.add_argument("--attach", nargs="?", const="", metavar="BUILD_ID",
                   help=_("follow a build whose `tfwizard build` stopped (killed, crashed, "
                        "detached): replay its log, follow it to the end, copy the wheel out "
                        "(default: the one build running)"))
    p.add_argument("--out", metavar="DIR",
                   help=_("folder for the wheel (default: the recipe's output.dir, else the "
                        "build record folder)"))
    p.add_argument("--dry-run", action="store_true",
                   help=_("print the plan (commands a person could paste) and build nothing"))
    p.add_argument("--json", action="store_true", help=_("one JSON event per line"))
    p.add_argument("--host", metavar="PROFILE",
                   help=_("the build host's `tfwizard detect --json` file (default: detect)"))
    p.add_argument("--target", metavar="PROFILE",
                   help=_("the machine the wheel is for (default: the recipe's, else this one)"))
    p.add_argument("--fresh", action="store_true",
                   help=_("a cold build in new containers and volumes, as before warm builds "
                        "(the recipe's warm workspace is left as it is)"))
    p.add_argument("--force", action="store_true",
                   help=_("build even when `tfwizard check` reports errors"))
    p.add_argument("--install", action="store_true",
                   help=_("then install the wheel as the recipe's [install] section says"))
    p.add_argument("--venv", metavar="DIR", help=_("with --install: this venv (created if needed)"))
    p.add_argument("--find-links", action="append", default=[], metavar="DIR",
                   help=_("with --install: also look for dependencies here (repeatable)"))
    p.add_argument("--no-index", action="store_true",
                   help=_("with --install: do not use the package index (offline)"))
    p.add_argument("--verify", action="store_true",
                   help=_("with --install: then verify TensorFlow in that interpreter"))
    p.set_defaults(handler=cmd_build)


def cmd_build(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Check, plan, preflight, then run the build in Docker and follow it: the core's
    pipeline (core/session.py), shown as it goes."""
    from ..core.building.plan.plan import make_plan
    from .follow import follow  # asyncio: only for a command that follows a build

    if args.attach is not None:
        return cmd_attach(args, env)
    if not args.recipe:
        raise UsageError(_("tfwizard build needs a RECIPE (or --attach [BUILD_ID])"))
    out_dir = arg_path(env, args.out) if args.out else None
    prepared = prepare(args, env, make_plan, out_dir=out_dir)
    if not isinstance(prepared, Prepared):
        return prepared
    started = make_runner(args, env, prepared)
    runner = started.runner
    status = follow(runner, env, as_json=args.json)
    result = runner.result
    if status != ExitStatus.OK or result is None:
        return status
    offer_publish(env, prepared.recipe, result, as_json=args.json)
    if args.install and result.wheel:
        return install_and_verify(args, env, prepared.recipe, Path(result.wheel),
                                  Path(result.record_dir), prepared.build_host,
                                  warm=started.warm)
    return ExitStatus.OK


def offer_publish(env: Environment, recipe: Any, result: Any, *, as_json: bool) -> None:
    """After a build that handed out a wheel, with a wheelhouse configured: how to publish."""
    from ..core.wheelhouse import publish_hint, wheelhouse_url

    if result.wheel and not as_json and wheelhouse_url(None, recipe, env.env):
        env.out(publish_hint(result.build_id))


def make_runner(args: argparse.Namespace, env: Environment, prepared: Prepared) -> Any:
    """The session's runner (warm unless --fresh or the plan cannot: said on stderr)."""
    from ..core.session import start

    started = start(prepared, fresh=args.fresh, env=env.env)
    if started.cold_reason and not args.json:
        env.err("tfwizard: " + _("a cold build: {reason}").format(reason=started.cold_reason))
    return started


def cmd_attach(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """`tfwizard build --attach [BUILD_ID]`: follow a build its front end left (a warm
    build's exec first, else a cold build's containers)."""
    from ..core.building.warm.attachany import attach_runner
    from .follow import follow

    out_dir = arg_path(env, args.out) if args.out else None
    check_out(out_dir)
    runner = attach_runner(args.attach or None, env=env.env, out_dir=out_dir)
    if not args.json and runner.record is not None:
        env.err("tfwizard: " + _("attaching to build {id} (record: {path})").format(
            id=runner.build_id, path=runner.record.path))
    return follow(runner, env, as_json=args.json)


def install_and_verify(args: argparse.Namespace, env: Environment, recipe: Any, wheel: Path,
                       record: Path, host: Any, *, warm: bool = False) -> ExitStatus:
    """`build --install [--verify]`: chain into install (and verify) with the recipe's
    [install] section through the session, which keeps their reports in the build record.
    After a `warm` build into a venv that has the wheel's dependencies, only the wheel is
    reinstalled."""
    from ..core.install.job import InstallProgress
    from ..core.session import install_built, install_target, only_the_wheel

    # --venv is relative to where the command runs; the recipe's paths to the recipe
    target = install_target(recipe, arg_path(env, args.venv) if args.venv else None)
    last = [""]

    def report(event: Any) -> None:
        if args.json:
            env.out(json.dumps(event.to_dict()))
        elif isinstance(event, InstallProgress) and event.summary() != last[0]:
            last[0] = event.summary()
            env.out(_("install: {summary}").format(summary=last[0]))

    if not args.json:
        env.out(_("Installing {wheel} into {python} ...").format(wheel=wheel.name,
                                                                 python=target.python))
    alone = only_the_wheel(recipe, wheel, target, warm=warm)
    if alone and not args.json:
        env.out(_("reinstalling only the TensorFlow wheel: {python} has its dependencies"
                  ).format(python=target.python))
    result = install_built(recipe, wheel, target, record=record, wheel_only=alone,
                           find_links=[str(arg_path(env, p)) for p in args.find_links],
                           no_index=args.no_index, env=env.env, reporter=report)
    if not result.ok:
        env.out(install_outcome(result.status, result.message))
        return ExitStatus.ERROR
    if not args.json:
        env.out(_("Installed {requirement} into {python}.").format(
            requirement=result.requirement, python=result.python))
    if not args.verify:
        if not args.json:
            env.out(_("Next: `tfwizard verify --python {python} --build {record}`.").format(
                python=result.python, record=record))
        return ExitStatus.OK
    return verify_build(args, env, recipe, str(result.python), record, host)


def verify_build(args: argparse.Namespace, env: Environment, recipe: Any, python: str,
                 record: Path, host: Any) -> ExitStatus:
    """`build --install --verify`: the session's verification on this machine (the build
    host's profile), its report kept in the record as verify.json."""
    from ..core.session import record_verification, verification_host, verify_installed
    from ..core.verify.job import render_report

    checked = verify_installed(python, verification_host(host, env.env), recipe=recipe,
                               record=record, env=env.env).run()
    record_verification(checked, record)
    env.out(checked.to_json() if args.json else render_report(checked, show_log=False,
                                                                 env=env.env))
    return ExitStatus.OK if checked.ok else ExitStatus.ERROR
