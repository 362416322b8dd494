"""Which wheelhouse wheel serves a machine: real host profiles (the H200 capture among them)
against wheels described by their provenance, each rejection with its reason."""

from __future__ import annotations

import pytest

from tests.core.wheelhouse.kit import HOSTS
from tfwizard.core import compat
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.wheelhouse.choose import Machine, choose
from tfwizard.core.wheelhouse.index import IndexFile
from tfwizard.core.wheelhouse.provenance import Provenance, label_of

KB = load_knowledge()


def _wheel(backend: str, *, cuda: str = "", tokens: tuple[str, ...] = (), python: str = "3.12",
           glibc: str = "2.27", features: tuple[str, ...] = (), version: str = "2.21.0",
           native: bool = False, build: str = "20260101-000000-aaaaaa",
           check_ok: bool = True) -> tuple[IndexFile, Provenance]:
    label = label_of(backend, cuda=cuda, tokens=tokens)
    tag = f"cp{python.replace('.', '')}-cp{python.replace('.', '')}-linux_x86_64"
    name = "tensorflow" if backend == "cuda" else "tensorflow_cpu"
    filename = f"{name}-{version}+{label}-{tag}.whl"
    prov = Provenance(name=name, version=f"{version}+{label}", base_version=version,
                      label=label, backend=backend, cuda=cuda, compute_capabilities=tokens,
                      python=python, tags=(tag,), glibc=glibc, glibc_source="image",
                      cpu_features=features, cpu_native=native, recipe_name="r",
                      build_id=build, build_date=build[:8],
                      wheel_check={"ok": check_ok, "summary": "wheel check FAILED: x"
                                   if not check_ok else "passed"})
    return IndexFile(filename, f"/wh/{filename}", name.replace("_", "-"), ()), prov


def _choose(profile: str, *wheels: tuple[IndexFile, Provenance], **kw):
    host = HostProfile.load(HOSTS / f"{profile}.json")
    provs = {f.filename: p for f, p in wheels}
    machine = Machine.of_profile(host, where="the target machine", **kw)
    return choose([f for f, _p in wheels], lambda f: provs[f.filename], machine, KB,
                  wheelhouse="/wh")


def _reasons(choice, filename_part: str) -> str:
    return " | ".join(r for c in choice.candidates if filename_part in c.file.filename
                      for r in c.reasons)


def test_the_real_h200_gets_the_wheel_with_its_sass_and_every_other_is_rejected_with_why():
    sm90 = _wheel("cuda", cuda="12.8.1", tokens=("sm_90",))
    blackwell = _wheel("cuda", cuda="12.8.1", tokens=("compute_120",))
    ampere = _wheel("cuda", cuda="12.5.1", tokens=("sm_80", "compute_80"))
    cpu = _wheel("cpu")
    choice = _choose("h200-driver580-real", blackwell, ampere, cpu, sm90)
    assert choice.backend == "cuda"
    best = choice.best
    assert best is not None and best.file.filename == sm90[0].filename
    assert "GPU 0 (NVIDIA H200), CC 9.0: SASS sm_90" in best.reasons
    assert any("driver 580.159.04 supports CUDA 13.0" in r for r in best.reasons)
    # compute_80's PTX JIT-compiles for 9.0: it serves, ranked after the SASS one
    assert [c.file.filename for c in choice.candidates if c.serves] == \
        [sm90[0].filename, ampere[0].filename]
    assert choice.candidates[1].ptx_only
    assert "PTX only (compute_80)" in " ".join(choice.candidates[1].caveats)
    assert "neither SASS nor PTX for it in compute_120" in _reasons(choice, "compute120")
    assert "built for cpu; the target machine wants cuda" in _reasons(choice, "+cpu")
    text = "\n".join(choice.lines())
    assert "Rejected (2):" in text and sm90[0].filename in choice.summary()


def test_an_rtx_5090_on_a_cuda_12_8_driver():
    """sm_120's SASS serves; a CUDA 12.9 build runs by minor-version compatibility; a
    CUDA 13 build needs a newer driver."""
    ok = _wheel("cuda", cuda="12.8.1", tokens=("compute_120",), build="20260102-000000-bbbbbb")
    newer_minor = _wheel("cuda", cuda="12.9.1", tokens=("sm_120",))
    cuda13 = _wheel("cuda", cuda="13.0.0", tokens=("sm_120",))
    choice = _choose("rtx5090-driver570-py312", newer_minor, cuda13, ok)
    assert choice.best is not None and choice.best.file.filename == ok[0].filename
    minor = next(c for c in choice.candidates if "cu129" in c.file.filename)
    assert minor.serves and "minor-version compatibility" in " ".join(minor.caveats)
    assert "supports CUDA up to 12.8; the wheel's CUDA 13.0 needs a driver for CUDA 13" in \
        _reasons(choice, "cu130")


