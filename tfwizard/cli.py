"""The headless command line: argparse -> core -> text or JSON, returning an ExitStatus.

`main(argv, env)` is injectable: tests pass an Environment with their own streams and
variables and assert on the text and the exit status. Tracebacks only with --debug.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import io
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from . import __version__
from .core.errors import (
    BuildCancelled,
    InstallCancelled,
    RecipeError,
    TfWizardError,
    UsageError,
    WheelIncompatible,
)
from .core.i18n import N_, _, language, language_from_env, set_language, translate


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1  # the command ran and found problems (errors in check, a failed build)
    USAGE = 2  # bad input: arguments, recipe, profile
    CANCELLED = 130


#: the exit status of each kind of error, most specific first (the core knows nothing of
#: exit statuses); any other TfWizardError is ERROR
ERROR_STATUS: tuple[tuple[type[TfWizardError], ExitStatus], ...] = (
    (BuildCancelled, ExitStatus.CANCELLED),
    (InstallCancelled, ExitStatus.CANCELLED),
    (WheelIncompatible, ExitStatus.USAGE),
    (UsageError, ExitStatus.USAGE),
)


@dataclass
class Environment:
    """Everything a command touches of the outside world."""

    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path = field(default_factory=Path.cwd)
    #: what `-` reads (`tfwizard diagnose -`): text or binary
    stdin: IO[Any] = field(default_factory=lambda: sys.stdin)

    @property
    def stdout_isatty(self) -> bool:
        isatty = getattr(self.stdout, "isatty", None)
        return bool(isatty and isatty())

    def out(self, text: str = "") -> None:
        print(text, file=self.stdout)

    def err(self, text: str) -> None:
        print(text, file=self.stderr)



#: argparse's own texts a user can see (its gettext msgids), translated through our
#: catalog while main() runs; the rest of its texts are programming errors
ARGPARSE_TEXTS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("can't open '%(filename)s': %(error)s"),
    N_("unrecognized arguments: %s"),
    N_("not allowed with argument %s"),
    N_("ignored explicit argument %r"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("expected %s argument"),
    N_("expected %s arguments"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("unexpected option string: %s"),
    N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
)


def _argparse_gettext(text: str) -> str:
    return translate(text)


def _argparse_ngettext(singular: str, plural: str, n: int) -> str:
    return translate(singular if n == 1 else plural)


@contextlib.contextmanager
def _argparse_in_our_language() -> Iterator[None]:
    """argparse looks its texts up through its module's `_`/`ngettext` (gettext's
    'messages' domain, which we do not ship): point those at our catalog meanwhile."""
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    argparse._, argparse.ngettext = _argparse_gettext, _argparse_ngettext  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so main() returns an ExitStatus.

    Its own texts (section titles, -h's help, "usage:", error messages) are translated
    like ours when it is made and used inside `_argparse_in_our_language()`.
    """

    def error(self, message: str) -> Any:
        # main() prefixes "tfwizard: "; the subcommand's prog names where the problem is
        where = self.prog.removeprefix("tfwizard").strip()
        raise UsageError(f"{where}: {message}" if where else message,
                         _("See `{prog} --help`.").format(prog=self.prog))

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        if message:
            self._print_message(message, sys.stderr)
        raise _ParserExit(status)


class _ParserExit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


def exit_status(error: TfWizardError) -> ExitStatus:
    """The exit status an error gives: the first kind in ERROR_STATUS it is, else ERROR."""
    for kind, status in ERROR_STATUS:
        if isinstance(error, kind):
            return status
    return ExitStatus.ERROR


