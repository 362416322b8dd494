"""`tfwizard test RECIPE [TARGET...] [--json] [--summary [FILE]]`: `bazel test` in the
recipe's warm build container as a long job (core/testloop/job.py), followed live
(cli/testprint.py): each test's result, a failing test's own log tail; without targets, the
tests of the change (cli/testsel.py). `--attach [--run ID]` follows a run whose tfwizard
process went away."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path
from .options import add_idle_option, start_warm
from .testsel import add_selection_options, pick, write_summary


def register(sub: Any) -> None:
    """Add `test` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "test", help=_("run TensorFlow's tests (bazel test) in the recipe's warm build "
                       "container, with TensorFlow's tag filters"))
    p.add_argument("recipe", metavar="RECIPE")
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help=_("Bazel test targets or patterns (//tensorflow/core:all)") + "; "
                   + _("none: the tests that depend on the changed files"))
    add_idle_option(p)
    p.add_argument("--json", action="store_true",
                   help=_("print the run as one JSON object (Bazel's output on stderr)"))
    p.add_argument("--attach", action="store_true",
                   help=_("follow a test run whose tfwizard process went away (the "
                          "running one, or the one --run names)"))
    p.add_argument("--run", default="", metavar="ID",
                   help=_("with --attach: the test run's record id"))
    p.add_argument("--bazel-opt", action="append", default=[], metavar="OPTION",
                   help=_("one more Bazel option for this run only (repeatable), e.g. "
                          "--runs_per_test=3 or --test_output=all"))
    add_selection_options(p)
    p.set_defaults(handler=cmd_test)


def cmd_test(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Start (or reuse) the warm container, run the tests live, print their results."""
    from ..core.building.plan.plan import make_plan
    from ..core.building.run.record import new_build_id
    from ..core.docker import client as dockerutil
    from ..core.errors import UsageError
    from ..core.paths import data_dir
    from ..core.recipe import load_recipe
    from ..core.testloop import run as testrun
    from ..core.testloop.job import TestJob
    from .follow import follow

    if args.json and args.summary == "-":
        raise UsageError(_("--json and --summary to standard output exclude each other: "
                           "give --summary a FILE"))
    if (args.summary or "").endswith(".toml"):  # `--summary RECIPE`: argparse took it as FILE
        raise UsageError(_("--summary writes Markdown, and {path} looks like the recipe: put "
                           "--summary after RECIPE, or give it a FILE").format(
            path=args.summary))
    path = arg_path(env, args.recipe)
    recipe = load_recipe(path)
    plan = make_plan(recipe, recipe_dir=path.parent)
    tests_dir = data_dir(env.env) / "tests"
    client = dockerutil.connect(env.env)
    try:
        box = start_warm(env, client, path, recipe, plan, args.idle)
        if args.attach:
            job = TestJob.attach(box, _attach_folder(tests_dir, args.run))
            targets = list(job.spec.get("targets", []))
        else:
            if args.targets:
                targets, gpu = list(args.targets), testrun.has_gpu(box)
            else:
                targets, gpu = pick(env, args, box, recipe)
            if args.list or not targets:
                return ExitStatus.OK
            job = TestJob.start(box, targets, gpu=gpu, record_dir=tests_dir / new_build_id(),
                                flags=args.bazel_opt)
        quiet = args.summary == "-"  # the summary is standard output's
        follow(job, env, as_json=args.json, printer=_printer(env, args.json, quiet))
        if args.summary and job.result is not None:
            write_summary(env, args, box, recipe, job.result.run, targets)
    finally:
        client.close()
    result = job.result
    if result is None or result.status == "cancelled":
        return ExitStatus.CANCELLED
    return ExitStatus.OK if result.ok else ExitStatus.ERROR


def _printer(env: Environment, as_json: bool, quiet: bool) -> Any:
    from .testprint import TestBarPrinter, TestLinePrinter

    if not as_json and not quiet and env.stdout_isatty:
        return TestBarPrinter(env)
    return TestLinePrinter(env, as_json=as_json, results=not quiet)


def _attach_folder(tests_dir: Path, wanted: str) -> Path:
    """The record folder of the run to follow: the one named, else the one running."""
    from ..core.errors import UsageError
    from ..core.testloop.job import running_runs

    if wanted:
        return tests_dir / wanted
    running = running_runs(tests_dir)
    if not running:
        raise UsageError(_("no tfwizard test run is running"))
    return running[0]
