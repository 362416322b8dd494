"""One build at a time per source folder: a lock the runner holds from its first step to
its end.

TensorFlow's configure.py writes its answers into the source folder
(`.tf_configure.bazelrc`, which TF's `.bazelrc` imports into every Bazel command), and
Bazel's `bazel-*` links go there too. Two builds of one checkout at the same time (two
recipes, the CLI and the wizard) would each compile with whichever answers were written
last. warm/configure.py keeps one build after another right; this lock keeps two at once
apart: the second waits, saying for which build, and a cancel ends the wait.

The lock is an advisory flock on a file in the data folder named after the folder's real
path, so it is this user's builds on this machine (a remote engine copies the source and
needs none). The kernel releases it when the process that follows the build ends; a
build left running with `--attach` holds it no more.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

from ...errors import BuildCancelled
from ...i18n import _


class CheckoutLock:
    """The lock of one source folder for one build."""

    def __init__(self, source_dir: str, data_root: Path, build_id: str) -> None:
        real = os.path.realpath(source_dir)
        self.source_dir = real
        self.build_id = build_id
        key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        self.path = data_root / "locks" / f"source-{key}.lock"
        self._fh: IO[bytes] | None = None

    def take(self) -> str | None:
        """Take the lock: None when taken (or where flock does not exist), else the id of
        the build that holds it ("" when it cannot be read)."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks
            return None
        from ...paths import private_dir

        private_dir(self.path.parent)
        fh = self.path.open("a+b")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read(200).decode("utf-8", "replace").strip()
            fh.close()
            return holder
        fh.seek(0)
        fh.truncate()
        fh.write(self.build_id.encode())
        fh.flush()
        self._fh = fh
        return None

    @property
    def held(self) -> bool:
        """Whether this lock is taken."""
        return self._fh is not None

    def release(self) -> None:
        """Let go (the next build waiting for the folder goes on)."""
        if self._fh is not None:
            self._fh.close()  # closing the descriptor releases the flock
            self._fh = None


class OneBuildPerFolder:
    """The runner's part: wait for the folder after the engine is set up, hold it to the
    end (`free_folder` in the runner's finally). Uses the runner's plan, build id, data
    root, env, volumes, log and cancel event (set by `cancel()`)."""

    _checkout: CheckoutLock | None = None
    plan: Any
    build_id: str
    data_root: Path | None
    env: Any
    volumes: Any
    log: Any
    _cancel: asyncio.Event

    async def _one_build_per_folder(self) -> AsyncIterator[Any]:
        """Wait until no other build of this machine builds the source folder this one
        bind-mounts, then hold it; a cancel ends the wait."""
        plan = self.plan
        if plan.source_kind != "dir" or not plan.source_dir or not self.volumes.local:
            return
        from ...paths import data_dir

        lock = CheckoutLock(plan.source_dir, self.data_root or data_dir(self.env),
                            self.build_id)
        waited = False
        while (holder := lock.take()) is not None:
            if not waited:
                waited = True
                yield self.log.say(_(
                    "waiting for build {build}, which builds this source folder ({path}): "
                    "configure writes its answers into the folder, so its builds run one "
                    "at a time").format(build=holder or "?", path=lock.source_dir))
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._cancel.wait(), 1.0)
            if self._cancel.is_set():
                raise BuildCancelled(_("cancelled by the user"))
        self._checkout = lock
        if waited:
            yield self.log.say(_("the source folder is free; this build goes on"))

    def free_folder(self) -> None:
        """Release the folder this build holds (when it holds one)."""
        if self._checkout is not None:
            self._checkout.release()
            self._checkout = None
