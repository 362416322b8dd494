"""`tfwizard build --attach` for a warm build: a build whose front end stopped
(killed, crashed) while its `bazel build` ran in the recipe's warm container.

A warm build runs in an exec of a long-lived container, which has no labels of its own.
The exec's argv takes their place: the build exec carries a tag argument (`build_tag`: the
build id, the sha256 of the plan.json it started with, the output folder) that the engine
keeps with the exec, where nothing running in the container can change it.
`find_warm_builds` reads the running execs of the warm containers; `open_warm` reopens
(and locks) the record of one and trusts its plan only when plan.json still has the
digest the tag carries, as attach.open_build does with the containers' labels.

Following it: a second `bazel build` with the plan's own command in the same container
waits for the running command on the Bazel server ("Another command is running"), then
finds every output up to date and names the wheel in a BEP of its own; so the wheel and
the record's result come from the build that was left, without building anything again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...docker import client as dockerutil
from ...errors import UsageError
from ...i18n import _
from ...paths import own_filter
from ..run import attach
from ..run.record import builds_dir, record_path
from .container import WORKSPACE_LABEL

#: the tag argument's prefix and field separator
TAG = "tfwizard-build"


def build_tag(build_id: str, plan_sha256: str, out_dir: Path | None) -> str:
    """The tag a warm build's exec carries: `tfwizard-build=ID;plan=SHA;out=DIR`."""
    return f"{TAG}={build_id};plan={plan_sha256};out={out_dir or ''}"


def parse_tag(text: str) -> dict[str, str] | None:
    """The fields of a tag (build, plan, out), or None when `text` is not one."""
    if not text.startswith(f"{TAG}="):
        return None
    fields: dict[str, str] = {}
    head, _sep, rest = text.partition(";plan=")
    fields["build"] = head[len(TAG) + 1:]
    fields["plan"], _sep, fields["out"] = rest.partition(";out=")
    return fields if fields["build"] and len(fields["plan"]) == 64 else None


@dataclass
class WarmBuild:
    """A warm build's exec on the engine: its container, tag fields, whether it runs."""

    container: Any
    exec_id: str
    build_id: str
    plan_sha256: str
    out_dir: Path | None
    running: bool

    @property
    def workspace_key(self) -> str:
        """The key of the workspace whose container runs it."""
        return str(self.container.labels.get(WORKSPACE_LABEL, ""))


def find_warm_builds(client: Any, build_id: str | None = None) -> list[WarmBuild]:
    """Warm builds whose exec still runs (all, or the one with `build_id`).

    A container's ExecIDs lists only running execs: the engine drops an exec from it when
    the process exits (moby daemon/monitor.go @ 67ee61ca, "c.ExecCommands only contains
    execs that have not exited"; seen on Docker 20.10.24). `exec inspect` by id answers
    for 5 to 10 minutes more (daemon/exec.go @ 65a289dc, execCommandGC: a 5-minute tick
    marks an exec no container lists, the next tick deletes it), but nothing lists the id:
    a warm build that ended while no front end followed it is not found here at all.
    """
    out: list[WarmBuild] = []
    with dockerutil.docker_errors(_("listing tfwizard's warm build containers")):
        containers = client.containers.list(filters=own_filter(WORKSPACE_LABEL))
        for c in containers:
            for exec_id in c.attrs.get("ExecIDs") or []:
                try:
                    info = client.api.exec_inspect(exec_id)
                except Exception:  # noqa: BLE001 - an exec that went away meanwhile
                    continue
                args = (info.get("ProcessConfig") or {}).get("arguments") or []
                tag = next((t for t in map(parse_tag, args) if t is not None), None)
                if tag is None or (build_id and tag["build"] != build_id):
                    continue
                out.append(WarmBuild(c, exec_id, tag["build"], tag["plan"],
                                     Path(tag["out"]) if tag["out"] else None,
                                     bool(info.get("Running"))))
    return sorted(out, key=lambda b: b.build_id, reverse=True)


def open_warm(found: WarmBuild, *, env: Mapping[str, str] | None = None,
              data_root: Path | None = None, out_dir: Path | None = None) -> attach.Attached:
    """Reopen (and lock) the record of a warm build and read its plan, only when plan.json
    has the digest its exec carries. UsageError when the record is not here, another live
    tfwizard follows the build, or the plan cannot be trusted."""
    path = record_path(found.build_id, root=data_root, env=env)
    if not path.is_dir():
        raise UsageError(
            _("build {id} is running, but its record folder is not on this machine").format(
                id=found.build_id),
            _("Set TFWIZARD_DATA_DIR as the build had it."))
    def verify(text: str) -> str:
        if attach.plan_digest(text) != found.plan_sha256:
            raise UsageError(
                _("build {id}: its plan.json changed after the build started (it no longer "
                  "matches the digest its exec carries); tfwizard runs nothing from it"
                  ).format(id=found.build_id),
                _("Something wrote into the build record {path}. Build again.").format(
                    path=path))
        return found.plan_sha256

    record, plan, _digest = attach.locked_plan(found.build_id, path, verify)
    return attach.Attached(attach.FoundBuild(found.build_id, [found.container]), plan, record,
                           found.plan_sha256, out_dir or found.out_dir)


def choose(builds: list[WarmBuild], build_id: str | None, *,
           env: Mapping[str, str] | None = None,
           data_root: Path | None = None) -> WarmBuild | None:
    """The warm build to follow: the one named (running or not), else the one running
    build whose record is in this data folder; None when there is none."""
    if build_id is not None:
        return builds[0] if builds else None
    base = builds_dir(data_root, env)
    running = [b for b in builds if b.running and (base / b.build_id).is_dir()]
    if len(running) > 1:
        raise UsageError(_("several tfwizard builds are running: {ids}").format(
            ids=", ".join(b.build_id for b in running)),
            _("Name one: `tfwizard build --attach BUILD_ID`."))
    return running[0] if running else None
