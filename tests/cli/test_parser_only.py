"""`tfwizard COMMAND ...` parsed by a parser of that command only (cli.build_parser(only)):
the same arguments, help and errors as the whole parser's."""

from __future__ import annotations

import contextlib
import io

import pytest

from tfwizard.cli import COMMANDS, build_parser
from tfwizard.cli.parser import command_of as command_word


def _choices(parser):
    sub = next(a for a in parser._actions if a.dest == "command")
    return list(sub.choices)


NAMES = _choices(build_parser())


def _outcome(parser, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args = vars(parser.parse_args(argv))
            args.pop("handler", None)
            args.pop("subparser", None)
            code = None
        except BaseException as exc:  # noqa: B036 - the parser's exit or usage error
            args, code = {}, f"{type(exc).__name__}:{getattr(exc, 'status', exc)}"
    return args, code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", NAMES)
def test_a_commands_own_parser_answers_as_the_whole_one(name):
    only = build_parser(command_word([name]))
    module_names = {c.__name__.rpartition(".")[2] for c in COMMANDS}
    assert _choices(only) == ([name] if name in module_names else NAMES)
    for argv in ([name, "--help"], [name], ["--debug", name, "--no-such-option"],
                 [name, "x.toml", "--out", "o"]):
        assert _outcome(only, argv) == _outcome(build_parser(), argv), argv


def test_the_command_word_and_when_the_whole_parser_is_built():
    assert command_word(["--debug", "build", "r.toml"]) == "build"
    assert command_word(["-h", "build"]) is None  # the whole help lists every command
    assert command_word(["--version"]) is None and command_word([]) is None
    assert len(_choices(build_parser("no-such-command"))) == len(NAMES) > 10
