"""`advise --wheelhouse`: the wheelhouse's answer for a machine profile, asked before the
official wheel's (core/advise.py), and the words that put it ahead of a source build."""

from __future__ import annotations

from typing import Any

from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase
from .choose import Choice, Machine, choose
from .index import Wheelhouse


def release_specifier(release: str | None) -> str:
    """A version specifier for `advise --release`: "2.21" any 2.21.x, "2.21.0" that one."""
    if not release or release == "master":
        return ""
    return f"=={release}.*" if release.count(".") == 1 else f"=={release}"


def wheelhouse_choice(url: str, machine: HostProfile, kb: KnowledgeBase, *, on_target: bool,
                      python: str | None = None, backend: str | None = None,
                      release: str | None = None) -> Choice:
    """Every TensorFlow wheel of the wheelhouse judged for the machine a profile describes
    (reads the index, and each fitting wheel's provenance)."""
    house = Wheelhouse(url)
    where = _("the target machine") if on_target else _("this machine")
    return choose(house.files(), house.provenance,
                  Machine.of_profile(machine, where=where, python=python, backend=backend),
                  kb, wheelhouse=house.display, specifier=release_specifier(release))


def install_line(choice: Choice, url: str) -> str:
    """The command that installs the chosen wheel (on the machine the choice is for)."""
    return _("Install: `tfwizard install --wheelhouse {url} --venv DIR --create`").format(
        url=choice.wheelhouse or url)


def choice_block(choice: Choice | None, error: str = "") -> list[str]:
    """The wheelhouse's part of the advice text (empty when no wheelhouse was asked)."""
    if error:
        return [error, ""]
    if choice is None:
        return []
    lines = choice.lines()
    if choice.best is not None:
        lines.append(install_line(choice, choice.wheelhouse))
    return [*lines, "", _("Official wheels:")]


def choice_data(choice: Choice | None, error: str = "") -> dict[str, Any] | None:
    """The wheelhouse's part of `advise --json`."""
    if error:
        return {"error": error}
    return choice.to_dict() if choice is not None else None


def advice_note(url: str, machine: HostProfile, kb: KnowledgeBase, *, on_target: bool,
                backend: str | None = None, python: str | None = None) -> str:
    """The wizard's one-paragraph answer of the wheelhouse (blocking: reads the index): the
    wheel that serves the machine and the command that installs it, or why none does."""
    from . import WheelhouseError

    try:
        choice = wheelhouse_choice(url, machine, kb, on_target=on_target, python=python,
                                   backend=backend)
    except WheelhouseError as exc:
        return _("Wheelhouse: {error}").format(error=exc.message)
    if choice.best is None:
        whys = [f"{c.file.filename}: {c.reasons[0]}" for c in choice.rejected if c.reasons]
        return " ".join([choice.summary(), *whys])
    return f"{choice.summary()} {install_line(choice, url)}"
