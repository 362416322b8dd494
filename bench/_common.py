"""Shared by the benchmarks: the repository on sys.path and a fixture recipe writer."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import world  # noqa: E402


def fixture_recipe(path: Path, *, workspace: Path, prefix: str,
                   bazel_flags: tuple[str, ...] = ()) -> Path:
    """A recipe for the TF-shaped fixture in the offline test image."""
    return world.fixture_recipe(path, workspace=workspace, prefix=prefix, name="bench",
                                bazel_flags=bazel_flags)


def remove_volumes(client, prefix: str) -> None:
    for vol in client.volumes.list():
        if vol.name.startswith(prefix + "-"):
            vol.remove(force=True)


def remove_warm(client, space, plan) -> None:
    """A benchmark's warm workspace (its container and volumes) and its plan's cache
    volumes removed, then the client closed."""
    import docker.errors

    world.remove_workspace(client, space)
    for vol in plan.cache_volumes.values():
        try:
            client.volumes.get(vol).remove(force=True)
        except docker.errors.APIError:
            pass
    client.close()
