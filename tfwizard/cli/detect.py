"""`tfwizard detect`: report this machine (GPUs, driver, CPU, OS, Docker, RAM)."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path


def register(sub: Any) -> None:
    """Add `detect` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("detect", help=_("report this machine: GPUs, driver, CPU, OS, Docker, RAM"))
    p.add_argument("--json", action="store_true", help=_("print the host profile as JSON"))
    p.add_argument("--python", action="append", default=[], metavar="PATH",
                   help=_("also describe this interpreter as an install target (repeatable)"))
    p.set_defaults(handler=cmd_detect)


def cmd_detect(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Detect this machine and print its profile (text, or JSON for `--host`/`--target`)."""
    from ..core.detect import detect_host

    profile = detect_host(env=env.env,
                          extra_pythons=[arg_path(env, p) for p in args.python])
    if args.json:
        env.out(profile.to_json())
    else:
        from ..core.detect.report import render_host_report

        env.out(render_host_report(profile) + "\n" + wizard_readiness(env))
    return ExitStatus.OK


def wizard_readiness(env: Environment) -> str:
    """The report's last section: whether `tfwizard-gui` can open a window here (the
    system libraries of Qt's platform plugin, the check the wizard makes at its start)."""
    import sys

    from ..core.detect.report import wrap_line

    if not sys.platform.startswith("linux"):
        return ""
    from ..core import qtlibs

    checks = qtlibs.check_qt(env.env)
    lines = [_("Wizard (tfwizard-gui)"), wrap_line(qtlibs.summary(checks))]
    if not qtlibs.usable(checks):
        lines += [wrap_line(line) for line in qtlibs.report(checks).splitlines()]
    return "\n".join(lines) + "\n"
