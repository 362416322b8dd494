"""A recipe's warm workspace: its identity (keyed by recipe, release, ref or source
folder, and backend), its labels, and its volumes: the source (a clone; a recipe with
tensorflow.source_dir bind-mounts its folder instead), Bazel's output root and a state
volume at /record (the BEP files, the configure hash, the idle deadline). All are labelled
io.tfwizard and io.tfwizard.workspace=<key>; `tfwizard clean` lists them
(core/docker/leftovers.py) and removes them with `--workspaces`. The container that works
in it is container.py's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ...docker import client as dockerutil
from ...errors import TfWizardError
from ...i18n import _
from ...paths import LABEL, own_labels, owner
from ..plan.plan import OUTPUT_USER_ROOT, RECORD, SRC, BuildPlan

#: labels: the workspace a volume or container belongs to; the container's spec digest;
#: what a volume holds
WORKSPACE_LABEL = f"{LABEL}.workspace"
SPEC_LABEL = f"{LABEL}.warm-spec"
PURPOSE_LABEL = f"{LABEL}.volume"


@dataclass(frozen=True)
class Workspace:
    """A recipe's persistent workspace: its key and what it is keyed by."""

    key: str
    recipe: str
    release: str
    ref: str
    backend: str

    @property
    def container_name(self) -> str:
        """The name of this workspace's warm container."""
        return f"tfwizard-ws-{self.key}"

    def volume(self, purpose: str) -> str:
        """The name of this workspace's volume for `purpose` (src, out, state)."""
        return f"tfwizard-ws-{self.key}-{purpose}"

    def labels(self, **extra: str) -> dict[str, str]:
        """The labels of this workspace's container and volumes (`clean` finds them)."""
        return own_labels(**{WORKSPACE_LABEL: self.key, f"{LABEL}.recipe": self.recipe,
                             f"{LABEL}.release": self.release, **extra})


def workspace_for(plan: BuildPlan, recipe_id: str) -> Workspace:
    """The workspace of a plan: keyed by the recipe (its path, else its name), the release,
    the ref (the source folder for a recipe with source_dir) and the backend."""
    ref = plan.source_dir if plan.source_kind == "dir" else f"{plan.git_url}@{plan.git_ref}"
    # the owner too: two users building one shared recipe file get a workspace each
    ident = json.dumps([recipe_id, plan.release, ref or "", plan.backend, owner()])
    key = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:16]
    return Workspace(key, plan.recipe_name, plan.release, ref or "", plan.backend)


def workspace_mounts(plan: BuildPlan, ws: Workspace) -> list[Any]:
    """A warm container's mounts: the plan's (caches, a source folder), then the
    workspace volumes."""
    import docker.types

    out = [docker.types.Mount(m.target, m.source, type=m.kind, read_only=m.read_only)
           for m in plan.mounts]
    if plan.source_kind != "dir":
        out.append(docker.types.Mount(SRC, ws.volume("src"), type="volume"))
    out.append(docker.types.Mount(OUTPUT_USER_ROOT, ws.volume("out"), type="volume"))
    out.append(docker.types.Mount(RECORD, ws.volume("state"), type="volume"))
    return out


def ensure_volumes(client: Any, plan: BuildPlan, ws: Workspace) -> None:
    """Make the workspace's volumes and the plan's cache volumes that are missing; a new
    one is handed to the build's uid (a volume starts out root's)."""
    import docker.errors

    made: list[str] = []
    for purpose in (["src"] if plan.source_kind != "dir" else []) + ["out", "state"]:
        name = ws.volume(purpose)
        with dockerutil.docker_errors(_("creating volume {name}").format(name=name)):
            try:
                client.volumes.get(name)
            except docker.errors.NotFound:
                client.volumes.create(name=name, labels=ws.labels(
                    **{PURPOSE_LABEL: f"workspace-{purpose}"}))
                made.append(name)
    for vol in plan.cache_volumes.values():
        with contextlib.suppress(docker.errors.APIError):
            client.volumes.get(vol)
            continue
        client.volumes.create(name=vol, labels=own_labels(**{PURPOSE_LABEL: "cache"}))
        made.append(vol)
    user = plan.user
    if made and user and user.split(":")[0] != "0":
        _hand_over(client, plan, ws, made, user)


def _hand_over(client: Any, plan: BuildPlan, ws: Workspace, made: list[str], user: str) -> None:
    """chown the top folder of each new volume to the build's uid."""
    mounts = workspace_mounts(plan, ws)
    targets = [m["Target"] for m in mounts if m["Type"] == "volume" and m["Source"] in made]
    with dockerutil.docker_errors(_("handing volumes to uid {user}").format(user=user)):
        c = client.containers.run(
            plan.image, ["chown", user, *targets], detach=True, user="0:0",
            mounts=mounts, network_mode="none", working_dir="/",
            labels=ws.labels(**{f"{LABEL}.step": "prepare"}),
            cap_drop=["ALL"], cap_add=["CHOWN", "DAC_OVERRIDE", "FOWNER"],
            security_opt=["no-new-privileges"])
        try:
            code = c.wait()["StatusCode"]
        finally:
            c.remove(force=True)
    if code != 0:
        raise TfWizardError(_("could not prepare the volumes (chown exited {code})").format(
            code=code))
