"""Changing recipe keys from words: `tfwizard recipe set RECIPE KEY=VALUE ...`, and the
command line that applies a diagnosis' recipe fix.

Assignments: `KEY=VALUE` sets a key (a list from comma-separated values, or a TOML array
`[...]` when a value holds a comma), `KEY+=VALUE` appends one value to a list key,
`KEY-=VALUE` removes it. A diagnosis' `recipe_fix` (failures.toml, runtime.toml) holds
concrete values or the symbolic "halve" (an integer key) and "+VALUE" (append to a list);
`fix_assignments` turns it into such words, resolved against a recipe when one is known.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import UsageError
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
    changed = {k: v for k, v in changes.items() if v != recipe.get(k)}
    return recipe.with_changes(changes), changed


# -- a diagnosis' fix as a command line -------------------------------------------------------


def resolve_fix(fix: Mapping[str, Any], recipe: Recipe | None = None, *,
                jobs_in_use: int | None = None, cpus: int | None = None) -> dict[str, Any]:
    """A recipe fix with concrete values: "halve" is half of the key's value (when it is 0,
    "auto", of the jobs the build used, else of `cpus`), "+VALUE" the list with VALUE
    appended. Keys the recipe already has that way are left out."""
    kinds = key_kinds()
    out: dict[str, Any] = {}
    for key, value in fix.items():
        current = recipe.get(key) if recipe is not None else None
        if value == "halve" and kinds.get(key) == "int":
            base = current or jobs_in_use or cpus or os.cpu_count() or 2
            value = max(1, int(base) // 2)
        elif isinstance(value, str) and value.startswith("+") and kinds.get(key) == "list":
            item = value[1:]
            value = [*(current or []), item] if item not in (current or []) else current
        if recipe is None or value != current:
            out[key] = value
    return out


def fix_assignments(fix: Mapping[str, Any], recipe: Recipe | None = None, *,
                    jobs_in_use: int | None = None, cpus: int | None = None) -> list[str]:
    """The KEY=VALUE words of `tfwizard recipe set` that apply a recipe fix ([] when the
    recipe has it already); an append stays an append (KEY+=VALUE)."""
    words: list[str] = []
    kinds = key_kinds()
    for key, value in fix.items():
        if isinstance(value, str) and value.startswith("+") and kinds.get(key) == "list":
            if recipe is None or value[1:] not in recipe.get(key):
                words.append(f"{key}+={value[1:]}")
            continue
        resolved = resolve_fix({key: value}, recipe, jobs_in_use=jobs_in_use, cpus=cpus)
        if key in resolved:
            words.append(f"{key}={_word(resolved[key])}")
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


def fix_command(fix: Mapping[str, Any], recipe_arg: str = "RECIPE",
                recipe: Recipe | None = None, *, jobs_in_use: int | None = None,
                cpus: int | None = None) -> str:
    """`tfwizard recipe set RECIPE KEY=VALUE ...` applying a fix, quoted for a shell; ""
    when there is nothing to change."""
    words = fix_assignments(fix, recipe, jobs_in_use=jobs_in_use, cpus=cpus)
    return shlex.join(["tfwizard", "recipe", "set", recipe_arg, *words]) if words else ""


def jobs_from_flags(flags: Sequence[str]) -> int | None:
    """The N of the last --jobs=N in a list of Bazel flags (a build record's plan)."""
    jobs = None
    for flag in flags:
        if flag.startswith("--jobs="):
            try:
                jobs = int(flag.split("=", 1)[1])
            except ValueError:
                continue
    return jobs
