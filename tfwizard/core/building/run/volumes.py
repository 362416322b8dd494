"""The volumes a build's steps share, and host folders uploaded to a remote engine.

Kept across builds: the cache volumes (labelled with the plan's labels only). Made for
one build and removed at its end (labelled with the build id): the source (unless the
recipe mounts a checkout), Bazel's output user root (so `bazel-bin` never holds a wheel
from an earlier build), the record volume Bazel writes its BEP file into (never the
record folder itself: a step could rewrite the plan `attach` reads there), and, on a
remote engine, a copy of each host folder the plan bind-mounts (put_archive through the
API: a remote engine cannot see this machine's folders).
"""

from __future__ import annotations

import contextlib
import tarfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import TfWizardError, UsageError
from ...i18n import _
from ...paths import LABEL
from ...remote.tls import TLS_DIR
from ...safety import check_mount_file, check_mount_source, check_output_dir
from ..plan.flags import RECORD
from ..plan.plan import OUTPUT_USER_ROOT, SRC, BuildPlan, Step
from .containers import Engine, _uid_gid


def upload_folder(client: Any, image: str, folder: Path, volume: str,
                  labels: dict[str, str], owner: tuple[int, int] | None) -> None:
    """Copy a host folder into a volume through the API (put_archive into a helper
    container that is created, never started, and removed); no bind mount involved.
    Files are owned by `owner` (the build's uid:gid) when given, as a bind mount of the
    user's own checkout would be."""
    import tempfile

    import docker.types

    if not folder.is_dir():
        raise TfWizardError(_("{path}: no such folder to upload to the Docker engine").format(
            path=folder))

    def own(info: tarfile.TarInfo) -> tarfile.TarInfo:
        if owner is not None:
            info.uid, info.gid, info.uname, info.gname = owner[0], owner[1], "", ""
        return info

    helper = client.containers.create(
        image, command=["true"], labels=labels, network_mode="none", name=volume,
        mounts=[docker.types.Mount("/upload", volume, type="volume")])
    try:
        # spooled to disk, streamed to the engine: a TensorFlow checkout is gigabytes
        with tempfile.TemporaryFile() as fh:
            with tarfile.open(fileobj=fh, mode="w") as tar:
                for child in sorted(folder.iterdir()):
                    tar.add(child, arcname=child.name, filter=own)
            fh.seek(0)
            if not helper.put_archive("/upload", fh):
                raise TfWizardError(_("the engine refused the upload of {path}").format(
                    path=folder))
    finally:
        with contextlib.suppress(Exception):
            helper.remove(force=True)


class Volumes:
    """A build's volumes: made on demand, the per-build ones remembered for removal."""

    def __init__(self, engine: Engine, plan: BuildPlan, build_id: str,
                 labels: Mapping[str, str], *, local: bool) -> None:
        """`labels`: the build's container labels (read when a volume is made, so a
        digest updated meanwhile is the one it gets)."""
        self.engine, self.plan, self.build_id = engine, plan, build_id
        self.labels = labels
        self.local = local
        self.made: list[Any] = []  # per-build volumes, removed at the end

    async def volume(self, name: str, purpose: str, per_build: bool) -> Any:
        """The volume `name`, made (labelled for `purpose`) when it does not exist yet."""
        import docker.errors

        client = self.engine.client

        def get_or_create() -> Any:
            try:
                return client.volumes.get(name)
            except docker.errors.NotFound:
                labels = {**(self.labels if per_build else self.plan.labels),
                          f"{LABEL}.volume": purpose}
                return client.volumes.create(name=name, labels=labels)

        vol = await self.engine.call(_("creating volume {name}").format(name=name),
                                     get_or_create)
        if per_build:
            self.made.append(vol)
        return vol

    async def prepare(self, mounts: list[Any]) -> AsyncIterator[str]:
        """Fill `mounts` with the steps' mounts (volumes made, uploads done), saying what
        takes long (an upload of a checkout to a remote engine) before it starts."""
        import docker.types

        plan = self.plan
        for purpose, name in plan.cache_volumes.items():
            await self.volume(name, f"{purpose}-cache", per_build=False)
        mounts[:] = [docker.types.Mount(m.target, m.source, type=m.kind, read_only=m.read_only)
                     for m in plan.mounts]
        for i, m in enumerate(mounts):
            if not self.local and m["Type"] == "bind":
                # a remote engine cannot see this machine's folders: upload them into volumes
                name = f"tfwizard-upload-{self.build_id}-{i}"
                yield _("remote engine: uploading {source} into volume {volume} (for "
                        "{target})").format(source=m["Source"], volume=name, target=m["Target"])
                mounts[i] = await self._upload_bind(m, name)
        per_build = [(OUTPUT_USER_ROOT, f"tfwizard-out-{self.build_id}", "output-root"),
                     # Bazel writes only the BEP file there, copied back through the API
                     (RECORD, f"tfwizard-record-{self.build_id}", "record")]
        if plan.source_kind != "dir":
            per_build.insert(0, (SRC, f"tfwizard-src-{self.build_id}", "source"))
        for target, name, purpose in per_build:
            await self.volume(name, purpose, per_build=True)
            mounts.append(docker.types.Mount(target, name, type="volume"))

    async def _upload_bind(self, mount: Any, name: str) -> Any:
        """A per-build volume `name` holding a copy of a host folder (for a remote engine)."""
        import docker.types

        source, target = mount["Source"], mount["Target"]
        await self.volume(name, "upload", per_build=True)
        await self.engine.call(_("uploading {source} to the engine").format(source=source),
                               upload_folder, self.engine.client, self.plan.image,
                               Path(source), name, {**self.labels, f"{LABEL}.step": "upload"},
                               _uid_gid(self.plan.user))
        return docker.types.Mount(target, name, type="volume",
                                  read_only=bool(mount.get("ReadOnly")))


def step_mounts(step: Step, mounts: list[Any]) -> list[Any]:
    """The mounts one step gets: the record volume only when the step declares it writes
    there (the build step's BEP file)."""
    if step.needs_record:
        return list(mounts)
    return [m for m in mounts if m["Target"] != RECORD]


def check_paths(plan: BuildPlan, out_dir: Path | None) -> None:
    """The output folder and the bind mounts, checked before any Docker work (not after
    a multi-hour build)."""
    if out_dir is not None:
        problem = check_output_dir(out_dir)
        if problem:
            raise UsageError(
                _("the output folder {path} {problem}").format(path=out_dir,
                                                               problem=problem),
                _("Choose another folder with `--out DIR` or output.dir in the recipe."))
    for m in plan.mounts:
        if m.kind != "bind":
            continue
        tls_file = m.target.startswith(TLS_DIR + "/")  # a certificate or key, read-only
        problem = check_mount_file(m.source) if tls_file else check_mount_source(m.source)
        if problem:
            raise UsageError(
                _("{source} (mounted at {target}) {problem}").format(
                    source=m.source, target=m.target, problem=problem),
                _("Point remote.tls_certificate, remote.tls_client_certificate and "
                  "remote.tls_client_key at PEM files of your own.") if tls_file else
                _("Point tensorflow.source_dir / network.distdir at a folder of your "
                  "own."))
