"""bench/bigws.py, the generated TF-shaped workspace of the rebuild benchmark (issue 17).

The generator's own promises (same seed, same bytes; the edit changes one line) run
without Docker; a small instance is built for real, offline, in the Bazel test image, with
@big_external found only in the distdir.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
import zipfile
from pathlib import Path

import pytest

from bench import bigws
from tests import world

SMALL = {"files": 24, "packages": 3, "external_mb": 2}


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a = bigws.generate(tmp_path / "a", **SMALL)
    b = bigws.generate(tmp_path / "b", **SMALL)
    c = bigws.generate(tmp_path / "c", **SMALL, seed=18)
    assert _tree_digest(tmp_path / "a") == _tree_digest(tmp_path / "b")
    assert a.archive_sha256 == b.archive_sha256 != c.archive_sha256
    assert _tree_digest(a.workspace) != _tree_digest(c.workspace)
    # what the WORKSPACE asks for is what distdir holds
    assert a.archive_sha256 == hashlib.sha256(a.archive.read_bytes()).hexdigest()
    assert f'sha256 = "{a.archive_sha256}"' in (a.workspace / "WORKSPACE").read_text()


def test_shape_counts_and_fixture_interface(tmp_path):
    big = bigws.generate(tmp_path, files=30, packages=4, external_mb=1)
    kernels = sorted(big.workspace.glob("tensorflow/core/kernels/*/*.cc"))
    assert len(kernels) == big.kernel_sources == 30
    assert {k.parent.name for k in kernels} == {"array", "math", "nn", "linalg"}
    assert all((big.workspace / p / "BUILD").is_file() for p in big.packages)
    # the fixture's interface came along, copied, not rewritten
    for name in ("configure.py", ".bazelrc", "tensorflow/tools/pip_package/BUILD",
                 "tensorflow/tools/pip_package/build_wheel.py"):
        assert (big.workspace / name).read_bytes() == (world.FIXTURE_WORKSPACE / name).read_bytes()
    so_build = (big.workspace / "tensorflow/core/BUILD").read_text()
    for p in ("array", "math", "nn", "linalg"):
        assert f'"//tensorflow/core/kernels/{p}:{p}",' in so_build
    # libraries build on libraries in other packages too
    math_build = (big.workspace / "tensorflow/core/kernels/math/BUILD").read_text()
    assert '"//tensorflow/core/kernels/array:' in math_build
    assert 950_000 < big.external_bytes < 1_100_000 and big.external_files > 40


def test_edit_kernel_changes_one_line(tmp_path):
    big = bigws.generate(tmp_path, **SMALL)
    path = big.workspace / big.edit_file
    before = path.read_text().splitlines()
    assert bigws.edit_value(path) == 0
    bigws.edit_kernel(path, 7)
    after = path.read_text().splitlines()
    assert len(after) == len(before)
    assert [i for i, (x, y) in enumerate(zip(before, after, strict=True)) if x != y] == [
        len(before) - 1]
    assert bigws.edit_value(path) == 7
    # a fixture kernel has no marker line: the first edit appends it, the next rewrites it
    add_op = big.workspace / "tensorflow/core/kernels/add_op.cc"
    lines = len(add_op.read_text().splitlines())
    bigws.edit_kernel(add_op, 1)
    bigws.edit_kernel(add_op, 2)
    assert len(add_op.read_text().splitlines()) == lines + 1
    assert bigws.edit_value(add_op) == 2


def test_baseline_recipe_serves_the_distdir_as_tfwizard_does(tmp_path):
    from bench import rebuild_baseline as rb

    subject = rb.big_subject(tmp_path / "big", **SMALL)
    plan = rb.plan_of(rb.write_recipe(subject, tmp_path / "r.toml", prefix="tfwizard-bench-t"))
    assert "--distdir=/cache/distdir" in plan.flag_list
    assert [m for m in plan.mounts if m.target == "/cache/distdir"][0].source == str(
        subject.distdir)
    assert plan.network_mode == "none" and "--jobs=2" in plan.flag_list
    fixture = rb.fixture_subject(tmp_path / "fx")
    assert (fixture.workspace / fixture.edit_file).is_file()
    assert not any(f.startswith("--distdir") for f in rb.plan_of(
        rb.write_recipe(fixture, tmp_path / "f.toml", prefix="tfwizard-bench-t")).flag_list)


@pytest.mark.docker
@pytest.mark.slow
def test_small_instance_builds_offline_from_distdir(tmp_path):
    world.require_docker()
    world.ensure_images()
    big = bigws.generate(tmp_path, **SMALL)
    distdir = {str(big.distdir): {"bind": "/distdir", "mode": "ro"}}

    # without --distdir the fake URL is all Bazel has: no network, no archive
    nodist = world.run_in_image(["bazel", "build", *world.BAZEL_UI_FLAGS, "--nobuild",
                                 "@big_external//:big_external"], workspace=big.workspace,
                                timeout=300)
    assert nodist.exit_code != 0, nodist.output[-3000:]
    assert bigws.EXTERNAL_URL in nodist.output, nodist.output[-3000:]

    assert world.run_configure(big.workspace).exit_code == 0
    built = world.bazel_build(big.workspace, "--config=opt", "--jobs=2", "--distdir=/distdir",
                              extra_volumes=distdir, timeout=600)
    assert built.exit_code == 0, built.output[-4000:]
    assert built.wheel is not None
    with zipfile.ZipFile(built.wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
        so = zf.read("tensorflow/libtensorflow_framework.so")
    assert b"Provides-Extra: and-cuda" in metadata
    # the shared object holds the fixture's kernels, the generated ones and @big_external's
    (tmp_path / "lib.so").write_bytes(so)
    lib = ctypes.CDLL(str(tmp_path / "lib.so"))
    edit_fn = getattr(lib, "tfw_bench_edit_" + Path(big.edit_file).stem)
    assert edit_fn() == 0
    lib.big_external_0.restype = ctypes.c_double
    lib.big_external_0.argtypes = [ctypes.c_double]
    assert lib.big_external_0(1.0) > 0
    # every generated kernel was linked in (the headers declare one function per .cc)
    declared = [m for h in big.workspace.glob("tensorflow/core/kernels/*/*.h")
                for m in re.findall(r"TFW_EXPORT double (tfw_\w+)\(double x\);", h.read_text())]
    assert len(declared) == big.kernel_sources
    assert [name for name in declared if not hasattr(lib, name)] == []
