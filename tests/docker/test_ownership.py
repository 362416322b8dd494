"""On an engine several users share, tfwizard acts on its own user's objects only: `clean`
(with --dry-run too), attach and the wizard's "a build is still running" never list or
remove another user's containers and volumes.

The other user is a uid no account on this machine has; their objects are made as their
tfwizard makes them (the labels of core/paths.own_labels with their uid). This process
plays a second user by its own uid too (os.getuid patched: the engine only sees labels), so
the real `clean` below can run without touching anything of the people sharing the engine.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest

from tests import world
from tfwizard.cli import capture
from tfwizard.core.building.run.attach import find_builds
from tfwizard.core.building.warm.attach import build_tag, find_warm_builds
from tfwizard.core.building.warm.container import WORKSPACE_LABEL
from tfwizard.core.docker.leftovers import find_leftovers, remove_leftovers
from tfwizard.core.paths import LABEL, OWNER_LABEL

pytestmark = pytest.mark.docker

ME, OTHER = 61001, 61002  # no account has them (checked below)


def _labels(uid: int, **extra: str) -> dict[str, str]:
    return {LABEL: "1", OWNER_LABEL: str(uid), **extra}


@pytest.fixture
def engine(monkeypatch):
    world.require_docker()
    world.ensure_images()
    import pwd

    import docker

    for uid in (ME, OTHER):
        with pytest.raises(KeyError):
            pwd.getpwuid(uid)
    client = docker.from_env(timeout=120)
    tag = uuid.uuid4().hex[:8]
    made: dict[int, list] = {ME: [], OTHER: []}
    try:
        for uid in (ME, OTHER):
            build = f"20260101-000000-{tag}{uid % 10}"
            volume = client.volumes.create(f"tfwizard-test-own-{tag}-{uid}", labels=_labels(
                uid, **{f"{LABEL}.build": build, f"{LABEL}.volume": "output"}))
            cache = client.volumes.create(f"tfwizard-test-own-{tag}-{uid}-cache",
                                          labels=_labels(uid, **{f"{LABEL}.volume": "cache"}))
            step = client.containers.create(world.BUSYBOX, ["true"],
                                            name=f"tfwizard-test-own-{tag}-{uid}-step",
                                            labels=_labels(uid, **{f"{LABEL}.build": build,
                                                                   f"{LABEL}.step": "build"}))
            warm = client.containers.run(
                world.BUSYBOX, ["sleep", "300"], detach=True, network_mode="none",
                name=f"tfwizard-test-own-{tag}-{uid}-warm",
                labels=_labels(uid, **{WORKSPACE_LABEL: f"{tag}{uid}",
                                       f"{LABEL}.step": "warm"}))
            # a warm build running in it, tagged as a build exec is (warm/attach.py)
            tag_arg = build_tag(f"{build}w", "0" * 64, None)
            client.api.exec_start(client.api.exec_create(
                warm.id, ["sh", "-c", "sleep 300", "sh", tag_arg])["Id"], detach=True)
            made[uid] = [volume, cache, step, warm]
        monkeypatch.setattr(os, "getuid", lambda: ME)
        yield client, made, tag
    finally:
        # by name: what a failed setup made before it could be listed in `made` too
        mine = f"tfwizard-test-own-{tag}"
        for c in client.containers.list(all=True, filters={"name": mine}):
            c.remove(force=True)
        for v in client.volumes.list(filters={"name": mine}):
            v.remove(force=True)
        client.close()


def _names(made, uid):
    return {o.name for o in made[uid]}


def test_another_users_objects_are_never_listed_or_removed(engine):
    client, made, tag = engine
    mine, theirs = _names(made, ME), _names(made, OTHER)
    listed = {i.name for i in find_leftovers(client, caches=True, running=True,
                                             workspaces=True)}
    assert mine <= listed and not (theirs & listed)

    status, out, err = capture(["clean", "--dry-run", "--json", "--caches", "--workspaces",
                                "--running"])
    assert int(status) == 0, err
    dry = {i["name"] for i in json.loads(out)["items"]}
    assert mine <= dry and not (theirs & dry)

    # attach and the wizard's question: their builds are not there to follow
    builds = {b.build_id for b in find_builds(client)}
    assert any(b.startswith("20260101-000000-" + tag) for b in builds)
    assert f"20260101-000000-{tag}{OTHER % 10}" not in builds
    warm = {b.build_id for b in find_warm_builds(client)}
    assert f"20260101-000000-{tag}{ME % 10}w" in warm
    assert f"20260101-000000-{tag}{OTHER % 10}w" not in warm

    status, out, err = capture(["clean", "--json", "--caches", "--workspaces", "--running"])
    assert int(status) == 0, err
    left = {c.name for c in client.containers.list(all=True, filters={"name": tag})} | {
        v.name for v in client.volumes.list(filters={"name": tag})}
    assert theirs <= left and not (mine & left)


def test_objects_without_an_owner_are_kept_and_named_until_asked(engine):
    """What a tfwizard before owner labels made: listed as kept with the way to remove
    it, removed with --unowned (and still after the other rules: a cache needs --caches);
    another user's owned objects never."""
    client, made, tag = engine
    stem = f"tfwizard-test-own-{tag}-legacy"
    volume = client.volumes.create(stem, labels={LABEL: "1", f"{LABEL}.build": "20250101-x",
                                                 f"{LABEL}.volume": "output"})
    cache = client.volumes.create(f"{stem}-cache", labels={LABEL: "1",
                                                           f"{LABEL}.volume": "cache"})
    step = client.containers.create(world.BUSYBOX, ["true"], name=f"{stem}-step",
                                    labels={LABEL: "1", f"{LABEL}.build": "20250101-x",
                                            f"{LABEL}.step": "build"})
    legacy = {volume.name, cache.name, step.name}

    def mine(items):
        return {i.name: i for i in items if i.name.startswith(f"tfwizard-test-own-{tag}")}

    kept = mine(find_leftovers(client, caches=True))
    assert legacy <= set(kept)
    assert all("--unowned" in kept[name].skipped for name in legacy)
    assert not (_names(made, OTHER) & set(kept))

    items = mine(find_leftovers(client, unowned=True))
    assert items[step.name].skipped == "" and items[volume.name].skipped == ""
    assert "--caches" in items[cache.name].skipped  # the cache rule still holds
    assert not (_names(made, OTHER) & set(items))
    legacy_items = [i for i in items.values() if i.name in legacy]
    assert remove_leftovers(client, legacy_items) == []
    left = {c.name for c in client.containers.list(all=True, filters={"name": stem})} | {
        v.name for v in client.volumes.list(filters={"name": stem})}
    assert left == {cache.name}

    status, out, _err = capture(["clean", "--help"])
    assert "--unowned" in out
