"""The Bazel in the test image, asked the way preflight asks it (core/bazelversion.py),
and the version fact that matters most, checked against that Bazel itself.

The image carries Debian's bazel-bootstrap 4.2.3, which calls itself "bazel no_version":
the package version names the release. Bazel 4.2.3 refuses --disk_cache beside
--remote_executor with the words resources/knowledge/bazel.toml records.
"""

from __future__ import annotations

import time

import pytest
from packaging.version import Version

from tests import world
from tfwizard.core import bazelversion as bv
from tfwizard.core.bazelfacts import load_bazel_facts

pytestmark = pytest.mark.docker

SMALL_TARGET = "//tensorflow/core:platform"


@pytest.fixture(scope="module")
def image_bazel():
    world.ensure_images()
    t0 = time.monotonic()
    answers = [world.run_in_image(list(argv), network="none", timeout=120)
               for argv in bv.IMAGE_PROBES]
    print(f"\nimage probes: {time.monotonic() - t0:.2f} s")
    return answers


def test_the_image_bazel_is_4_2_3_by_its_package(image_bazel):
    version_run, package_run = image_bazel
    assert version_run.exit_code == 0 and package_run.exit_code == 0
    assert version_run.output.strip() == "bazel no_version"
    found = bv.from_image_output(version_run.output, package_run.output)
    assert (found.version, found.source) == (Version("4.2.3"), "image-package")
    assert not bv.disk_cache_with_executor_ok(found.version)


def test_bazel_4_2_3_refuses_the_disk_cache_beside_an_executor(tmp_path):
    world.ensure_images()
    ws = world.copy_workspace(tmp_path / "ws")
    fact = load_bazel_facts().fact("disk_cache_with_remote_executor")
    # nothing listens at port 1: Bazel refuses the flags before it calls anyone
    res = world.bazel_build(ws, "--disk_cache=/tmp/tfw-disk-cache",
                            "--remote_executor=grpc://127.0.0.1:1", target=SMALL_TARGET,
                            network="none", timeout=300)
    assert res.exit_code != 0
    assert f"ERROR: {fact.refusal}" in res.output, res.output[-2000:]
    # the same build without the disk cache gets past the flags (and fails on the absent
    # service instead), which is what the plan does for Bazel < 5
    res = world.bazel_build(ws, "--remote_executor=grpc://127.0.0.1:1", "--remote_retries=0",
                            target=SMALL_TARGET, network="none", timeout=300)
    assert fact.refusal not in res.output
    assert "Failed to query remote execution capabilities" in res.output, res.output[-2000:]
