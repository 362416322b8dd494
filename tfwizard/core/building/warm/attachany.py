"""Follow a build whose front end went away, warm or cold: one entry for the CLI's
`build --attach` and the GUI (its start-up question and File > Build history > Attach).

    runner = attach_runner(build_id, env=env, out_dir=out)  # None: the one running
    ids = running_build_ids(client, env=env)                 # cold and warm, newest first

A warm build is an exec in its workspace's warm container (warmattach finds it by the tag
its command line carries); a cold one has containers labelled with its id (attach.py).
The warm ones are looked at first; when none matches, the cold ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...docker import client as dockerutil
from ..run import attach
from ..run.record import builds_dir
from . import attach as warmattach


def attach_warm(build_id: str | None, *, env: Mapping[str, str] | None = None,
                out_dir: Path | None = None, data_root: Path | None = None) -> Any:
    """A WarmRunner following the warm build `build_id` (None: the one running), or None
    when no warm build's exec matches."""
    from .run import WarmRunner

    client = dockerutil.connect(env)
    found = warmattach.choose(warmattach.find_warm_builds(client, build_id), build_id,
                              env=env, data_root=data_root)
    if found is None:
        client.close()
        return None
    return WarmRunner.attach_warm(found, client=client, env=env, out_dir=out_dir,
                                  data_root=data_root)


def attach_runner(build_id: str | None, *, env: Mapping[str, str] | None = None,
                  out_dir: Path | None = None, data_root: Path | None = None) -> Any:
    """A runner following the build `build_id` (None: the one running): the warm build's
    when its exec is found, else the cold build's (BuildRunner.attach, which raises
    UsageError when there is nothing to follow)."""
    from ..run.runner import BuildRunner

    return attach_warm(build_id, env=env, out_dir=out_dir, data_root=data_root) or \
        BuildRunner.attach(build_id, env=env, out_dir=out_dir, data_root=data_root)


def running_build_ids(client: Any, *, env: Mapping[str, str] | None = None,
                      data_root: Path | None = None) -> list[str]:
    """Ids of the builds running on the engine with a record in this data folder: cold
    ones (their containers) and warm ones (their execs), newest first, each once."""
    base = builds_dir(data_root, env)
    ids = {b.build_id for b in attach.find_builds(client) if b.running}
    ids |= {b.build_id for b in warmattach.find_warm_builds(client) if b.running}
    return sorted((i for i in ids if (base / i).is_dir()), reverse=True)
