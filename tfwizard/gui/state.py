"""The wizard's shared state: one Recipe, the hosts, and the findings about them.

Pages never keep their own copy of an answer: they read `state.recipe` and write through
`state.update({...})`, which re-runs the core's checks (`rules.evaluate` and the recipe
validation the CLI uses) and tells every listener.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from tfwizard.core import rules
from tfwizard.core.building.plan.plan import resolve_ccs
from tfwizard.core.errors import RecipeError, UsageError
from tfwizard.core.findings import Finding
from tfwizard.core.host import HostProfile, auto_host
from tfwizard.core.i18n import _
from tfwizard.core.knowledge import KnowledgeBase, load_knowledge
from tfwizard.core.recipe import Recipe, parse_recipe

#: a recipe value the schema rejects (bad flag, unsafe path...) becomes an error finding
INVALID_CODE = "RECIPE_INVALID"


def key_matches(key: str, prefixes: Iterable[str] | None) -> bool:
    """Whether a finding's recipe key belongs to a page that owns `prefixes` (None: all)."""
    if prefixes is None:
        return True
    return any(key == p or (p.endswith(".") and key.startswith(p)) for p in prefixes)


class WizardState(QObject):
    """The Recipe every page reads and writes, plus the build and target hosts."""

    recipeChanged = Signal()
    hostsChanged = Signal()
    findingsChanged = Signal()

    def __init__(self, recipe: Recipe, build_host: HostProfile | None,
                 target_host: HostProfile | None = None, target_path: str = "",
                 kb: KnowledgeBase | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.kb = kb or load_knowledge()
        self.recipe = recipe
        self.build_host = build_host
        self.target_host = target_host
        self.target_path = target_path
        self.findings: list[Finding] = []
        #: the wheel the last successful build produced (the Install page's input)
        self.wheel: str | None = None
        #: the build record folder of the last build (its log.txt is the full log)
        self.record_dir: str | None = None
        #: the interpreter the Install page installed into (the Verify page's input)
        self.installed_python: str | None = None
        #: a folder of wheels to install from offline (pip --no-index --find-links); not a
        #: recipe key: it names a folder on this machine, for this session only
        self.install_find_links = ""
        #: the user changed the recipe (a page, a fix, a target): a detection must keep it
        self.edited = False
        #: the name and venv follow the release, backend and target while nobody chose a
        #: name (a recipe opened from a file has its own; typing one on Source ends it)
        self.name_follows = False
        self._evaluate()

    # -- reading -----------------------------------------------------------------------
    @property
    def effective_target(self) -> HostProfile | None:
        """The machine the wheel will run on: the imported profile, else this machine."""
        return auto_host(self.build_host, self.target_host)

    def compute_capabilities(self) -> list[str] | None:
        """cuda.compute_capabilities as the build will export them ("auto" resolved by the
        core, as `tfwizard plan` does); None when "auto" finds no GPU."""
        try:
            return resolve_ccs(self.recipe, self.build_host, self.target_host)
        except UsageError:
            return None

    def evaluate(self, recipe: Recipe) -> list[Finding]:
        """Findings for a candidate recipe (used to mark choices before they are made)."""
        return rules.evaluate(recipe, self.build_host, self.target_host, kb=self.kb)

    def errors_for(self, prefixes: Iterable[str] | None) -> list[Finding]:
        """The error findings on keys under `prefixes` (all when None)."""
        keys = tuple(prefixes) if prefixes is not None else None
        return [f for f in self.findings if f.severity == "error" and key_matches(f.key, keys)]

    # -- writing -----------------------------------------------------------------------
    def update(self, changes: dict[str, Any]) -> None:
        """Change some recipe keys (e.g. {"cuda.version": "12.5.1"}), and what they imply
        (`follow`)."""
        if all(self.recipe.get(k) == v for k, v in changes.items()):
            return
        if "name" in changes:
            self.name_follows = False
        self.edited = True
        self.set_recipe(self.follow(self.recipe.with_changes(changes)))

    def follow(self, new: Recipe) -> Recipe:
        """`new` (a change of the current recipe) with what the change implies, decided by
        the core as `recipe new` decides it: a new backend gets the versions and targets it
        needs for the target machine; the name and venv follow the release, backend and
        target (`name_follows`)."""
        from tfwizard.core.defaults import backend_choices, name_choices

        old = self.recipe
        if new.backend.kind != old.backend.kind:
            new = new.with_changes(backend_choices(new, new.backend.kind, self.build_host,
                                                   self.target_host, self.kb))
        if self.name_follows:
            new = new.with_changes(name_choices(new, self.target_host, self.target_path,
                                                self.kb))
        new.document, new.path = old.document, old.path
        return new

    def default_recipe(self) -> Recipe:
        """The starting recipe for the hosts as they are now (core `default_recipe`, as
        `recipe new --from-host/--target` writes it); its name follows from now on."""
        from tfwizard.core.defaults import default_recipe

        self.name_follows = True
        return default_recipe(self.build_host, self.kb, target=self.target_host,
                              target_path=self.target_path)

    def set_recipe(self, recipe: Recipe) -> None:
        """Take a new recipe and re-evaluate the findings."""
        self.recipe = recipe
        self._evaluate()
        self.recipeChanged.emit()
        self.findingsChanged.emit()

    def apply_fix(self, finding: Finding) -> None:
        """Apply a finding's fix to the recipe."""
        self.edited = True
        self.set_recipe(self.follow(rules.apply_fix(self.recipe, finding)))

    def apply_all_fixes(self, prefixes: Iterable[str] | None) -> int:
        """Apply the fix of every error on keys under `prefixes` in turn, as `check --fix`
        does (core fixes.fix_errors); returns how many were applied."""
        from tfwizard.core.fixes import fix_errors

        keys = tuple(prefixes) if prefixes is not None else None
        fixed, applied = fix_errors(self.recipe, self.build_host, self.target_host, self.kb,
                                    lambda f: key_matches(f.key, keys))
        if applied:
            self.edited = True
            self.set_recipe(self.follow(fixed))
        return len(applied)

    def apply_recipe_fix(self, changes: dict[str, Any]) -> None:
        """A build diagnosis's fix (concrete values); UsageError, and the recipe untouched,
        when it is not one (still symbolic, or the recipe would not load)."""
        from tfwizard.core.fixes import apply_fix

        fixed = apply_fix(self.recipe, changes)
        self.edited = True
        self.set_recipe(self.follow(fixed))

    def set_build_host(self, host: HostProfile | None) -> None:
        """Take a new build host and re-evaluate."""
        self.build_host = host
        self._hosts_changed()

    def set_target(self, host: HostProfile | None, path: str = "", *,
                   fit: bool = False) -> None:
        """Build for another machine (host) or for this one (None). `fit` (a profile the
        user imports): the target's GPUs choose the backend, a CUDA its driver runs and
        its compute capabilities, as `recipe new --target` does."""
        self.target_host = host
        self.target_path = path if host is not None else ""
        new = self.recipe.with_changes({"target.host_profile": self.target_path})
        if fit and host is not None:
            from tfwizard.core.defaults import backend_choices, backend_for

            new = new.with_changes(backend_choices(new, backend_for(host), self.build_host,
                                                   host, self.kb, keep=False))
        new = self.follow(new)
        if new != self.recipe:
            self.recipe = new
            self.edited = True
            self.recipeChanged.emit()
        self._hosts_changed()

    def load_target_profile(self, path: str | Path, *, fit: bool = False) -> None:
        """Read a `tfwizard detect --json` file and build for that machine (raises
        UsageError); `fit` as set_target."""
        self.set_target(HostProfile.load(path), str(path), fit=fit)

    def retranslate(self) -> None:
        """After a language switch: the findings again (the core words them at evaluation)
        and every listener told, so that what they show is made again in the language."""
        self._evaluate()
        self.hostsChanged.emit()
        self.recipeChanged.emit()
        self.findingsChanged.emit()

    def _hosts_changed(self) -> None:
        self._evaluate()
        self.hostsChanged.emit()
        self.findingsChanged.emit()

    def _evaluate(self) -> None:
        findings = self.evaluate(self.recipe)
        self.findings = _validation_findings(self.recipe) + findings


def _validation_findings(recipe: Recipe) -> list[Finding]:
    """The problems `tfwizard check` would report when loading this recipe, as findings."""
    try:
        parse_recipe(recipe.to_toml(), "recipe")
    except RecipeError as exc:
        found = []
        for p in exc.problems:
            text = _("{key}: {message}").format(key=p.key_path, message=p.message)
            if p.suggestion:
                text = _("{problem}; {suggestion}").format(problem=text, suggestion=p.suggestion)
            found.append(Finding(INVALID_CODE, "error", text, (), p.key_path))
        return found
    except UsageError as exc:
        return [Finding(INVALID_CODE, "error", exc.message, (), "")]
    return []
