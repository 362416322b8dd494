"""The headless command line: argparse -> core -> text or JSON, returning an ExitStatus.

`main(argv, env)` is injectable: tests pass an Environment with their own streams and
variables and assert on the text and the exit status. Tracebacks only with --debug.

The package has HTTPie's shape: `context` (Environment, ExitStatus, paths, the exit
status of each error), `parser`, `words`, `render`, `follow` (a build on the terminal),
`gates` (check and preflight before Docker work), and one module per command, named after
it. COMMANDS lists those modules statically: a missing one is an ImportError at start-up,
never a command that silently disappears.
"""

from __future__ import annotations

import dataclasses
import io
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .. import __version__
from ..core.errors import TfWizardError, UsageError
from ..core.i18n import _, language, language_from_env, set_language
from . import (
    advise,
    build,
    bundle,
    check,
    clean,
    consent,
    desktop,
    detect,
    diagnose,
    fetch,
    install,
    knowledge,
    plan,
    publish,
    recipe,
    shell,
    test,
    verify,
)
from .context import Environment, ExitStatus, exit_status
from .parser import ARGPARSE_TEXTS, Parser, ParserExit, command_of, in_our_language

__all__ = ["ARGPARSE_TEXTS", "COMMANDS", "Environment", "ExitStatus", "build_parser",
           "capture", "main", "run"]

#: every command module, in the order `tfwizard --help` lists them; each has
#: register(subparsers), which adds its command (and sets its handler)
COMMANDS = (detect, advise, recipe, check, plan, build, publish, diagnose, install, verify, bundle,
            desktop, fetch, clean, shell, test, knowledge, consent)

Handler = Callable[..., ExitStatus]


def build_parser(only: str | None = None) -> Parser:
    """The `tfwizard` parser with every command of COMMANDS; ONLY: just the command of
    that module name (what `tfwizard ONLY ...` parses the same way, without building the
    other commands' parsers: ~3 ms of every command's start), or all when none has it."""
    parser = Parser(
        prog="tfwizard",
        description=_("Build TensorFlow from source without the ordeal: detect the host, check "
        "a recipe, build the wheel in Docker, install it and verify the GPU."),
        epilog=_("Run `tfwizard COMMAND --help` for a command's options. "
        "The desktop wizard is `tfwizard-gui`."),
    )
    parser.add_argument("--version", action="version", version=f"tfwizard {__version__}",
                        help=_("show the version and exit"))
    parser.add_argument("--debug", action="store_true", help=_("show tracebacks on errors"))
    parser.add_argument("--allow-secret", action="append", metavar="VARIABLE@HOST", default=[],
                        help=_("for this run, allow the recipe to send the environment "
                               "variable to the host (repeatable; also after the command); "
                               "`tfwizard consent allow` keeps it"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    chosen = [c for c in COMMANDS if c.__name__.rpartition(".")[2] == only] or COMMANDS
    for command in chosen:
        command.register(sub)
    return parser


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
        argv, env = _hoist_consent(argv, env)
        stdout, stderr = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = env.stdout, env.stderr  # argparse prints help/version here
        try:
            with in_our_language():
                parser = build_parser(command_of(argv))
                args = parser.parse_args(argv)
                handler: Handler | None = getattr(args, "handler", None)
                if handler is None:
                    getattr(args, "subparser", parser).print_help(env.stdout)
                    return ExitStatus.USAGE
        finally:
            sys.stdout, sys.stderr = stdout, stderr
        return handler(args, env)
    except ParserExit as exc:
        return ExitStatus(exc.status) if exc.status in (0, 2) else ExitStatus.USAGE
    except TfWizardError as exc:
        if debug:
            _print_traceback(env)
        env.err(f"tfwizard: {exc}")
        return exit_status(exc)
    except KeyboardInterrupt:
        env.err("tfwizard: " + _("interrupted"))
        return ExitStatus.CANCELLED
    except BrokenPipeError:
        return ExitStatus.OK
    except OSError as exc:
        if exc.filename is not None:  # an ordinary file-system failure: the path and the fix
            return _file_error(exc, argv, env, debug)
        return _internal_error(exc, env, debug)
    except Exception as exc:  # the one place unexpected errors become a message
        return _internal_error(exc, env, debug)


def _internal_error(exc: Exception, env: Environment, debug: bool) -> ExitStatus:
    if debug:
        _print_traceback(env)
    else:
        env.err("tfwizard: " + _("internal error: {error}").format(
            error=f"{type(exc).__name__}: {exc}"))
        env.err(_("Run again with --debug for the traceback, and please report it."))
    return ExitStatus.ERROR


def _file_error(exc: OSError, argv: list[str], env: Environment, debug: bool) -> ExitStatus:
    """A read-only folder, a name too long, a full disk: what and where, and the fix;
    with --json also an error event on standard output."""
    from ..core.paths import explain_os_error

    explained = explain_os_error(exc)
    if debug:
        _print_traceback(env)
    env.err(f"tfwizard: {explained}")
    if "--json" in argv:
        import json

        env.out(json.dumps({"type": "error", "message": explained.message,
                            "hint": explained.hint, "path": str(exc.filename),
                            "errno": errno_name(exc)}))
    return exit_status(explained)


def _hoist_consent(argv: list[str], env: Environment) -> tuple[list[str], Environment]:
    """--allow-secret VAR@HOST anywhere in argv (it belongs to no one command: every
    command that may resolve a secret honours it) into TFWIZARD_ALLOW_SECRETS, which
    core/consent.py reads; argv without them."""
    rest: list[str] = []
    pairs: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--":
            rest += [word, *words]
            break
        if word == "--allow-secret":
            value = next(words, None)
            if value is None:
                raise UsageError(_("--allow-secret needs VARIABLE@HOST"))
            pairs.append(value)
        elif word.startswith("--allow-secret="):
            pairs.append(word.split("=", 1)[1])
        else:
            rest.append(word)
    if not pairs:
        return rest, env
    from ..core.consent import CONSENT_ENV, parse_pair

    for pair in pairs:
        parse_pair(pair)  # a usage error now, naming it
    joined = " ".join([env.env.get(CONSENT_ENV, ""), *pairs]).strip()
    return rest, dataclasses.replace(env, env={**env.env, CONSENT_ENV: joined})


def errno_name(exc: OSError) -> str:
    """ENOSPC, EROFS...: the error's symbolic name ("" when it has none)."""
    import errno

    return errno.errorcode.get(exc.errno or 0, "")


def _print_traceback(env: Environment) -> None:
    """The current exception's traceback on stderr (--debug): traceback is imported only
    here, it costs every command's start ~8 ms."""
    import traceback

    traceback.print_exc(file=env.stderr)


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
