"""The warm build's wheel checksum kept in the state volume (issue 17), on the real engine
with the image's coreutils: a no-op build does not hash the wheel again (its report says
"cached"), a build whose wheel changed reports the file's real sha256, and so does one after
a same-size rewrite of the wheel whose mtime was put back."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from bench import bigws
from tests import world
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.recipe import load_recipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _real_sha(box: warm.WarmContainer, path: str) -> str:
    data = box.read_file(path)
    assert data is not None
    return hashlib.sha256(data).hexdigest()


def test_the_wheel_is_hashed_only_when_its_stamp_changed(tmp_path):
    world.require_docker()
    world.ensure_images()
    import docker

    prefix = f"tfwizard-test-{uuid.uuid4().hex[:8]}"
    workspace = world.copy_workspace(tmp_path)
    recipe = world.fixture_recipe(tmp_path / "r.toml", workspace=workspace, prefix=prefix)
    client = docker.from_env(timeout=300)
    plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    space = warm.workspace_for(plan, str(recipe))
    box = warm.WarmContainer(client, plan, space)
    try:
        box.ensure()
        first = box.build(configure=True)
        assert first.exit_code == 0, first.output[-30:]
        (path,) = warm.bep_wheels(first.bep_lines or [], plan.bazel_target)
        assert first.wheel_cached == set()
        assert first.wheel_sha256 == {path: _real_sha(box, path)}

        noop = box.build()  # nothing changed: the kept checksum, no sha256sum
        assert noop.exit_code == 0 and noop.wheel_cached == {path}
        assert noop.wheel_sha256 == first.wheel_sha256

        bigws.edit_kernel(workspace / "tensorflow/core/kernels/add_op.cc", 7)
        edited = box.build()
        assert edited.exit_code == 0 and edited.wheel_cached == set()
        assert edited.wheel_sha256[path] == _real_sha(box, path) != first.wheel_sha256[path]

        # the same size, other bytes, the mtime put back: only ctime tells; Bazel may
        # write the wheel again or not: the report has the sha256 of what is there now
        flip = ('m=$(stat -c %.9Y "$1") && a=$(stat -c %a "$1") && chmod u+w "$1" && '
                'printf X | dd of="$1" bs=1 seek=100 conv=notrunc status=none && '
                'chmod "$a" "$1" && touch -m -d "@$m" "$1"')
        run = box.exec(["sh", "-c", flip, "sh", path])
        assert run.exit_code == 0, run.output
        rewritten = box.build()
        assert rewritten.exit_code == 0 and rewritten.wheel_cached == set()
        assert rewritten.wheel_sha256[path] == _real_sha(box, path)
    finally:
        world.remove_warm(client, space, prefix)
