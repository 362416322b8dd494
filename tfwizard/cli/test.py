"""`tfwizard test RECIPE [TARGET...] [--json] [--summary [FILE]]`: `bazel test` in the
recipe's warm build container (core/build/testrun.py), each test's result, a failing test's
own log tail; without targets, the tests of the change (cli/testsel.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path
from .shell import add_idle_option, start_warm
from .testsel import add_selection_options, pick, write_summary

#: lines of a failing test's own log shown under it
TAIL_LINES = 30


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
    add_selection_options(p)
    p.set_defaults(handler=cmd_test)


def cmd_test(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Start (or reuse) the warm container, run the tests, print their results."""
    from ..core.build import dockerutil, testrun
    from ..core.build.plan import make_plan
    from ..core.build.record import data_dir, new_build_id
    from ..core.errors import UsageError
    from ..core.recipe import load_recipe

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
    folder = data_dir(env.env) / "tests" / new_build_id()
    client = dockerutil.connect(env.env)
    try:
        box = start_warm(env, client, path, recipe, plan, args.idle)
        if args.targets:
            targets, gpu = list(args.targets), testrun.has_gpu(box)
        else:
            targets, gpu = pick(env, args, box, recipe)
        if args.list or not targets:
            return ExitStatus.OK
        try:
            run = testrun.run_tests(box, targets, gpu=gpu, record_dir=folder,
                                    on_output=lambda _c, line: env.err(line))
        except KeyboardInterrupt:
            box.cancel()
            raise
        if args.summary:
            write_summary(env, args, box, recipe, run, targets)
    finally:
        client.close()
    if args.json:
        env.out(json.dumps(run.to_json()))
    elif args.summary != "-":
        _print_run(env, run)
    return ExitStatus.OK if run.exit_code == 0 else ExitStatus.ERROR


def _print_run(env: Environment, run: Any) -> None:
    """Each test's result line, the failing tests' own log tails, the counts."""
    from ..core.build.testrun import log_tail

    for test in run.tests:
        cached = _(" (cached)") if test.cached else ""
        env.out(_("{status:<8} {label}  {seconds:.1f} s, {attempts} attempt(s){cached}").format(
            status=test.status, label=test.label, seconds=test.duration_s,
            attempts=test.attempts, cached=cached))
    for test in run.failed:
        log = run.record_dir / "tests" / test.folder() / "test.log"
        if not log.is_file():
            continue
        env.out("")
        env.out(_("--- {label}: the last lines of its test.log ({path})").format(
            label=test.label, path=log))
        for line in log_tail(log.read_text("utf-8", "replace"), TAIL_LINES):
            env.out(line)
    passed = len(run.tests) - len(run.failed)
    env.out("")
    env.out(_("{passed} of {total} tests passed; Bazel: {exit} (record: {path})").format(
        passed=passed, total=len(run.tests), exit=run.exit_name or run.exit_code,
        path=run.record_dir))
