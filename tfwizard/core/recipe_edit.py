"""Changing recipe keys from words: `tfwizard recipe set RECIPE KEY=VALUE ...`, and the
command line that applies a diagnosis' recipe fix.

Assignments: `KEY=VALUE` sets a key (a list from comma-separated values, or a TOML array
`[...]` when a value holds a comma), `KEY+=VALUE` appends one value to a list key,
`KEY-=VALUE` removes it. A diagnosis' fix is resolved into values by fixes.resolve_fix
(the one place "halve" and "+VALUE" are understood); `fix_command` only words those
values as such assignments.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .fixes import is_symbolic
from .i18n import _
from .recipe import Recipe, schema_reference

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_ASSIGNMENT = re.compile(r"^(?P<key>[a-z_]+(?:\.[a-z_]+)?)(?P<op>\+=|-=|=)(?P<value>.*)$", re.S)
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


@dataclass(frozen=True)
class Assignment:
    """One `recipe set` assignment: key, operator (=, +=, -=) and value."""

    key: str
    op: str  # = | += | -=
    value: str

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.value}"


def key_kinds() -> dict[str, str]:
    """Every recipe key with its kind: str, int, bool or list."""
    return {row["key"]: row["kind"] for row in schema_reference()}


def parse_assignment(text: str) -> Assignment:
    """KEY=VALUE, KEY+=VALUE or KEY-=VALUE (for a known key) as an Assignment."""
    m = _ASSIGNMENT.match(text)
    if m is None:
        raise UsageError(_("{text!r} is not KEY=VALUE").format(text=text),
                         _("Write e.g. build.jobs=4, or build.bazel_flags+=--config=x."))
    kinds = key_kinds()
    key, op = m.group("key"), m.group("op")
    if key not in kinds:
        raise UsageError(_("unknown recipe key {key!r}").format(key=key),
                         _("`tfwizard recipe new` writes a recipe with every key commented."))
    if op != "=" and kinds[key] != "list":
        raise UsageError(_("{op} works on list keys only; {key} is not a list").format(
            op=op, key=key))
    return Assignment(key, op, m.group("value"))


def _value(key: str, kind: str, text: str) -> Any:
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise UsageError(_("{key}: {value!r} is not a whole number").format(
                key=key, value=text)) from None
    if kind == "bool":
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise UsageError(_("{key}: {value!r} is not true or false").format(key=key, value=text))
    if kind == "list":
        if text.startswith("["):
            try:
                items = tomllib.loads(f"v = {text}")["v"]
            except tomllib.TOMLDecodeError as exc:
                raise UsageError(_("{key}: {value!r} is not a TOML array: {error}").format(
                    key=key, value=text, error=exc)) from None
            return [str(x) for x in items]
        return [x.strip() for x in text.split(",") if x.strip()]
    return text


def apply_assignments(recipe: Recipe, assignments: Iterable[Assignment]) -> tuple[
        Recipe, dict[str, Any]]:
    """The recipe with the assignments applied, and {key: new value} of what changed."""
    kinds = key_kinds()
    changes: dict[str, Any] = {}
    for a in assignments:
        kind = kinds[a.key]
        current = changes.get(a.key, recipe.get(a.key))
        if a.op == "+=":
            value = [*current, a.value] if a.value not in current else list(current)
        elif a.op == "-=":
            value = [x for x in current if x != a.value]
        else:
            value = _value(a.key, kind, a.value)
        changes[a.key] = value
    changes = recipe.implied_changes(changes)  # e.g. [and-cuda] with backend.kind
    changed = {k: v for k, v in changes.items() if v != recipe.get(k)}
    return recipe.with_changes(changes), changed


# -- a diagnosis' fix as a command line -------------------------------------------------------


def fix_assignments(changes: Mapping[str, Any], recipe: Recipe | None = None) -> list[str]:
    """The KEY=VALUE words of `tfwizard recipe set` that make a resolved fix's changes
    (fixes.resolve_fix: concrete values). A list the recipe's list grows into by values
    appended is said as KEY+=VALUE, one word per value."""
    words: list[str] = []
    for key, value in changes.items():
        if is_symbolic(value):
            raise ValueError(f"{key} = {value!r}: resolve the fix first (fixes.resolve_fix)")
        current = recipe.get(key) if recipe is not None else None
        if (isinstance(value, list) and isinstance(current, list)
                and len(value) > len(current) and value[:len(current)] == current):
            words += [f"{key}+={item}" for item in value[len(current):]]
        else:
            words.append(f"{key}={_word(value)}")
    return words


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        items = [str(x) for x in value]
        if any("," in x for x in items) or not items:
            return "[" + ", ".join('"' + x.replace("\\", "\\\\").replace('"', '\\"') + '"'
                                   for x in items) + "]"
        return ",".join(items)
    return str(value)


def fix_command(changes: Mapping[str, Any], recipe_arg: str = "RECIPE",
                recipe: Recipe | None = None) -> str:
    """`tfwizard recipe set RECIPE KEY=VALUE ...` making a resolved fix's changes, quoted
    for a shell; "" when there are none."""
    words = fix_assignments(changes, recipe)
    return shlex.join(["tfwizard", "recipe", "set", recipe_arg, *words]) if words else ""
