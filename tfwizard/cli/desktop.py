"""`tfwizard install-desktop-entry`: put the wizard in the desktop's application menu."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _, ngettext
from .context import Environment, ExitStatus, arg_path


def register(sub: Any) -> None:
    """Add `install-desktop-entry` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "install-desktop-entry",
        help=_("add tfwizard-gui to the desktop's application menu (XDG entry and icons)"))
    p.add_argument("--prefix", metavar="DIR",
                   help=_("install under DIR/share (e.g. ~/.local; default: $XDG_DATA_HOME, "
                        "else ~/.local/share)"))
    p.add_argument("--exec", dest="exec_path", metavar="PATH",
                   help=_("the tfwizard-gui command the entry starts (default: the one beside "
                        "this tfwizard)"))
    p.add_argument("--uninstall", action="store_true",
                   help=_("remove the entry and icons this command installed"))
    p.add_argument("--json", action="store_true", help=_("print the files as JSON"))
    p.set_defaults(handler=cmd_install_desktop_entry)


def cmd_install_desktop_entry(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Install (or with --uninstall remove) the desktop entry and its icons."""
    from ..core.desktop import (
        data_home,
        find_gui_command,
        install_desktop_entry,
        uninstall_desktop_entry,
    )

    data = data_home(arg_path(env, args.prefix) if args.prefix else None, env.env)
    if args.uninstall:
        removed = uninstall_desktop_entry(data)
        if args.json:
            env.out(json.dumps({"removed": [str(p) for p in removed]}, indent=2))
        elif removed:
            env.out(ngettext("Removed {count} file under {path}:",
                             "Removed {count} files under {path}:", len(removed)).format(
                count=len(removed), path=data))
            for path in removed:
                env.out(f"  {path}")
        else:
            env.out(_("Nothing to remove under {path}.").format(path=data))
        return ExitStatus.OK
    exec_path = str(arg_path(env, args.exec_path)) if args.exec_path else find_gui_command(env.env)
    done = install_desktop_entry(data, exec_path)
    if args.json:
        env.out(json.dumps({"entry": str(done.entry), "icons": [str(p) for p in done.icons],
                            "exec": done.exec_path}, indent=2))
    else:
        env.out(_("Installed {path} (Exec={command})").format(path=done.entry,
                                                              command=done.exec_path))
        for path in done.icons:
            env.out(f"  {path}")
        env.out(_("It appears in the application menu as \"tfwizard\"; "
                  "`tfwizard install-desktop-entry --uninstall` removes it."))
    return ExitStatus.OK
