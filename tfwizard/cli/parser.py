"""argparse for tfwizard: raises instead of exiting, and speaks the user's language.

argparse's own texts (section titles, -h's help, "usage:", its error messages) are looked
up through its module's gettext functions; `in_our_language()` points those at tfwizard's
catalog while the parser is made and used.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ..core.errors import UsageError
from ..core.i18n import N_, _, translate

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
def in_our_language() -> Iterator[None]:
    """argparse looks its texts up through its module's `_`/`ngettext` (gettext's
    'messages' domain, which we do not ship): point those at our catalog meanwhile."""
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]
    argparse._, argparse.ngettext = _argparse_gettext, _argparse_ngettext  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


def command_of(argv: list[str]) -> str | None:
    """The command word of a `tfwizard` argv (the first word not an option; tfwizard's own
    options take no value), or None after a -h/--help/--version before it: the one
    command whose parser main() builds (the whole parser for None: its help lists every
    command)."""
    for word in argv:
        if not word.startswith("-"):
            return word
        if word in ("-h", "--help", "--version"):
            return None
    return None


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so main() returns an ExitStatus.

    Its own texts are translated like ours when it is made and used inside
    `in_our_language()`.
    """

    def error(self, message: str) -> Any:
        """A usage error naming the subcommand where the problem is."""
        # main() prefixes "tfwizard: "; the subcommand's prog names where the problem is
        where = self.prog.removeprefix("tfwizard").strip()
        raise UsageError(f"{where}: {message}" if where else message,
                         _("See `{prog} --help`.").format(prog=self.prog))

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        """--help and --version end here: raise, main() returns the status."""
        if message:
            self._print_message(message, sys.stderr)
        raise ParserExit(status)


class ParserExit(Exception):
    """argparse wanted to exit (after --help or --version) with `status`."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status
