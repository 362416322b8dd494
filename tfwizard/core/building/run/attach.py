"""Finding a build a front end left (killed, crashed, detached), and trusting its plan.

A build's containers carry labels no step can change: the build id, where its record and
wheel go, and the sha256 of the plan.json it started with. `find_builds` lists builds by
those labels; `open_build` reopens (and locks) the record of one and reads its plan only
when the plan still has the digest the labels carry, so nothing read back from a folder
something else could write ever runs. `replay` turns the record's log back into events.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...docker import client as dockerutil
from ...errors import UsageError
from ...i18n import _
from ...paths import LABEL, own_filter
from ...secrets import WITHHELD_KEY
from ...streams import LineSplitter
from ..plan.plan import BuildPlan
from .events import LogLines
from .record import BuildRecord, builds_dir, record_path

#: container labels set when a step container is made (a step cannot change them)
PLAN_DIGEST_LABEL = f"{LABEL}.plan-sha256"
OUT_LABEL = f"{LABEL}.out"
RECORD_LABEL = f"{LABEL}.record"


def plan_digest(plan_json: str) -> str:
    """The sha256 of plan.json's text, as `attach` checks it against the containers' label."""
    return hashlib.sha256(plan_json.encode("utf-8")).hexdigest()


class SkippingSplitter(LineSplitter):
    """A LineSplitter that drops its first `skip` lines (those the record already holds)."""

    def __init__(self, skip: int) -> None:
        super().__init__()
        self.skip = skip

    def _drop(self, lines: list[str]) -> list[str]:
        if self.skip and lines:
            n = min(self.skip, len(lines))
            self.skip -= n
            return lines[n:]
        return lines

    def feed(self, chunk: bytes) -> list[str]:
        """Lines of `chunk`, less those still to skip."""
        return self._drop(super().feed(chunk))

    def flush(self) -> list[str]:
        """The last partial line, unless still to skip."""
        return self._drop(super().flush())


@dataclass
class FoundBuild:
    """A build's containers on the engine, found by their `io.tfwizard.build` label."""

    build_id: str
    containers: list[Any]  # oldest first

    @property
    def current(self) -> Any:
        """The step container created last (the one running, if any is)."""
        steps = [c for c in self.containers if c.labels.get(f"{LABEL}.step") != "upload"]
        return (steps or self.containers)[-1]

    @property
    def running(self) -> bool:
        """True while any of its containers runs (or is about to)."""
        return any(c.status in ("running", "created", "restarting") for c in self.containers)

    def record_dir(self, data_root: Path | None = None,
                   env: Mapping[str, str] | None = None) -> Path | None:
        """The build's record folder: by id in the data folder, else where its containers'
        labels say the build put it (another TFWIZARD_DATA_DIR)."""
        path = record_path(self.build_id, root=data_root, env=env)
        if path.is_dir():
            return path
        for c in reversed(self.containers):
            src = Path(c.labels.get(RECORD_LABEL) or "")
            if src.name == self.build_id and src.is_dir():
                return src
        return None

    def label(self, name: str) -> str | None:
        """A label all the build's containers carry with one value, else None."""
        values = {c.labels.get(name) for c in self.containers}
        return values.pop() if len(values) == 1 else None


def find_builds(client: Any, build_id: str | None = None) -> list[FoundBuild]:
    """Builds with containers on the engine (all, or the one with `build_id`), newest first."""
    flt = f"{LABEL}.build" + (f"={build_id}" if build_id else "")
    with dockerutil.docker_errors(_("listing tfwizard's containers")):
        containers = client.containers.list(all=True, filters=own_filter(flt))
    by_id: dict[str, list[Any]] = {}
    for c in sorted(containers, key=lambda c: c.attrs.get("Created", "")):
        by_id.setdefault(c.labels.get(f"{LABEL}.build", ""), []).append(c)
    found = [FoundBuild(i, cs) for i, cs in by_id.items() if i]
    return sorted(found, key=lambda b: b.build_id, reverse=True)




@dataclass
class Attached:
    """A left build, ready to follow: its verified plan, its reopened (locked) record."""

    found: FoundBuild
    plan: BuildPlan
    record: BuildRecord
    digest: str  # the plan digest its containers carry (the steps to come get it too)
    out_dir: Path | None  # where the wheel goes: as asked, else as the labels say


