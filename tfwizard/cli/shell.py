"""`tfwizard shell RECIPE [-- COMMAND...]`: a shell (or one command) in the recipe's warm
build container, with the build's environment, mounts and user (core/warm.py)."""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import sys
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path
from .options import add_idle_option, start_warm


def register(sub: Any) -> None:
    """Add `shell` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "shell", help=_("a shell in the recipe's warm build container (same environment, "
                        "mounts and user as its builds)"))
    p.add_argument("recipe", metavar="RECIPE")
    add_idle_option(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help=_("run this command instead of an interactive shell"))
    p.set_defaults(handler=cmd_shell)


def cmd_shell(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Start (or reuse) the warm container; run the command, or a shell on a terminal."""
    from ..core.building.plan.plan import make_plan
    from ..core.docker import client as dockerutil
    from ..core.errors import UsageError
    from ..core.recipe import load_recipe

    path = arg_path(env, args.recipe)
    recipe = load_recipe(path)
    plan = make_plan(recipe, recipe_dir=path.parent)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    interactive = not command
    if interactive and not (env.stdin.isatty() and env.stdout_isatty):
        raise UsageError(_("standard input is not a terminal: there is no one to type into "
                           "the shell"),
                         _("Give the command to run: `tfwizard shell RECIPE -- bazel info`."))
    client = dockerutil.connect(env.env)
    try:
        box = start_warm(env, client, path, recipe, plan, args.idle)
        if interactive:
            return ExitStatus.OK if _interactive(box) == 0 else ExitStatus.ERROR

        def out(channel: str, line: str) -> None:
            (env.err if channel == "stderr" else env.out)(line)

        result = box.exec(command, on_output=out)
    finally:
        client.close()
    return ExitStatus.OK if result.exit_code == 0 else ExitStatus.ERROR


def _interactive(box: Any) -> int:
    """A shell with a TTY through the exec API; the terminal in raw mode meanwhile."""
    import termios
    import tty

    from ..core.building.warm import container as warm

    api = box.client.api
    size = os.get_terminal_size()
    exec_id = api.exec_create(
        box.container.id, ["sh", "-c", warm.EXEC_WRAPPER, "sh", warm.RECORD, str(box.idle_s),
                           "shell-" + os.urandom(4).hex(), "bash", "-l"],
        stdin=True, tty=True, environment=box.secrets.exec_env(), workdir=warm.SRC,
        user=box.plan.user or "")["Id"]
    sock = api.exec_start(exec_id, tty=True, socket=True)
    raw = getattr(sock, "_sock", sock)
    with contextlib.suppress(Exception):
        api.exec_resize(exec_id, height=size.lines, width=size.columns)
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        while True:
            ready, _w, _x = select.select([raw, fd], [], [])
            if raw in ready:
                data = raw.recv(65536)
                if not data:
                    break
                os.write(sys.stdout.fileno(), data)
            if fd in ready:
                data = os.read(fd, 65536)
                if not data:
                    break
                raw.sendall(data)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        with contextlib.suppress(Exception):
            raw.close()
    code = api.exec_inspect(exec_id).get("ExitCode")
    return int(code) if code is not None else 1
