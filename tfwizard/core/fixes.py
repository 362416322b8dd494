"""Recipe fixes from a diagnosis, made concrete before anyone sees or applies them.

The catalogues state fixes symbolically (failures.toml's `recipe_fix`, the runtime
diagnosis's compute-capability fixes): "halve" (an integer key: half of what the build
that failed used), "+VALUE" (append VALUE to a list key), or a plain value. `resolve_fix`
turns them into the values the recipe gets, against the plan that ran and the recipe it
came from, and checks the result the way `tfwizard check` loads a recipe. A fix that
cannot apply (or that the recipe has already) has no changes and says why; `apply_fix`
refuses it and leaves the recipe as it was.

This is the one place symbolic fixes are resolved: `tfwizard diagnose` (build and
--runtime, and the `tfwizard recipe set` command it prints: recipe_edit.fix_command words
the resolved values), the runner, verify, the bundle and the GUI all take its values.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .errors import RecipeError, UsageError
from .findings import Finding
from .host import HostProfile
from .i18n import _
from .knowledge import KnowledgeBase
from .recipe import Recipe, parse_recipe
from .rules import evaluate

HALVE = "halve"
APPEND = "+"
_JOBS = re.compile(r"^--jobs=(\d+)$")


@dataclass(frozen=True)
class ResolvedFix:
    """A fix as concrete recipe values; `problem` says why there are none."""

    changes: dict[str, Any] = field(default_factory=dict)
    problem: str = ""

    @property
    def ok(self) -> bool:
        """Whether the fix resolved to recipe changes."""
        return bool(self.changes) and not self.problem


def plan_flags(plan: Any) -> list[str]:
    """The Bazel flags of a BuildPlan, or of its plan.json (a dict)."""
    if plan is None:
        return []
    if isinstance(plan, Mapping):
        return [str(f.get("flag", "")) if isinstance(f, Mapping) else str(f)
                for f in plan.get("bazel_flags") or []]
    return list(plan.flag_list)


def plan_jobs(plan: Any) -> int | None:
    """The --jobs the plan's Bazel ran with (the last one wins, as in Bazel), or None."""
    jobs = None
    for flag in plan_flags(plan):
        m = _JOBS.match(flag)
        if m:
            jobs = int(m.group(1))
    return jobs


def is_symbolic(value: Any) -> bool:
    """Whether a fix value is symbolic ("halve", "+FLAG") rather than a value."""
    return isinstance(value, str) and (value == HALVE or value.startswith(APPEND))


def resolve_fix(symbolic: Mapping[str, Any], *, recipe: Recipe | None = None,
                plan: Any = None) -> ResolvedFix:
    """Concrete values for a catalogue's fix, or why it cannot apply.

    `plan` is the plan that ran (a BuildPlan or its plan.json); `recipe` the recipe it was
    made from. Without them a symbolic fix cannot be resolved and says so.
    """
    if not symbolic:
        return ResolvedFix()
    changes: dict[str, Any] = {}
    for key, value in symbolic.items():
        resolved: Any
        if value == HALVE:
            resolved = _halve(key, recipe, plan)
        elif isinstance(value, str) and value.startswith(APPEND):
            resolved = _append(key, value[len(APPEND):], recipe, plan)
        else:
            resolved = value
        if isinstance(resolved, ResolvedFix):
            return resolved
        changes[key] = resolved
    if recipe is not None:
        same = {k: v for k, v in changes.items() if _current(recipe, k) == v}
        changes = {k: v for k, v in changes.items() if k not in same}
        if not changes:
            return ResolvedFix({}, _("the recipe already has {changes}").format(
                changes=fix_text(same)))
        try:
            fixed = apply_fix(recipe, changes)
        except UsageError as exc:
            return ResolvedFix({}, exc.message)
        brings = _new_errors(recipe, fixed, set(changes))
        if brings:
            return ResolvedFix({}, _("the fix would bring a new problem: {message}").format(
                message=brings[0].message))
    return ResolvedFix(changes)


def _current(recipe: Recipe, key: str) -> Any:
    """The recipe's value of `key` (None for a key it does not have)."""
    try:
        return recipe.get(key)
    except AttributeError:
        return None


def _new_errors(before: Recipe, after: Recipe, keys: set[str]) -> list[Any]:
    """Errors `tfwizard check` would report about the fix's keys that it did not before."""
    from .rules import evaluate

    old = {(f.code, f.message) for f in evaluate(before) if f.severity == "error"}
    return [f for f in evaluate(after) if f.severity == "error" and f.key in keys
            and (f.code, f.message) not in old]