def _choose(builds: list[FoundBuild], build_id: str | None, data_root: Path | None,
            env: Mapping[str, str] | None) -> FoundBuild:
    """The build to follow: the one named, else the one running build of this data folder."""
    if build_id is None:
        # the running builds whose record is in this data folder (others are not ours)
        base = builds_dir(data_root, env)
        running = [b for b in builds if b.running and (base / b.build_id).is_dir()]
        if not running:
            raise UsageError(_("no tfwizard build is running on this Docker engine"),
                             _("`tfwizard build RECIPE` starts one; `tfwizard clean` "
                               "removes what finished builds left."))
        if len(running) > 1:
            raise UsageError(_("several tfwizard builds are running: {ids}").format(
                                 ids=", ".join(b.build_id for b in running)),
                             _("Name one: `tfwizard build --attach BUILD_ID`."))
        return running[0]
    if not builds:
        raise UsageError(
            _("build {id} has no containers on this Docker engine").format(id=build_id),
            _("It ended and was cleaned up: `tfwizard diagnose {id}` reads its log.").format(
                id=build_id))
    return builds[0]


def _verified_digest(found: FoundBuild, text: str, path: Path) -> str:
    """The digest of plan.json's `text` (in the record `path`), only if it is the one the
    labels carry; else UsageError."""
    digest = found.label(PLAN_DIGEST_LABEL)
    if digest is None:
        raise UsageError(
            _("build {id} was started by an older tfwizard: its plan cannot be "
              "checked, so tfwizard runs nothing from it").format(id=found.build_id),
            _("Let it finish and read its record, or stop it with `tfwizard clean` "
              "and build again."))
    if plan_digest(text) != digest:
        # never run what was read back from a place something else could write
        raise UsageError(
            _("build {id}: its plan.json changed after the build started (it no "
              "longer matches the digest its containers carry); tfwizard runs "
              "nothing from it").format(id=found.build_id),
            _("Something wrote into the build record {path}. Stop the build with "
              "`tfwizard clean`, look at what changed, and build again.").format(
                path=path))
    return digest


def _withheld(build_id: str) -> UsageError:
    """The plan's record copy has the recipe's written-out credentials masked: running its
    steps again would send `***` where the proxy password or the header goes."""
    return UsageError(
        _("build {id}: its recipe has credentials written in it (a proxy password or a "
          "remote header), which its record does not keep, so tfwizard cannot run the rest "
          "of its plan").format(id=build_id),
        _("Stop it with `tfwizard clean` (or let it run out; `tfwizard diagnose {id}` reads "
          "its log), write the credential as ${{VAR}} in the recipe (`tfwizard check` offers "
          "the fix) and build again: a build whose secrets are references can be attached."
          ).format(id=build_id))


def locked_plan(build_id: str, path: Path, verify: Callable[[str], str]
                ) -> tuple[BuildRecord, BuildPlan, str]:
    """Reopen and lock the record `path` of build `build_id` and read its plan, when
    `verify(plan.json's text)` gives the digest it trusts (it raises UsageError when not).
    UsageError too when another live tfwizard holds the record or the plan is unreadable."""
    record = BuildRecord.reopen(path)
    if not record.lock():
        raise UsageError(
            _("build {id} is still followed by another tfwizard process").format(id=build_id),
            _("Use that window or terminal, or stop it first."))
    try:
        text = (path / "plan.json").read_text("utf-8")
        digest = verify(text)
        data = json.loads(text)
        if data.get(WITHHELD_KEY):
            raise _withheld(build_id)
        plan = BuildPlan.from_dict(data)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        record.unlock()
        raise UsageError(_("{path}: the build's plan cannot be read ({error})").format(
            path=path, error=exc)) from None
    except UsageError:
        record.unlock()
        raise
    return record, plan, digest


def open_build(client: Any, build_id: str | None = None, *,
               env: Mapping[str, str] | None = None, data_root: Path | None = None,
               out_dir: Path | None = None) -> Attached:
    """Find a left build on the engine (by id; None: the one running), lock its record and
    read its verified plan. UsageError when there is nothing to attach to, when another
    live tfwizard process follows the build, or when its plan cannot be trusted."""
    found = _choose(find_builds(client, build_id), build_id, data_root, env)
    path = found.record_dir(data_root, env)
    if path is None:
        raise UsageError(
            _("build {id} is running, but its record folder is not on this machine").format(
                id=found.build_id),
            _("Set TFWIZARD_DATA_DIR as the build had it, or follow the container with "
              "`docker logs -f {container}`.").format(container=found.current.name))
    record, plan, digest = locked_plan(found.build_id, path,
                                       lambda text: _verified_digest(found, text, path))
    labelled_out = found.label(OUT_LABEL)  # the label, not a file in the record
    if out_dir is None and labelled_out:
        out_dir = Path(labelled_out)
    return Attached(found, plan, record, digest, out_dir)


def replay(record: BuildRecord) -> list[LogLines]:
    """The record's history as LogLines events (for the front end; not logged again)."""
    out: list[LogLines] = []
    first, channel, lines = 1, "", list[str]()
    for ch, text in record.replay():
        if ch != channel and lines:
            out.append(LogLines(channel, tuple(lines), first))
            first += len(lines)
            lines = []
        channel = ch
        lines.append(text)
    if lines:
        out.append(LogLines(channel, tuple(lines), first))
    return out