def test_ptx_from_a_newer_toolkit_needs_its_driver():
    """Only PTX reaches the GPU, and the driver is older than the toolkit that wrote it:
    the driver cannot compile it (compat.driver_for_toolkit)."""
    ptx = _wheel("cuda", cuda="12.9.1", tokens=("compute_90",))
    choice = _choose("rtx5090-driver570-py312", ptx)
    assert choice.best is None
    need = compat.driver_for_toolkit(KB, "12.9.1")
    assert f"PTX from CUDA 12.9 compiles only on driver {need} or newer" in \
        _reasons(choice, "cu129")


def test_an_old_driver_python_glibc_and_cpu_each_reject_with_their_reason():
    assert "driver 470.256.02 supports CUDA up to 11.4" in _reasons(
        _choose("rtx3060-driver470", _wheel("cuda", cuda="12.8.1", tokens=("sm_86",),
                                             python="3.10")), "cu128")
    assert "its Python tag cp312 is not Python 3.11 of the target machine" in _reasons(
        _choose("no-gpu-server", _wheel("cpu")), "cpu")
    assert "it needs glibc 2.27; the target machine has 2.17" in _reasons(
        _choose("centos7-glibc217", _wheel("cpu", python="3.10")), "cpu")
    choice = _choose("celeron-j1900-no-avx", _wheel("cpu", python="3.10", features=("avx2",)))
    assert "compiled for CPUs with avx2; the CPU of the target machine lacks avx2" in \
        _reasons(choice, "cpu")
    native = _choose("no-gpu-server", _wheel("cpu", python="3.11", native=True)).best
    assert native is not None and "-march=native" in " ".join(native.caveats)


def test_a_failed_check_a_version_filter_and_no_wheels():
    failed = _choose("no-gpu-server", _wheel("cpu", python="3.11", check_ok=False))
    assert "its build's check against the recipe failed" in _reasons(failed, "cpu")
    host = HostProfile.load(HOSTS / "no-gpu-server.json")
    machine = Machine.of_profile(host, where="this machine")
    old = _wheel("cpu", python="3.11", version="2.20.0")
    new = _wheel("cpu", python="3.11", version="2.21.0")
    provs = {f.filename: p for f, p in (old, new)}
    picked = choose([old[0], new[0]], lambda f: provs[f.filename], machine, KB,
                    specifier="==2.20.*")
    assert picked.best is not None and picked.best.file.filename == old[0].filename
    assert "its version 2.21.0+cpu is not ==2.20.*" in _reasons(picked, "2.21.0")
    newest = choose([old[0], new[0]], lambda f: provs[f.filename], machine, KB)
    assert newest.best is not None and newest.best.file.filename == new[0].filename
    empty = choose([], lambda f: None, machine, KB, wheelhouse="/wh")
    assert empty.best is None and empty.summary() == "The wheelhouse /wh holds no TensorFlow wheel."


def test_without_provenance_the_label_speaks_and_an_unlabelled_wheel_is_rejected():
    host = HostProfile.load(HOSTS / "h200-driver580-real.json")
    machine = Machine.of_profile(host, where="this machine")
    labelled = IndexFile("tensorflow-2.21.0+cu128.sm90-cp312-cp312-linux_x86_64.whl", "/x",
                         "tensorflow")
    plain = IndexFile("tensorflow-2.21.0-cp312-cp312-manylinux_2_27_x86_64.whl", "/y",
                      "tensorflow")
    choice = choose([plain, labelled], lambda f: None, machine, KB)
    assert choice.best is not None and choice.best.file is labelled
    assert "judged from its version label alone" in " ".join(choice.best.caveats)
    assert "not a wheel tfwizard published" in _reasons(choice, "2.21.0-cp312")


@pytest.mark.parametrize("profile,backend", [("h200-driver580-real", "cuda"),
                                             ("no-gpu-server", "cpu")])
def test_the_backend_follows_the_machine(profile, backend):
    host = HostProfile.load(HOSTS / f"{profile}.json")
    assert Machine.of_profile(host, where="x").backend == backend