def _path(env: Environment, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else env.cwd / p


# -- commands ------------------------------------------------------------------------------


def cmd_recipe_new(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.defaults import commented_recipe_toml, default_recipe

    out = _path(env, args.out)
    if out.exists() and not args.force:
        raise UsageError(_("{path}: already exists").format(path=out),
                         _("Pass --force to overwrite it."))
    host = None
    if args.from_host:
        from .core.detect import detect_host

        host = detect_host(env=env.env)
    recipe = default_recipe(host)
    if args.name:
        from .core.safety import check_name

        problem = check_name(args.name)
        if problem:
            raise UsageError(f"--name: {problem}")
        recipe.name = args.name
    text = commented_recipe_toml(recipe)
    from .core.recipe import parse_recipe, save_recipe

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
    from .core.recipe import load_recipe

    status = ExitStatus.OK
    results = []
    for name in args.files:
        try:
            recipe = load_recipe(_path(env, name))
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


def cmd_detect(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.detect import detect_host

    profile = detect_host(env=env.env, extra_pythons=[_path(env, p) for p in args.python])
    if args.json:
        env.out(profile.to_json())
    else:
        from .core.detect.report import render_host_report

        env.out(render_host_report(profile))
    return ExitStatus.OK


# -- parser --------------------------------------------------------------------------------

Handler = Callable[[argparse.Namespace, Environment], ExitStatus]


def build_parser() -> _Parser:
    parser = _Parser(
        prog="tfwizard",
        description=_("Build TensorFlow from source without the ordeal: detect the host, check "
        "a recipe, build the wheel in Docker, install it and verify the GPU."),
        epilog=_("Run `tfwizard COMMAND --help` for a command's options. "
        "The desktop wizard is `tfwizard-gui`."),
    )
    parser.add_argument("--version", action="version", version=f"tfwizard {__version__}",
                        help=_("show the version and exit"))
    parser.add_argument("--debug", action="store_true", help=_("show tracebacks on errors"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("detect", help=_("report this machine: GPUs, driver, CPU, OS, Docker, RAM"))
    p.add_argument("--json", action="store_true", help=_("print the host profile as JSON"))
    p.add_argument("--python", action="append", default=[], metavar="PATH",
                   help=_("also describe this interpreter as an install target (repeatable)"))
    p.set_defaults(handler=cmd_detect)

    p = sub.add_parser("recipe", help=_("create, validate and change recipe files"))
    rsub = p.add_subparsers(dest="recipe_command", metavar="ACTION", parser_class=_Parser)
    p.set_defaults(handler=None, subparser=p)
    q = rsub.add_parser("new", help=_("write a commented default recipe"))
    q.add_argument("out", metavar="OUT.toml")
    q.add_argument("--from-host", action="store_true",
                   help=_("pick backend and GPU targets from this machine"))
    q.add_argument("--name", help=_("the recipe's name"))
    q.add_argument("--force", action="store_true", help=_("overwrite OUT (a backup is kept)"))
    q.set_defaults(handler=cmd_recipe_new)
    q = rsub.add_parser("validate", help=_("check recipe files; exit 0 valid, 2 invalid"))
    q.add_argument("files", nargs="+", metavar="FILE")
    q.add_argument("--json", action="store_true", help=_("print problems as JSON"))
    q.set_defaults(handler=cmd_recipe_validate)
    from . import cli_recipe

    cli_recipe.register(rsub)

    _add_later_commands(sub)
    return parser


def _add_later_commands(sub: Any) -> None:
    """Commands implemented in their own modules (imported lazily when run)."""
    from . import cli_commands

    cli_commands.register(sub)


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> ExitStatus:
    """Run tfwizard with these arguments in this environment; never raises."""
    env = env or Environment()
    previous = language()
    set_language(language_from_env(env.env))  # TFWIZARD_LANG, else the locale
    try:
        return _main(argv, env)
    finally:
        set_language(previous)  # a caller in the same process (the GUI) keeps its own


def _main(argv: Sequence[str] | None, env: Environment) -> ExitStatus:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = env.stdout, env.stderr  # argparse prints help/version here
        try:
            with _argparse_in_our_language():
                parser = build_parser()
                args = parser.parse_args(argv)
                handler: Handler | None = getattr(args, "handler", None)
                if handler is None:
                    getattr(args, "subparser", parser).print_help(env.stdout)
                    return ExitStatus.USAGE
        finally:
            sys.stdout, sys.stderr = stdout, stderr
        return handler(args, env)
    except _ParserExit as exc:
        return ExitStatus(exc.status) if exc.status in (0, 2) else ExitStatus.USAGE
    except TfWizardError as exc:
        if debug:
            traceback.print_exc(file=env.stderr)
        env.err(f"tfwizard: {exc}")
        return exit_status(exc)
    except KeyboardInterrupt:
        env.err("tfwizard: " + _("interrupted"))
        return ExitStatus.CANCELLED
    except BrokenPipeError:
        return ExitStatus.OK
    except Exception as exc:  # the one place unexpected errors become a message
        if debug:
            traceback.print_exc(file=env.stderr)
        else:
            env.err("tfwizard: " + _("internal error: {error}").format(
                error=f"{type(exc).__name__}: {exc}"))
            env.err(_("Run again with --debug for the traceback, and please report it."))
        return ExitStatus.ERROR


def run() -> None:
    """Console entry point."""
    sys.exit(int(main()))


def capture(argv: Sequence[str], env_vars: Mapping[str, str] | None = None,
            cwd: Path | None = None) -> tuple[ExitStatus, str, str]:
    """Run main() with captured output (for tests and the GUI's "show command" view)."""
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, env=dict(env_vars or os.environ),
                      cwd=cwd or Path.cwd())
    status = main(argv, env)
    return status, out.getvalue(), err.getvalue()
