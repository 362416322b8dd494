"""After the fetch step: the clone's own build facts, and the plan remade from them.

A recipe that builds a release or a ref is planned from the knowledge table, since its
source is not there yet. Right after the fetch step (before `./configure`) the runner reads
the clone's files (srcfacts.py: `.bazelversion`, `.bazelrc`, `configure.py`, the lock
files, the toolchain pin, the wheel target, the version) out of the step's container, and
`SourceReplan` plans the recipe again with them (srcoverlay.py): the configure and build
steps follow the files, the log says which facts differed, the record keeps the facts
(`source-facts.json`) and the plan that runs (`plan.json`). Where the files make the build
impossible (a check error, such as a Python the source has no lock file for), the build
stops there, in its first minute, with the finding.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import TfWizardError
from ...findings import Finding, errors
from ...i18n import _, translate
from ...paths import atomic_write
from ...recipe import Recipe
from ...rules import evaluate
from ...tfsource.facts import (
    FIXED_FILES,
    LOCK_CANDIDATES,
    MAX_FILE_BYTES,
    SourceFacts,
    facts_from_files,
)
from ...tfsource.overlay import FACT_NAMES
from ..plan.plan import SRC, BuildPlan
from .artifacts import read_archive_file
from .attach import PLAN_DIGEST_LABEL, plan_digest
from .events import BuildEvent

#: the record's copy of what the source said
FACTS_FILE = "source-facts.json"
#: the plan fields the source's files can change (the steps after the fetch included);
#: the image, the mounts and the caches stay: they are in use already
FOLLOWED = ("series", "configure_env", "predicted_bazelrc", "bazel_target", "bazel_flags",
            "wheel_dir", "wheel_name", "notes", "bazel_version", "bazel_version_source",
            "bazel_versions", "source_facts")


class FollowsSource:
    """The runner's part in following the source: `replan` (set by the front end that
    made the plan; None: the plan stays the table's) and what a changed plan needs."""

    replan: SourceReplan | None = None
    plan: BuildPlan
    record: Any
    _plan_json: str
    _labels: dict[str, str]

    def plan_changed(self) -> None:
        """The plan changed (its image named, the source's facts followed): the record's
        plan.json and the digest later containers carry (for attach) follow it."""
        assert self.record is not None
        self._plan_json = self.plan.to_json()
        self._labels[PLAN_DIGEST_LABEL] = plan_digest(self._plan_json)
        self.record.write_plan(self._plan_json)


@dataclass
class SourceReplan:
    """The recipe planned again with a clone's facts (what the runner calls after the
    fetch): the planner and the arguments the first plan was made with."""

    recipe: Recipe
    planner: Callable[..., BuildPlan]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self, facts: SourceFacts) -> tuple[BuildPlan, list[Finding]]:
        """(the plan as the files describe the release, the check errors the files give:
        those the table's facts did not; the others were the front end's to gate)."""
        plan = self.planner(self.recipe, source_facts=facts, **self.kwargs)
        args = (self.recipe, self.kwargs.get("build_host"), self.kwargs.get("target_host"),
                self.kwargs.get("kb"))
        before = {(f.code, f.key, f.message) for f in errors(evaluate(*args))}
        found = errors(evaluate(*args, source_facts=facts))
        return plan, [f for f in found if (f.code, f.key, f.message) not in before]


def read_container_facts(container: Any, where: str) -> SourceFacts:
    """The facts of the source at /src in `container` (a step's, stopped or running),
    copied out through the engine's API one file at a time."""
    files: dict[str, str] = {}
    for rel in (*FIXED_FILES, *LOCK_CANDIDATES):
        data = read_archive_file(container, f"{SRC}/{rel}")
        if data is not None and len(data) <= MAX_FILE_BYTES:
            files[rel] = data.decode("utf-8", "replace")
    return facts_from_files(files, where, _head(container))


#: prints each file that is there after a marker line, then the checkout's HEAD: one exec
#: in a running (warm) container instead of a round trip per file
_PRINT_FILES = ('m=$1; shift; for f do [ -f "$f" ] || continue; echo "$m $f"; '
                f'head -c {MAX_FILE_BYTES} "$f"; echo; done; '
                'echo "$m-head $(git rev-parse HEAD 2>/dev/null)"')


