"""`tfwizard test` with a build image that has no git: for a checkout on this machine git
runs here, where the checkout is, and the tests of the change are found; where git must
run in the image (a clone in the container's volume), the error says the image lacks git,
not that the folder is no git checkout.

The image is the test image with git removed, built here from it (no registry)."""

from __future__ import annotations

import dataclasses
import io
import os
import uuid

import pytest

from tests import world
from tests.docker import kit
from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.warm import container as warm
from tfwizard.core.errors import TfWizardError
from tfwizard.core.recipe import load_recipe
from tfwizard.core.testloop.select import changed_files

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EDITED = "tensorflow/core/kernels/reduce_sum_op.cc"


@pytest.fixture(scope="module")
def nogit(tmp_path_factory):
    """A recipe over a git checkout of the fixture, built in an image without git."""
    world.require_docker()
    world.ensure_images()
    import docker

    client = docker.from_env(timeout=300)
    tag = f"tfwizard-test-nogit-{uuid.uuid4().hex[:8]}:latest"
    dockerfile = f"FROM {world.IMAGE}\nRUN rm -f /usr/bin/git /usr/local/bin/git\n"
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, pull=False,
                        rm=True, forcerm=True)
    base = tmp_path_factory.mktemp("nogit")
    prefix = f"tfwizard-test-nogit-{uuid.uuid4().hex[:8]}"
    workspace = world.copy_workspace(base)
    (workspace / ".gitignore").write_text(kit.GIT_IGNORED)
    kit.git(workspace, "init", "-q")
    kit.git(workspace, "add", "-A")
    kit.git(workspace, "commit", "-qm", "fixture")
    recipe = world.fixture_recipe(base / "r.toml", workspace=workspace, prefix=prefix,
                                  image=tag)
    plan = make_plan(load_recipe(recipe), recipe_dir=recipe.parent)
    space = warm.workspace_for(plan, str(recipe.resolve()))
    try:
        yield dataclasses.make_dataclass("W", ["recipe", "workspace", "client", "plan",
                                               "space", "data", "image"])(
            recipe, workspace, client, plan, space, base / "data", tag)
    finally:
        world.remove_workspace(client, space)
        kit.remove_caches(client, prefix)
        client.images.remove(tag, force=True)
        client.close()


def _test(w, *args: str) -> tuple[int, str, str]:
    status, out, err = capture(["test", str(w.recipe), *args],
                               env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(w.data)})
    return int(status), out, err


def test_the_image_really_has_no_git(nogit):
    out = nogit.client.containers.run(nogit.image, ["sh", "-c", "command -v git || echo none"],
                                      remove=True, network_mode="none")
    assert out.decode().strip() == "none"


def test_git_runs_where_the_checkout_is(nogit):
    status, _out, err = _test(nogit, "--list")
    assert status == 0, err[-3000:]
    assert "0 changed files against HEAD" in err, err[-3000:]
    assert "no git checkout" not in err
    src = nogit.workspace / EDITED
    src.write_text(src.read_text() + "\nextern \"C\" int tfw_nogit_marker() { return 3; }\n")
    status, _out, err = _test(nogit, "--list")
    assert status == 0, err[-3000:]
    assert "1 changed file against HEAD" in err, err[-3000:]
    assert "//tensorflow/core:reduction_ops_test" in err


def test_git_in_the_image_says_the_image_lacks_it(nogit):
    """The same warm container, asked as for a clone (no checkout on this machine): git
    must run inside, and the image has none."""
    box = warm.WarmContainer(nogit.client, nogit.plan, nogit.space, idle_s=300)
    box.ensure()
    box.plan = dataclasses.replace(nogit.plan, source_dir=None)
    with pytest.raises(TfWizardError) as caught:
        changed_files(box, "HEAD")
    assert "has no git" in caught.value.message and nogit.image in caught.value.message
    assert "no git checkout" not in caught.value.message
