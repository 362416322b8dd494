"""A wheel held against its recipe (core/install/wheelcheck.py, wheelfacts.py, build/wheelgate.py):
the release and patch level, the tags, and TensorFlow's own build facts from build_info.py,
each a match, a mismatch naming both values, or "not recorded" where the release does not
write it. The build-info texts are the official wheels' (tests/tools/official_wheels.py
reads them from PyPI; tf-facts-audit-4 rows 19.6, 21.7 and 22.6)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run import outcome
from tfwizard.core.building.run.wheelgate import _source_version, check_built_wheel
from tfwizard.core.errors import TfWizardError
from tfwizard.core.host import HostProfile
from tfwizard.core.install.wheelcheck import (
    RECORD_FILE,
    Expected,
    Found,
    compare,
    expected_of,
    recorded_expectation,
)
from tfwizard.core.install.wheelfacts import BUILD_INFO, parse_build_info, read_wheel_facts
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"
NO_GPU = HostProfile.load(HOSTS / "no-gpu-server.json")

#: the official 2.21.0 GPU wheel's build_info.py (audit 4, 21.7): TF's OrderedDict shape
INFO_221 = (
    '"""Auto-generated module providing information about the build."""\n'
    "import collections\n\n"
    "build_info = collections.OrderedDict([('cpu_compiler', 'clang'), "
    "('cuda_compute_capabilities', ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']), "
    "('cuda_version', '12.5.1'), ('cudnn_version', '9'), ('is_cuda_build', True), "
    "('is_rocm_build', False), ('is_tensorrt_build', False)])\n")
#: 2.22.0rc0's: no CUDA version, no compute capabilities any more (audit 4, 22.6)
INFO_222 = ("import collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', "
            "'clang'), ('is_cuda_build', True), ('is_rocm_build', False), "
            "('is_tensorrt_build', False)])\n")
#: a CPU wheel's, as a plain dict literal (the fixture's and older releases' shape)
INFO_CPU = "build_info = {'is_cuda_build': False, 'is_rocm_build': False}\n"


def write_wheel(path: Path, *, name: str = "tensorflow", version: str = "2.21.0",
                tag: str = "cp312-cp312-manylinux_2_27_x86_64", info: str | None = INFO_221
                ) -> Path:
    dist = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\n"
                                        f"Version: {version}\n\nlong text\n")
        zf.writestr(f"{dist}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n")
        if info is not None:
            zf.writestr(BUILD_INFO, info)
    return path


def cuda_plan(**changes):
    recipe = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml").with_changes({
        "tensorflow.version": "2.21.0", "python.version": "3.12",
        "cuda.compute_capabilities": ["sm_60", "sm_70", "sm_80", "sm_89", "compute_90"],
        **changes})
    return make_plan(recipe, build_host=NO_GPU, recipe_dir=ROOT / "recipes")


def cpu_plan(**changes):
    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml").with_changes(changes)
    return make_plan(recipe, build_host=NO_GPU, recipe_dir=ROOT / "recipes")


def verdicts(check):
    return {r.fact: r.verdict for r in check.rows}


def test_tfs_build_info_shapes_parse():
    assert parse_build_info(INFO_221)["cuda_compute_capabilities"][-1] == "compute_90"
    assert parse_build_info(INFO_CPU) == {"is_cuda_build": False, "is_rocm_build": False}
    with pytest.raises(ValueError):
        parse_build_info("x = 1\n")


def test_a_wheel_that_matches_its_plan(tmp_path):
    facts = read_wheel_facts(write_wheel(tmp_path / "w.whl"))
    assert facts.name == "tensorflow" and facts.version == "2.21.0"
    assert facts.tags == ("cp312-cp312-manylinux_2_27_x86_64",)
    check = compare(expected_of(cuda_plan(), glibc_floor="2.27"), Found.of_wheel(facts))
    assert check.ok, check.rows
    assert set(verdicts(check).values()) == {"match"}
    assert {"version", "python", "glibc", "is_cuda_build", "cuda_version", "cudnn_version",
            "cuda_compute_capabilities"} <= set(verdicts(check))
    assert check.summary().startswith("wheel check passed: name tensorflow, version 2.21.0")


@pytest.mark.parametrize("wheel, plan, fact, found", [
    ({"version": "2.21.1"}, {}, "version", "2.21.1"),
    ({"version": "2.22.0rc0"}, {}, "version", "2.22.0rc0"),
    ({"tag": "cp311-cp311-manylinux_2_27_x86_64"}, {}, "python", "cp311"),
    ({"tag": "cp312-cp312-manylinux_2_28_x86_64"}, {}, "glibc", "2.28"),
    ({"name": "tensorflow_cpu"}, {}, "name", "tensorflow_cpu"),
    ({"info": INFO_221.replace("'12.5.1'", "'12.8.0'")}, {}, "cuda_version", "12.8.0"),
    ({"info": INFO_221.replace("'cudnn_version', '9'", "'cudnn_version', '8'")}, {},
     "cudnn_version", "8"),
    ({}, {"cuda.compute_capabilities": ["sm_86"]}, "cuda_compute_capabilities",
     "sm_60,sm_70,sm_80,sm_89,compute_90"),
    ({"info": INFO_221.replace("'compute_90'", "'sm_90'")}, {}, "cuda_compute_capabilities",
     "sm_60,sm_70,sm_80,sm_89,sm_90"),
    ({"info": INFO_CPU}, {}, "is_cuda_build", "False"),
])
def test_a_fact_that_differs_fails_naming_both_values(tmp_path, wheel, plan, fact, found):
    path = write_wheel(tmp_path / "w.whl", **wheel)
    check = compare(expected_of(cuda_plan(**plan), glibc_floor="2.27"),
                    Found.of_wheel(read_wheel_facts(path)))
    assert not check.ok
    assert [r.fact for r in check.mismatches()] == [fact]
    row = check.mismatches()[0]
    assert row.found == found
    assert f"{fact}: the wheel says {found}, the recipe {row.expected}" == check.difference()


def test_what_the_release_does_not_write_is_not_recorded_not_wrong(tmp_path):
    """2.22 dropped the CUDA version and the compute capabilities from build_info; a plain
    linux_* tag promises no glibc; a wheel without build_info.py says nothing at all."""
    path = write_wheel(tmp_path / "w.whl", tag="cp312-cp312-linux_x86_64", info=INFO_222)
    check = compare(expected_of(cuda_plan(), glibc_floor="2.27"),
                    Found.of_wheel(read_wheel_facts(path)))
    assert check.ok
    found = verdicts(check)
    assert found["cuda_version"] == found["cuda_compute_capabilities"] == "not recorded"
    assert found["glibc"] == "not recorded" and found["is_cuda_build"] == "match"
    assert "(not recorded in the wheel: glibc, cuda_version" in check.summary()
    bare = write_wheel(tmp_path / "b.whl", info=None)
    assert compare(expected_of(cuda_plan()), Found.of_wheel(read_wheel_facts(bare))).ok


def test_a_build_suffix_is_the_same_release_but_a_patch_level_is_not():
    expected = expected_of(cpu_plan())
    assert compare(expected, Found(version="2.21.0.post0")).ok  # TF's snapshot suffix "-0"
    assert compare(expected, Found(version="2.21.0.dev20260101+selfbuilt")).ok
    assert not compare(expected, Found(version="2.21.1")).ok
    assert not compare(expected, Found(version="2.21.0rc1")).ok


def test_bare_and_explicit_compute_capabilities():
    plan = cuda_plan(**{"cuda.compute_capabilities": ["8.6", "9.0"]})
    expected = expected_of(plan)
    assert expected.compute_capabilities == "8.6,9.0"
    # a bare x.y is whatever TF makes of it; the architectures must be the same
    ok = Found(version="2.21.0", build_info={"is_cuda_build": True, "is_rocm_build": False,
                                             "cuda_compute_capabilities": ["sm_86", "compute_90"]})
    assert compare(expected, ok).ok
    other = Found(version="2.21.0", build_info={"is_cuda_build": True, "is_rocm_build": False,
                                                "cuda_compute_capabilities": ["sm_86"]})
    assert verdicts(compare(expected, other))["cuda_compute_capabilities"] == "mismatch"


def test_the_version_a_checkout_or_ref_must_have_is_its_own(tmp_path):
    source = tmp_path / "tf"
    source.mkdir()
    plan = cpu_plan(**{"tensorflow.source_dir": str(source)})
    assert plan.source_kind == "dir"
    found = expected_of(plan, source_version="2.23.0")
    assert (found.version, found.version_source) == ("2.23.0", "the version the source says")
    assert expected_of(plan).version == ""  # a source that says nothing: not recorded
    assert verdicts(compare(expected_of(plan), Found(version="9.9.9")))["version"] == \
        "not recorded"
    # a release build must be the release asked for, whatever its clone says
    assert expected_of(cpu_plan(), source_version="2.18.0").version == "2.21.0"


@pytest.mark.parametrize("files, version", [
    ({"tensorflow/tf_version.bzl": '"""x"""\nload("x", "y")\nTF_VERSION = "2.21.0"\n'},
     "2.21.0"),
    ({"tensorflow/core/public/version.h":
      "#define TF_MAJOR_VERSION 2\n#define TF_MINOR_VERSION 22\n#define TF_PATCH_VERSION 0\n"
      '#define TF_VERSION_SUFFIX "-rc0"\n'}, "2.22.0rc0"),  # PEP 440, as the wheel names it
    ({"tensorflow/tools/pip_package/setup.py": "import os\n_VERSION = '2.16.2'\n"}, "2.16.2"),
    ({}, None),
])
def test_the_source_says_its_version_in_tfs_own_files(files, version):
    read = {k: v.encode() for k, v in files.items()}.get
    assert _source_version(read) == version


def test_the_fixture_says_its_version_where_tf_does():
    fixture = ROOT / "tests" / "fixtures" / "tf_workspace"

    def read(path: str) -> bytes | None:
        return (fixture / path).read_bytes() if (fixture / path).is_file() else None

    assert _source_version(read) == "2.18.0"


def test_the_gate_reads_the_wheel_and_the_source(tmp_path):
    source = tmp_path / "tf"
    (source / "tensorflow").mkdir(parents=True)
    plan = cpu_plan(**{"tensorflow.source_dir": str(source)})
    wheel = write_wheel(tmp_path / "w.whl", name="tensorflow_cpu", version="2.19.0",
                        tag="cp312-cp312-manylinux2014_x86_64", info=INFO_CPU)
    files = {"tensorflow/tf_version.bzl": b'TF_VERSION = "2.19.0"\n'}
    check = check_built_wheel(plan, wheel, files.get)
    assert check.ok, check.rows
    assert check.expected.glibc == "2.27"  # 2.21's wheels: manylinux_2_27
    assert verdicts(check)["glibc"] == "match"  # manylinux2014 = glibc 2.17
    files["tensorflow/tf_version.bzl"] = b'TF_VERSION = "2.20.0"\n'
    assert check_built_wheel(plan, wheel, files.get).difference() == \
        "version: the wheel says 2.19.0, the recipe 2.20.0"
    (tmp_path / "bad.whl").write_bytes(b"not a zip")
    with pytest.raises(TfWizardError, match="cannot read the wheel"):
        check_built_wheel(plan, tmp_path / "bad.whl", files.get)


def test_the_record_keeps_the_comparison_and_the_expectation(tmp_path):
    check = compare(expected_of(cuda_plan(), glibc_floor="2.27"),
                    Found(version="2.21.1", build_info=parse_build_info(INFO_221)), wheel="w")
    check.write(tmp_path)
    data = json.loads((tmp_path / RECORD_FILE).read_text())
    assert data["ok"] is False and data["wheel"] == "w"
    assert data["summary"].startswith("wheel check FAILED: version: the wheel says 2.21.1")
    assert {f["fact"]: f["verdict"] for f in data["facts"]}["cuda_version"] == "match"
    assert recorded_expectation(tmp_path) == check.expected
    assert recorded_expectation(tmp_path / "none") is None
    assert Expected.from_dict({**check.expected.to_dict(), "new_key": 1}) == check.expected


def test_a_mismatch_fails_the_build_and_hands_out_no_wheel():
    found = outcome.classify(cancelled=False, exit_code=0, last_step="build", oom=False,
                             wheel_dir="/w", wheels=["/out/w.whl"],
                             mismatch="version: the wheel says 2.19.0, the recipe 2.19.1")
    assert found.status == "failed" and found.wheel is None
    assert "version: the wheel says 2.19.0, the recipe 2.19.1" in found.message
    assert "/out/w.whl" in found.message
    ok = outcome.classify(cancelled=False, exit_code=0, last_step="build", oom=False,
                          wheel_dir="/w", wheels=["/out/w.whl"])
    assert ok.status == "succeeded" and ok.wheel == "/out/w.whl"


def test_a_checkouts_version_is_read_from_the_checkout_itself(tmp_path):
    """A recipe with source_dir: the host folder is the source (no engine call); other
    kinds read the build's container (the Docker tests)."""
    from tfwizard.core.building.run.wheelgate import WheelGate

    source = tmp_path / "tf"
    (source / "tensorflow").mkdir(parents=True)
    (source / "tensorflow" / "tf_version.bzl").write_text('TF_VERSION = "2.23.0"\n')
    gate = WheelGate()
    gate.plan = cpu_plan(**{"tensorflow.source_dir": str(source)})  # type: ignore[attr-defined]
    assert _source_version(gate._read_source) == "2.23.0"
    assert gate._read_source("tensorflow/none.bzl") is None
