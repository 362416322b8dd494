"""Small helpers for the Docker fault, crash and privilege tests (not a test module).

Busybox plans exercise the runner's plumbing in seconds; fixture recipes (the TF-shaped
Bazel workspace in the offline Bazel image) the real thing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests import world
from tfwizard.core.plan import LABEL, OUTPUT_USER_ROOT, BuildPlan, Step, make_plan
from tfwizard.core.recipe import load_recipe
from tfwizard.core.runner import BuildRunner

WHEEL_DIR = f"{OUTPUT_USER_ROOT}/w"


def recipe_file(path: Path, *, source_dir: Path, prefix: str, name: str = "fixture",
                image: str = world.IMAGE, network: str = "none",
                bazel_flags: Sequence[str] = ()) -> Path:
    """A fixture recipe (gcc toolchain, offline) building `source_dir`."""
    return world.fixture_recipe(path, workspace=source_dir, prefix=prefix, name=name,
                                image=image, network=network, bazel_flags=bazel_flags)


def busybox_plan(tmp_path: Path, steps: str | Sequence[Step], *, prefix: str,
                 name: str = "busybox", network: str = "none", uid: int | None = None,
                 gid: int | None = None) -> BuildPlan:
    """A plan whose steps run in busybox; a string is one `build` step's `sh -c` script."""
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    recipe = recipe_file(tmp_path / f"{name}.toml", source_dir=src, prefix=prefix, name=name,
                         network=network)
    plan = make_plan(load_recipe(recipe), recipe_dir=tmp_path, uid=uid, gid=gid)
    if isinstance(steps, str):
        steps = [Step("build", "analyse", ("sh", "-c", steps), workdir="/")]
    return dataclasses.replace(plan, image=world.BUSYBOX, wheel_dir=WHEEL_DIR, steps=list(steps))


def make_wheel_script(name: str = "t-1-py3-none-any.whl", size_mib: int = 0) -> str:
    """sh that writes a wheel into WHEEL_DIR (zeros of size_mib MiB, else one line)."""
    if size_mib:
        return (f"mkdir -p {WHEEL_DIR} && dd if=/dev/zero of={WHEEL_DIR}/{name} bs=1048576 "
                f"count={size_mib} 2>/dev/null")
    return f"mkdir -p {WHEEL_DIR} && echo wheel > {WHEEL_DIR}/{name}"


def run(runner: BuildRunner, on_event: Callable[[BuildRunner, Any], None] | None = None
        ) -> list[Any]:
    """Every event of the runner's build (asyncio.run)."""

    async def main() -> list[Any]:
        events = []
        async for event in runner.events():
            events.append(event)
            if on_event is not None:
                on_event(runner, event)
        return events

    return asyncio.run(main())


def leftovers(client: Any, build_id: str) -> list[Any]:
    """Containers and volumes still labelled with the build id (must be [])."""
    flt = {"label": f"{LABEL}.build={build_id}"}
    return client.containers.list(all=True, filters=flt) + client.volumes.list(filters=flt)


def remove_build(client: Any, build_id: str) -> None:
    """Remove a build's containers, then its volumes (test cleanup)."""
    flt = {"label": f"{LABEL}.build={build_id}"}
    for c in client.containers.list(all=True, filters=flt):
        c.remove(force=True)
    for v in client.volumes.list(filters=flt):
        v.remove(force=True)


def remove_caches(client: Any, prefix: str) -> None:
    """Remove the cache volumes a test's recipes named with `prefix`."""
    for v in client.volumes.list(filters={"label": LABEL}):
        if v.name.startswith(prefix):
            v.remove(force=True)


def stdout_lines(events: list[Any]) -> list[str]:
    return [line for e in events if e.type == "log" and e.channel == "stdout"
            for line in e.lines]


def docker_world(tmp_path_factory: Any, kind: str) -> Iterator[SimpleNamespace]:
    """A module's Docker test world: a folder, a cache prefix, a client, the builds to clean.

    Use as the body of a module-scoped fixture: `yield from kit.docker_world(f, "crash")`.
    """
    world.require_docker()
    world.ensure_images()
    import docker

    ns = SimpleNamespace(base=tmp_path_factory.mktemp(kind),
                         prefix=f"tfwizard-test-{kind}-{uuid.uuid4().hex[:8]}",
                         client=docker.from_env(timeout=120), builds=[])
    yield ns
    for build_id in ns.builds:
        remove_build(ns.client, build_id)
    remove_caches(ns.client, ns.prefix)
    ns.client.close()
