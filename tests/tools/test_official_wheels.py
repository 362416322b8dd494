"""The maintenance tool that reads official wheels (tests/tools/official_wheels.py): its
Range reads against a real HTTP server, its instruction-set verdicts on machine code a real
compiler made, and its parsers on the real tensorflow-cpu that pip installs."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.tags import parse_tag
from packaging.utils import parse_wheel_filename

from tests import world
from tests.net.servers import NginxServer
from tests.tools import official_wheels as ow

WHEEL_NAME = "tensorflow-2.18.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
BUILD_INFO = (
    '"""Auto-generated module providing information about the build."""\n'
    "import collections\n\n"
    "build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-18/bin/clang'), "
    "('cuda_compute_capabilities', ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']), "
    "('cuda_version', '12.5.1'), ('cudnn_version', '9'), ('is_cuda_build', True), "
    "('is_rocm_build', False), ('is_tensorrt_build', False)])\n")
METADATA = (
    "Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.18.0\nRequires-Python: >=3.9\n"
    "Requires-Dist: numpy <2.1.0,>=1.26.0\n"
    "Requires-Dist: tensorflow-intel ==2.18.0 ; platform_system == \"Windows\"\n"
    "Requires-Dist: tensorflow-io-gcs-filesystem >=0.23.1 ; python_version < \"3.12\"\n"
    "Provides-Extra: and-cuda\n"
    "Requires-Dist: nvidia-cuda-runtime-cu12 ==12.5.82 ; extra == 'and-cuda'\n"
    "Requires-Dist: nvidia-cudnn-cu12 ==9.3.0.75 ; extra == 'and-cuda'\n"
    "Requires-Dist: nvidia-nccl-cu12 ==2.21.5 ; extra == 'and-cuda'\n\nlong description\n")


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        if world.in_ci():
            pytest.fail(f"{', '.join(missing)} missing (tests/run.sh installs them)")
        pytest.skip(f"{', '.join(missing)} not installed")


def _wheel(path: Path, *, tag_line: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("tensorflow/libtensorflow_cc.so.2", os.urandom(8 << 20),
                    compress_type=zipfile.ZIP_STORED)
        zf.writestr("tensorflow/python/platform/build_info.py", BUILD_INFO)
        zf.writestr("tensorflow-2.18.0.dist-info/METADATA", METADATA)
        zf.writestr("tensorflow-2.18.0.dist-info/WHEEL",
                    f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag_line}\n\n")
    return path


def _index_file(nginx, path: Path, *, has_metadata: bool = False) -> ow.IndexFile:
    return ow.IndexFile("tensorflow", path.name, nginx.url + path.name, "0" * 64,
                        path.stat().st_size, has_metadata)


def test_reads_a_wheel_over_http_with_ranges_only(tmp_path):
    _need("nginx")
    with NginxServer(tmp_path, put=False) as nginx:
        nginx.root.mkdir(parents=True, exist_ok=True)
        path = _wheel(nginx.root / WHEEL_NAME,
                      tag_line="cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64")
        facts = ow.read_file_facts(_index_file(nginx, path), "x86_64")
        # PEP 658 metadata, when the index offers it, must be the wheel's own
        (nginx.root / (WHEEL_NAME + ".metadata")).write_text(METADATA)
        assert ow.read_file_facts(_index_file(nginx, path, has_metadata=True), "x86_64")
        (nginx.root / (WHEEL_NAME + ".metadata")).write_text(METADATA + "x")
        with pytest.raises(ValueError, match="PEP 658"):
            ow.read_file_facts(_index_file(nginx, path, has_metadata=True), "x86_64")
        statuses = [line.split('"')[2].split()[0] for line in nginx.access_lines()]
    assert facts.python == "3.10"
    assert facts.platforms == ("manylinux2014_x86_64", "manylinux_2_17_x86_64")
    assert facts.build_info["cuda_compute_capabilities"][-1] == "compute_90"
    assert facts.metadata["requires_python"] == ">=3.9"
    assert ow.extra_requirements(facts.metadata["requires"], "and-cuda", "x86_64", "3.10") == [
        "nvidia-cuda-runtime-cu12==12.5.82", "nvidia-cudnn-cu12==9.3.0.75",
        "nvidia-nccl-cu12==2.21.5"]
    plain = ow.plain_requirements(facts.metadata["requires"], "x86_64", "3.12")
    assert plain == ["numpy<2.1.0,>=1.26.0"]  # no Windows, no python<3.12, no extra
    # the 8 MiB member was never fetched: only the zip's tail and the small members
    assert facts.fetched < path.stat().st_size // 20
    assert statuses and set(statuses[:3]) == {"206"}


def test_a_wheel_whose_tags_disagree_with_its_name_is_refused(tmp_path):
    _need("nginx")
    with NginxServer(tmp_path, put=False) as nginx:
        nginx.root.mkdir(parents=True, exist_ok=True)
        path = _wheel(nginx.root / WHEEL_NAME, tag_line="cp311-cp311-manylinux_2_27_x86_64")
        with pytest.raises(ValueError, match="WHEEL tags"):
            ow.read_file_facts(_index_file(nginx, path), "x86_64")


def test_platform_tags_and_pythons():
    assert ow.glibc_of("manylinux2014_aarch64") == "2.17"
    assert ow.glibc_of("manylinux_2_27_x86_64") == "2.27"
    assert ow.glibc_of("manylinux1_x86_64") == "2.5"
    assert ow.glibc_of("macosx_12_0_arm64") is None
    tag = next(iter(parse_wheel_filename(
        "tensorflow-2.10.0-cp37-cp37m-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")[3]))
    assert ow.python_of(tag) == "3.7"


C_SOURCE = """
typedef struct { double a[8]; } block;
void scale(float *x, const float *y, float k, int n) { for (int i = 0; i < n; i++) x[i] = x[i] * k + y[i]; }
double dot(const double *x, const double *y, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * y[i]; return s; }
void copy(block *d, const block *s) { *d = *s; }
"""


@pytest.mark.parametrize(("flags", "baseline"), [([], "sse2"), (["-mavx"], "avx"),
                                                 (["-mavx2", "-mfma"], "avx2")])
def test_x86_verdict_on_code_gcc_compiled(tmp_path, flags, baseline):
    _need("gcc", "objdump")
    src = tmp_path / "k.c"
    src.write_text(C_SOURCE)
    lib = tmp_path / "k.so"
    subprocess.run(["gcc", "-O3", "-ffast-math", "-fPIC", "-shared", *flags, str(src), "-o",
                    str(lib)], check=True, capture_output=True, timeout=120)
    out = subprocess.run([*ow.disassembler("x86_64"), str(lib)], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    counts = ow.classify_x86(out)
    assert counts["simd"] > 10
    assert ow.baseline_from_probe("x86_64", counts) == baseline, counts


LLVM_IR = """
define i32 @bump(i32* %p) {
  %old = atomicrmw add i32* %p, i32 1 seq_cst
  ret i32 %old
}
"""


@pytest.mark.parametrize(("mattr", "baseline"), [("+v8a", "armv8-a"), ("+lse", "unknown")])
def test_aarch64_verdict_on_code_llvm_compiled(tmp_path, mattr, baseline):
    _need("llc", "llvm-objdump")
    ir = tmp_path / "k.ll"
    ir.write_text(LLVM_IR)
    obj = tmp_path / "k.o"
    subprocess.run(["llc", "-mtriple=aarch64-linux-gnu", f"-mattr={mattr}", "-filetype=obj",
                    str(ir), "-o", str(obj)], check=True, capture_output=True, timeout=120)
    out = subprocess.run([*ow.disassembler("aarch64"), str(obj)], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    counts = ow.classify_aarch64(out)
    assert counts["instructions"] > 0
    assert ow.baseline_from_probe("aarch64", counts) == baseline, counts


@pytest.mark.slow
def test_the_parsers_on_the_real_tensorflow_cpu_agree_with_wheels_toml(kb, tf_python):
    """The installed tensorflow-cpu's own files, read by the tool's parsers, give what
    wheels.toml says of its release (when the knowledge base knows the release)."""
    site = subprocess.run([str(tf_python), "-c", "import tensorflow, os; "
                           "print(os.path.dirname(os.path.dirname(tensorflow.__file__)))"],
                          check=True, capture_output=True, text=True, timeout=600).stdout.strip()
    dist = next(d for d in importlib.metadata.distributions(path=[site])
                if d.metadata["Name"] in ("tensorflow-cpu", "tensorflow_cpu"))
    version = dist.version
    if kb.release(version) is None or kb.release(version).version != version:
        pytest.skip(f"tensorflow-cpu {version} is not a release of the knowledge base")
    entry = {w.package: w for w in kb.official_wheels(version, "x86_64")}["tensorflow-cpu"]
    info = ow.parse_build_info(
        (Path(site) / "tensorflow/python/platform/build_info.py").read_text())
    assert not info["is_cuda_build"] and entry.kind == "cpu"
    assert list(info.get("cuda_compute_capabilities") or []) == list(entry.sass + entry.ptx)
    meta = ow.parse_metadata(dist.read_text("METADATA"))
    assert meta["requires_python"] == str(entry.requires_python)
    python = "{}.{}".format(*sys.version_info[:2])
    assert ow.extra_requirements(meta["requires"], "and-cuda", "x86_64", python) == list(
        entry.and_cuda)
    wheel_tags = [line.split(": ", 1)[1] for line in dist.read_text("WHEEL").splitlines()
                  if line.startswith("Tag: ")]
    platforms = {t.platform for line in wheel_tags for t in parse_tag(line)}
    assert platforms == set(entry.platform_tags)
    assert python in entry.pythons


def test_compute_targets_are_sass_and_ptx_and_the_marks_say_where_from():
    """build_info's sm_60,...,sm_89,compute_90: compute_90 is SASS sm_90 and PTX (TF's CUDA
    rules, tf-cuda-rules); the generated kernels' PTX-only sm_90 is sass_partial. A release
    whose fatbins were read cites them; another is marked as inferred."""
    assert ow.cuda_targets(["sm_60", "sm_89", "compute_90"]) == (
        ["sm_60", "sm_89", "sm_90"], ["compute_90"], ["sm_90"])
    assert ow.cuda_targets([]) == ([], [], [])
    for release, source, read in (("2.21.0", "tf-wheel-fatbins", True),
                                  ("2.19.0", "tf-cuda-rules", False)):
        f = ow._Facts({"release": release, "kind": "gpu"})
        ow._build_info_facts(f, {"cuda_compute_capabilities": ["sm_80", "compute_90"],
                                 "is_cuda_build": True, "cuda_version": "12.5.1",
                                 "cudnn_version": "9"})
        assert f.data["sass"] == ["sm_80", "sm_90"] and f.data["sass_partial"] == ["sm_90"]
        assert f.fact_sources["sass"] == f.fact_sources["sass_partial"] == \
            f"pypi-wheel-files {source}"
        assert [u.split(":")[0] for u in f.unverified] == ["sass", "sass_partial"]
        assert ("were not read" in f.unverified[0]) is not read
