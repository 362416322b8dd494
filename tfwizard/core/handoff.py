"""After the build: what to run on the target machine, and the closing summary (where the
wheel is, how to use its venv, what was verified). The Install and Verify pages show these
words; they are the CLI's own commands, so they can be pasted there."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from .building.report.cost import SummaryLine
from .i18n import _
from .recipe import Recipe

#: the wheel's name when none was built yet
WHEEL_PLACEHOLDER = "tensorflow-VERSION.whl"


def _word(text: str) -> str:
    """A shell word; a leading ~/ stays unquoted so that the shell expands it."""
    if text.startswith("~/") and shlex.quote(text[2:]) == text[2:]:
        return text
    return shlex.quote(text)


def command(argv: list[str]) -> str:
    """An argv list as one line to paste into a shell."""
    return " ".join(_word(a) for a in argv)


def target_venv(recipe: Recipe) -> str:
    """The venv the wheel goes into on the target: the recipe's, else one named after it."""
    return recipe.install.venv or f"~/.venvs/{recipe.name}"


def target_commands(recipe: Recipe, wheel: str | None) -> list[str]:
    """The commands that install and verify the wheel on the target machine, after the
    wheel file was copied into the current folder there."""
    name = Path(wheel).name if wheel else WHEEL_PLACEHOLDER
    venv = target_venv(recipe)
    install = ["tfwizard", "install", name, "--venv", venv, "--create"]
    if recipe.install.extras:
        install += ["--extras", ",".join(recipe.install.extras)]
    verify = ["tfwizard", "verify", "--venv", venv, "--expect", recipe.backend.kind]
    return [command(install), command(verify)]


def target_steps(recipe: Recipe, wheel: str | None, target_path: str) -> str:
    """What to do on the target machine, in words and commands (several lines)."""
    name = Path(wheel).name if wheel else WHEEL_PLACEHOLDER
    lines = [_("The wheel is for the target machine ({profile}): install and verify it "
               "there. Installing here only checks it against this machine's Python.").format(
                   profile=target_path or _("the imported profile")),
             _("1. Copy {wheel} to the target machine (scp, a USB stick, a shared folder).")
             .format(wheel=wheel or name),
             _("2. There, with tfwizard installed (`pipx install tfwizard`), run:")]
    lines += [f"   `{c}`" for c in target_commands(recipe, wheel)]
    return "\n".join(lines)


def venv_of(python: str | None) -> Path | None:
    """The virtualenv an interpreter belongs to (its bin/ folder's parent holds
    pyvenv.cfg), or None."""
    if not python:
        return None
    folder = Path(python).parent.parent
    return folder if (folder / "pyvenv.cfg").is_file() else None


def finish_summary(recipe: Recipe, *, wheel: str | None, python: str | None,
                   report: Any = None, target_path: str = "") -> list[SummaryLine]:
    """The last page's summary: the wheel, the venv and how to activate it, the
    verification's verdict, and with a target machine what to run there."""
    lines = []
    if wheel:
        lines.append(SummaryLine("wheel", _("Wheel"), str(wheel)))
    venv = venv_of(python)
    if venv is not None:
        lines.append(SummaryLine("venv", _("Installed into"), str(venv)))
        lines.append(SummaryLine("activate", _("Use it"), _(
            "`source {activate}`, then `python -c \"import tensorflow as tf; "
            "print(tf.config.list_physical_devices())\"`").format(
                activate=shlex.quote(str(venv / "bin" / "activate")))))
    elif python:
        lines.append(SummaryLine("venv", _("Installed into"), python))
    if report is not None:
        checks = list(getattr(report, "checks", []))
        failed = [c.name for c in checks if not c.ok]
        text = _("all {total} checks passed ({names})").format(
            total=len(checks), names=", ".join(c.name for c in checks)) if not failed else \
            _("{passed} of {total} checks passed; failed: {names}").format(
                passed=len(checks) - len(failed), total=len(checks), names=", ".join(failed))
        lines.append(SummaryLine("verified", _("Verified"), text))
    if target_path:
        lines.append(SummaryLine("target", _("On the target machine"),
                                 "\n".join(target_commands(recipe, wheel))))
    return lines