def read_running_facts(box: Any, where: str) -> SourceFacts:
    """The facts of the source at /src in the running warm container `box` (one exec)."""
    mark = f"tfwizard-src-{secrets.token_hex(6)}"
    result = box.exec(["sh", "-c", _PRINT_FILES, "sh", mark, *FIXED_FILES, *LOCK_CANDIDATES],
                      workdir=SRC)
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    commit = ""
    for line in result.output:
        if line.startswith(f"{mark}-head "):
            commit, current = line.split(" ", 1)[1].strip(), None
        elif line.startswith(f"{mark} "):
            current = files.setdefault(line.split(" ", 1)[1], [])
        elif current is not None:
            current.append(line)
    texts = {path: "\n".join(lines) for path, lines in files.items()}
    return facts_from_files(texts, where, commit if len(commit) == 40 else "")


def _head(container: Any) -> str:
    """The clone's HEAD commit: detached at a tag or commit, else through its branch ref."""
    head = (read_archive_file(container, f"{SRC}/.git/HEAD") or b"").decode("ascii", "replace")
    head = head.strip()
    if head.startswith("ref: "):
        ref = read_archive_file(container, f"{SRC}/.git/{head[len('ref: '):]}") or b""
        head = ref.decode("ascii", "replace").strip()
    return head if len(head) == 40 and all(c in "0123456789abcdef" for c in head) else ""


def last_fetch(plan: BuildPlan, step: Any) -> bool:
    """Whether `step` is the plan's last fetch step (the source is complete after it)."""
    fetches = [s for s in plan.steps if s.role == "fetch"]
    return bool(fetches) and fetches[-1] is step


def adopt(plan: BuildPlan, new: BuildPlan) -> None:
    """Make `plan` (the object every part of the runner holds) the new plan: its fields the
    files change, and its steps after the fetch replaced in place (the runner iterates
    that list)."""
    for name in FOLLOWED:
        setattr(plan, name, getattr(new, name))
    kept = [s for s in plan.steps if s.role == "fetch"]
    plan.steps[len(kept):] = [s for s in new.steps if s.role != "fetch"]


def facts_lines(facts: SourceFacts, plan: BuildPlan) -> list[str]:
    """What the log says about the source's facts."""
    differences = plan.source_facts.get("differences", [])
    head = _("source: TensorFlow {version} at {commit}: {count} build fact(s) differ from "
             "tfwizard's table; configure and the build follow the source's files").format(
                 version=facts.tf_version or "?", commit=facts.commit[:12] or "?",
                 count=len(differences)) if differences else \
        _("source: TensorFlow {version} at {commit}: its build facts agree with tfwizard's "
          "table").format(version=facts.tf_version or "?", commit=facts.commit[:12] or "?")
    return [head, *_difference_lines(plan)]


def _difference_lines(plan: BuildPlan) -> list[str]:
    return [_("  {file}: {fact} {source} (table: {table})").format(
        file=d["file"] or "?", fact=translate(FACT_NAMES.get(d["fact"], d["fact"])),
        source=d["source"] or "-", table=d["table"] or "-")
        for d in plan.source_facts.get("differences", [])]


async def follow_source(runner: Any, step: Any) -> AsyncIterator[BuildEvent]:
    """After the last fetch step of a clone: read its facts, replan, say so, record it;
    raise TfWizardError (the build stops) when the files make the build impossible."""
    plan: BuildPlan = runner.plan
    replan: SourceReplan | None = getattr(runner, "replan", None)
    last = runner.stepper.last
    if (replan is None or plan.source_kind == "dir" or not last_fetch(plan, step)
            or last is None or last.exit_code != 0 or last.container is None):
        return
    where = f"{plan.git_url}@{plan.git_ref}"
    facts = await runner.engine.call(_("reading the source's build facts"),
                                     read_container_facts, last.container, where)
    async for event in apply_facts(runner, facts, replan):
        yield event


async def apply_facts(runner: Any, facts: SourceFacts,
                      replan: SourceReplan) -> AsyncIterator[BuildEvent]:
    """Replan with `facts`, record and say it; stop on the check errors they give."""
    new, found = await runner.engine.call(_("planning with the source's facts"), replan, facts)
    record = runner.record
    atomic_write(record.path / FACTS_FILE, json.dumps(
        {**facts.to_dict(), "differences": new.source_facts.get("differences", [])},
        indent=2) + "\n")
    yield runner.log.say(*facts_lines(facts, new))
    if found:
        raise TfWizardError(
            "\n".join(f.message for f in found),
            _("The source's own files make this build impossible (`tfwizard check` on a "
              "checkout of it names the same); change the recipe, or build another ref."))
    adopt(runner.plan, new)
    runner.plan_changed()
