"""A built wheel made a wheelhouse wheel (label, provenance, RECORD, name), and the checks
that refuse a wheel whose dist-info was changed after it was built. The wheels are written
by the fixture workspace's own wheel builder, the records as the runner writes them."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.core.wheelhouse import kit
from tfwizard.core.wheelhouse import WheelhouseError
from tfwizard.core.wheelhouse.label import check_wheel_file, record_digest, relabel
from tfwizard.core.wheelhouse.provenance import (
    PROVENANCE,
    cpu_requirements,
    from_label,
    label_of,
    labelled_version,
)
from tfwizard.core.wheelhouse.publish import labelled_wheel


def _rewrite(wheel: Path, change: dict[str, bytes], *, fix_record: bool) -> None:
    """Replace members of a wheel in place; with fix_record, write its RECORD to match."""
    with zipfile.ZipFile(wheel) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members.update(change)
    record_name = next(n for n in members if n.endswith(".dist-info/RECORD"))
    if fix_record:
        rows = [(n, record_digest(d), str(len(d))) for n, d in members.items()
                if n != record_name]
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([*rows, (record_name, "", "")])
        members[record_name] = out.getvalue().encode()
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


@pytest.fixture
def cpu_build(tmp_path):
    wheel = kit.tf_wheel(tmp_path / "out")
    record = kit.build_record(tmp_path / "data", kit.recipe_file(tmp_path / "cpu.toml"), wheel)
    return record, wheel


def test_a_cpu_build_becomes_a_labelled_wheel_with_a_correct_record(cpu_build):
    record, wheel = cpu_build
    out = labelled_wheel(record, wheel)
    assert out.parent == record / "published"
    assert out.name == "tensorflow_cpu-2.21.0+cpu-cp311-cp311-linux_x86_64.whl"
    assert wheel.is_file() and wheel.name == "tensorflow_cpu-2.21.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        assert not [n for n in names if n.startswith("tensorflow_cpu-2.21.0.dist-info/")]
        meta = zf.read("tensorflow_cpu-2.21.0+cpu.dist-info/METADATA").decode()
        assert "\nVersion: 2.21.0+cpu\n" in meta and "Provides-Extra: and-cuda" in meta
        rows = list(csv.reader(io.StringIO(
            zf.read("tensorflow_cpu-2.21.0+cpu.dist-info/RECORD").decode())))
        listed = {r[0]: (r[1], r[2]) for r in rows}
        # every member but RECORD has its urlsafe-b64 sha256 (no padding) and its size
        for name in names:
            if name.endswith("/RECORD"):
                assert listed[name] == ("", "")
                continue
            data = zf.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert listed[name] == ("sha256=" + digest.decode(), str(len(data))), name
        prov = json.loads(zf.read(f"tensorflow_cpu-2.21.0+cpu.dist-info/{PROVENANCE}"))
    recipe_sha = hashlib.sha256((record / "recipe.toml").read_bytes()).hexdigest()
    assert prov["recipe_sha256"] == recipe_sha and prov["recipe_name"] == "wh-cpu"
    assert prov["build_id"] == record.name and prov["wheel_check"]["ok"] is True
    assert prov["backend"] == "cpu" and prov["tags"] == ["cp311-cp311-linux_x86_64"]
    assert prov["source"]["ref"] == "v2.21.0" and prov["source"]["commit"]
    assert prov["original_sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert check_wheel_file(out) == []
    # the same build labelled again gives the same bytes (a second publish sends them)
    first = out.read_bytes()
    assert labelled_wheel(record, wheel).read_bytes() == first


def test_a_cuda_label_names_cuda_and_every_target_and_an_extra_segment(tmp_path):
    info = kit.cuda_info(ccs=("sm_90", "compute_120"))
    wheel = kit.tf_wheel(tmp_path / "out", name="tensorflow", tag="cp312-cp312-linux_x86_64",
                         build_info=info)
    recipe = kit.recipe_file(tmp_path / "cuda.toml", backend="cuda", python="3.12",
                             ccs=("sm_90", "compute_120"))
    record = kit.build_record(tmp_path / "data", recipe, wheel)
    out = labelled_wheel(record, wheel, extra_label="lab2")
    assert out.name == "tensorflow-2.21.0+cu128.sm90.compute120.lab2-cp312-cp312-linux_x86_64.whl"
    assert check_wheel_file(out) == []
    prov = from_label(out.name)
    assert prov is not None and prov.backend == "cuda" and prov.cuda == "12.8"
    assert prov.compute_capabilities == ("sm_90", "compute_120")
    with pytest.raises(WheelhouseError, match="local label segment"):
        labelled_wheel(record, wheel, extra_label="Not-OK")


def test_label_rules():
    assert label_of("cpu") == "cpu"
    assert label_of("cuda", cuda="12.5.1", tokens=("sm_86", "compute_90")) == \
        "cu125.sm86.compute90"
    assert label_of("rocm", amdgpu_targets=("gfx90a",)) == "rocm.gfx90a"
    assert labelled_version("2.21.0", "cpu") == "2.21.0+cpu"
    assert labelled_version("2.22.0rc0", "cu128.sm120") == "2.22.0rc0+cu128.sm120"
    assert from_label("tensorflow-2.21.0-cp312-cp312-linux_x86_64.whl") is None


def test_compiler_flags_name_the_cpu_features_they_need():
    assert cpu_requirements(["-Wno-sign-compare"]) == ((), False)
    assert cpu_requirements(["-mavx2", "-mfma"]) == (("avx2", "fma"), False)
    features, native = cpu_requirements(["-march=x86-64-v3"])
    assert "avx2" in features and "avx512f" not in features and not native
    assert cpu_requirements(["-march=native"]) == ((), True)


def test_a_failed_build_is_not_published(cpu_build):
    record, wheel = cpu_build
    result = json.loads((record / "result.json").read_text())
    (record / "result.json").write_text(json.dumps({**result, "status": "failed"}))
    with pytest.raises(WheelhouseError, match="did not hand out a checked wheel"):
        labelled_wheel(record, wheel)


def test_provenance_edited_after_the_build_is_caught_even_with_a_consistent_record(cpu_build,
                                                                                  tmp_path):
    """Someone claims CUDA coverage in the provenance and rewrites RECORD to match: the
    wheel's own build facts (TensorFlow's build_info.py) contradict it."""
    record, wheel = cpu_build
    out = labelled_wheel(record, wheel)
    name = f"tensorflow_cpu-2.21.0+cpu.dist-info/{PROVENANCE}"
    with zipfile.ZipFile(out) as zf:
        prov = json.loads(zf.read(name))
    prov.update(backend="cuda", cuda="12.8.1", compute_capabilities=["compute_120"])
    _rewrite(out, {name: json.dumps(prov).encode()}, fix_record=True)
    problems = check_wheel_file(out)
    assert any("contradict its provenance" in p and "is_cuda_build" in p for p in problems), \
        problems


def test_a_member_changed_without_its_record_is_caught(cpu_build):
    record, wheel = cpu_build
    out = labelled_wheel(record, wheel)
    _rewrite(out, {"tensorflow/python/platform/build_info.py": b"build_info = {}\n"},
             fix_record=False)
    problems = check_wheel_file(out)
    assert problems == ["tensorflow/python/platform/build_info.py is not what RECORD says "
                        "(sha256 or size differ)"]


def test_a_version_edited_in_metadata_is_caught(cpu_build):
    record, wheel = cpu_build
    out = labelled_wheel(record, wheel)
    name = "tensorflow_cpu-2.21.0+cpu.dist-info/METADATA"
    with zipfile.ZipFile(out) as zf:
        meta = zf.read(name).replace(b"Version: 2.21.0+cpu", b"Version: 2.22.0+cpu")
    _rewrite(out, {name: meta}, fix_record=True)
    problems = check_wheel_file(out)
    assert any("versions differ" in p for p in problems), problems
    assert any("provenance says version 2.21.0+cpu" in p for p in problems), problems


def test_a_wheel_without_provenance_is_not_a_wheelhouse_wheel(cpu_build):
    _record, wheel = cpu_build
    assert check_wheel_file(wheel)[-1].startswith("it has no tfwizard provenance")


def test_relabel_never_leaves_a_half_wheel(cpu_build, tmp_path, monkeypatch):
    record, wheel = cpu_build
    from tfwizard.core.wheelhouse import label

    prov = label.read_provenance(zipfile.ZipFile(labelled_wheel(record, wheel)))
    assert prov is not None

    def broken(*_args, **_kw):
        raise OSError("disk full")

    monkeypatch.setattr(label, "_copy", broken)
    with pytest.raises(OSError, match="disk full"):
        relabel(wheel, prov, tmp_path / "dest")
    assert list((tmp_path / "dest").iterdir()) == []