def _halve(key: str, recipe: Recipe | None, plan: Any) -> int | ResolvedFix:
    if key != "build.jobs":
        return ResolvedFix({}, _("{key}: only build.jobs can be halved").format(key=key))
    if recipe is not None and any(_JOBS.match(f) for f in recipe.build.bazel_flags):
        return ResolvedFix({}, _("build.bazel_flags sets --jobs, which wins over build.jobs: "
                                 "lower it there"))
    jobs = plan_jobs(plan)
    if jobs is None and recipe is not None and recipe.build.jobs > 0:
        jobs = recipe.build.jobs
    if jobs is None:
        return ResolvedFix({}, _("the build ran with Bazel's own number of jobs (the build "
                                 "host's memory was unknown, or the build record was not "
                                 "found): set build.jobs to about half the build machine's "
                                 "CPUs"))
    if jobs <= 1:
        return ResolvedFix({}, _("the build already ran one job at a time (--jobs=1): give it "
                                 "more memory (add swap, close programs) instead"))
    return max(1, jobs // 2)


def _append(key: str, value: str, recipe: Recipe | None, plan: Any) -> list[Any] | ResolvedFix:
    if recipe is None:
        return ResolvedFix({}, _("adding {value} to {key} needs the recipe the build was made "
                                 "from").format(value=value, key=key))
    current = _current(recipe, key)
    if not isinstance(current, list):
        return ResolvedFix({}, _("{key} is not a list key").format(key=key))
    if value in current:
        return ResolvedFix({}, _("{key} already holds {value}").format(key=key, value=value))
    if key == "build.bazel_flags" and value in plan_flags(plan):
        return ResolvedFix({}, _("the build already passed {value} to Bazel; adding it again "
                                 "would change nothing").format(value=value))
    return [*current, value]


def apply_fix(recipe: Recipe, changes: Mapping[str, Any]) -> Recipe:
    """The recipe with concrete fix values, checked as `tfwizard check` loads a recipe.

    Raises UsageError (the recipe itself is never changed) when a value is still symbolic
    or the result would not load.
    """
    symbolic = [k for k, v in changes.items() if is_symbolic(v)]
    if symbolic:
        raise UsageError(_("the fix for {keys} was not resolved against the build that ran; "
                           "the recipe was left as it was").format(keys=", ".join(symbolic)))
    new = recipe.with_changes(dict(changes))
    new.document, new.path = recipe.document, recipe.path
    try:
        parse_recipe(new.to_toml(), "recipe")
    except RecipeError as exc:
        raise UsageError(_("the fix would make the recipe invalid ({problems}); the recipe "
                           "was left as it was").format(
                               problems="; ".join(str(p) for p in exc.problems))) from None
    return new


#: how many fixes in a row "apply every fix" tries (each can bring or end another error)
MAX_FIX_ROUNDS = 10


def fix_errors(recipe: Recipe, build: HostProfile | None, target: HostProfile | None,
               kb: KnowledgeBase | None = None,
               wanted: Callable[[Finding], bool] = lambda _f: True,
               ) -> tuple[Recipe, list[Finding]]:
    """Apply the one-click fix of each error finding in turn (`check --fix`, the wizard's
    "Apply all fixes"): the rules run again after every fix, since one changes the others
    (a new CUDA changes the cuDNN check); it stops when no error with a fix is left or a
    fix changes nothing. Returns the recipe and the findings whose fixes were applied;
    each result is checked as `check` loads a recipe (UsageError, nothing changed)."""
    applied: list[Finding] = []
    for _round in range(MAX_FIX_ROUNDS):
        fixable = [f for f in evaluate(recipe, build, target, kb=kb)
                   if f.severity == "error" and f.fix is not None and wanted(f)]
        if not fixable:
            break
        assert fixable[0].fix is not None
        fixed = apply_fix(recipe, fixable[0].fix.changes)
        if fixed == recipe:
            break
        recipe = fixed
        applied.append(fixable[0])
    return recipe, applied


def fix_text(changes: Mapping[str, Any]) -> str:
    """`key = value` pairs as they go into a recipe (TOML values)."""
    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in changes.items())


D = TypeVar("D")


def resolve_diagnoses(diagnoses: Iterable[D], *, recipe: Recipe | None = None,
                      plan: Any = None, record_dir: Path | None = None) -> list[D]:
    """Diagnoses (build or runtime) with their fixes resolved (`recipe_fix` concrete,
    `fix_problem` saying why when there is none), and a full disk named: this machine's
    (the build's record and wheel folder, tfwizard's data folder) or Docker's."""
    from .diagnosis.disk import host_dirs, placed

    hosts = host_dirs(record_dir)
    out = []
    for d in diagnoses:
        d = placed(d, plan=plan, host_dirs=hosts)
        symbolic = getattr(d, "recipe_fix", None)
        if symbolic:
            fix = resolve_fix(symbolic, recipe=recipe, plan=plan)
            d = dataclasses.replace(d, recipe_fix=fix.changes,  # type: ignore[type-var]
                                    fix_problem=fix.problem)
        out.append(d)
    return out


def record_context(record_dir: Path) -> tuple[Recipe | None, dict[str, Any] | None]:
    """The recipe and plan a build record keeps (None for what it lacks or cannot be read),
    to resolve fixes against."""
    recipe: Recipe | None = None
    plan: dict[str, Any] | None = None
    try:
        recipe = parse_recipe((record_dir / "recipe.toml").read_bytes(), "recipe.toml")
    except (OSError, RecipeError, UsageError):
        recipe = None
    try:
        data = json.loads((record_dir / "plan.json").read_text(encoding="utf-8"))
        plan = data if isinstance(data, dict) else None
    except (OSError, ValueError):
        plan = None
    return recipe, plan
