"""What tfwizard leaves on a Docker engine, and removing it (`tfwizard clean`).

Only objects carrying the `io.tfwizard` label and this user's uid as `io.tfwizard.owner`
are ever listed, so nothing of anyone else's is touched (another user's tfwizard on a shared
engine included): step containers and per-build volumes (labelled `io.tfwizard.build=<id>`) that
a crashed, killed or detached build left; the Bazel cache volumes (kept across builds on
purpose) only when asked. Containers of a build still running are skipped unless asked.
Objects with the label but no owner (made by a tfwizard before owners were labelled) are
listed as kept, and removed only when asked (`unowned`): on a shared engine they may be
another user's.
A warm workspace (core/warm.py, labelled `io.tfwizard.workspace=<key>`): its idle container
is stopped and removed (unless a command runs in it), its volumes only with `workspaces`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..i18n import _
from ..paths import LABEL, OWNER_LABEL, owner
from . import client as dockerutil

BUILD = f"{LABEL}.build"
PURPOSE = f"{LABEL}.volume"
WORKSPACE = f"{LABEL}.workspace"


@dataclass(frozen=True)
class Leftover:
    """A container or volume tfwizard left on the engine, and whether it goes."""

    kind: str  # container | volume
    name: str
    build_id: str  # "" for a cache volume
    what: str  # the step of a container, the purpose of a volume
    skipped: str = ""  # why it stays ("" when it is removed)

    def to_dict(self) -> dict[str, str]:
        """The leftover as JSON-ready data."""
        return asdict(self)


def _ours(labels: dict[str, str] | None) -> bool:
    """tfwizard's, and this user's or without an owner label (never another user's)."""
    labels = labels or {}
    return LABEL in labels and labels.get(OWNER_LABEL, owner()) == owner()


def _busy_exec(client: Any, container: Any) -> bool:
    """A command (a build) runs in the container through the exec API."""
    for exec_id in container.attrs.get("ExecIDs") or []:
        try:
            if client.api.exec_inspect(exec_id).get("Running"):
                return True
        except Exception:  # noqa: BLE001 - an exec that went away is not busy
            continue
    return False


def _unowned_skip(labels: dict[str, str], unowned: bool) -> str:
    if unowned or OWNER_LABEL in labels:
        return ""
    return _("made by an older tfwizard (no owner label; on a shared engine it may be "
             "another user's): `tfwizard clean --unowned` removes it")


def find_leftovers(client: Any, *, caches: bool = False, running: bool = False,
                   workspaces: bool = False, unowned: bool = False) -> list[Leftover]:
    """Every tfwizard container and volume of this user on the engine, and those without
    an owner label, each with why it would stay."""
    out: list[Leftover] = []
    busy: set[str] = set()
    with dockerutil.docker_errors(_("listing tfwizard's containers and volumes")):
        # by the label alone: a filter cannot ask for a label's absence (_ours decides)
        containers = client.containers.list(all=True, filters={"label": LABEL})
        volumes = client.volumes.list(filters={"label": LABEL})
    for c in containers:
        labels = c.labels or {}
        if not _ours(labels):
            continue
        build = labels.get(BUILD, "")
        skipped = _unowned_skip(labels, unowned)
        if skipped:
            out.append(Leftover("container", c.name, build, labels.get(f"{LABEL}.step", ""),
                                skipped))
            continue
        if labels.get(WORKSPACE):  # a warm workspace's container: idle unless it execs
            if not running and c.status == "running" and _busy_exec(client, c):
                skipped = _("a build runs in the warm container of workspace {key}: "
                            "`tfwizard clean --running` stops it").format(key=labels[WORKSPACE])
            out.append(Leftover("container", c.name, "", labels.get(f"{LABEL}.step", ""),
                                skipped))
            continue
        if c.status in ("running", "restarting", "paused") and not running:
            busy.add(build)
            skipped = _("build {id} is running: `tfwizard build --attach {id}` follows it; "
                        "`tfwizard clean --running` stops it").format(id=build)
        out.append(Leftover("container", c.name, build, labels.get(f"{LABEL}.step", ""),
                            skipped))
    for v in volumes:
        labels = v.attrs.get("Labels") or {}
        if not _ours(labels):
            continue
        build = labels.get(BUILD, "")
        purpose = labels.get(PURPOSE, "")
        skipped = _unowned_skip(labels, unowned) or _volume_skip(
            labels, build, busy, caches=caches, workspaces=workspaces)
        out.append(Leftover("volume", v.name, build, purpose, skipped))
    return out


def _volume_skip(labels: dict[str, str], build: str, busy: set[str], *, caches: bool,
                 workspaces: bool) -> str:
    """Why a volume of this user's stays ("" when it goes)."""
    if labels.get(WORKSPACE):
        return "" if workspaces else _("a warm workspace volume (kept across builds; "
                                       "`--workspaces` removes it)")
    if not build:
        return "" if caches else _("a cache volume (kept across builds; `--caches` removes "
                                   "it)")
    if build in busy:
        return _("in use by the running build {id}").format(id=build)
    return ""


def remove_leftovers(client: Any, items: list[Leftover]) -> list[tuple[Leftover, str]]:
    """Remove the items not skipped (containers first); (item, error) for each failure."""
    import docker.errors

    failed: list[tuple[Leftover, str]] = []
    for item in sorted((i for i in items if not i.skipped), key=lambda i: i.kind):
        try:
            if item.kind == "container":
                client.containers.get(item.name).remove(force=True)
            else:
                client.volumes.get(item.name).remove(force=True)
        except docker.errors.NotFound:
            continue  # gone meanwhile (a build ended and cleaned up): fine
        except Exception as exc:  # noqa: BLE001 - reported per item, the rest go on
            failed.append((item, str(dockerutil.translate(
                exc, _("removing {name}").format(name=item.name)))))
    return failed
