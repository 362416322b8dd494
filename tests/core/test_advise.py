"""advise(): does an official wheel serve the machine, and if not, every reason why (issue 22).

The machines are host profiles made by the real probes from fake inputs
(tests/core/advise_hosts.py -> tests/data/hosts/*.json). Each test asserts the verdict, the
reason codes and the facts compared, with the facts written out here from their sources
(PyPI's wheels, NVIDIA's tables, TF's hermetic lists) so a wrong fact in the knowledge base
fails too.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.core.advise_hosts import HOSTS, MACHINES, detect, stable
from tfwizard.core import i18n
from tfwizard.core.advise import Advice, Intent, advise, estimate_build
from tfwizard.core.host import HostProfile, PythonInterpreter
from tfwizard.core.recipe import Recipe

#: the official 2.18.0 x86_64 GPU wheel's build_info (PyPI, read by tests/tools/official_wheels.py):
#: sm_60,sm_70,sm_80,sm_89,compute_90, where compute_90 is SASS sm_90 and PTX (tf-cuda-rules)
SASS_2_18 = ["sm_60", "sm_70", "sm_80", "sm_89", "sm_90"]
PTX_2_18 = ["compute_90"]


def host(name: str) -> HostProfile:
    return HostProfile.load(HOSTS / f"{name}.json")


def fixes(advice: Advice, code: str) -> dict[str, list]:
    finding = advice.finding(code)
    assert finding is not None, advice.codes()
    out: dict[str, list] = {}
    for remedy in finding.fixes:
        out.setdefault(remedy.kind, []).append(remedy)
    return out


# -- the machines of the issue --------------------------------------------------------------


def test_rtx4090_driver550_python311_is_served_by_the_2_18_wheel(kb):
    advice = advise(kb, host=host("rtx4090-driver550-py311"), release="2.18.0", intent=Intent.GPU)
    assert advice.verdict == "official" and advice.official_serves
    assert advice.codes("error") == [] and advice.codes("warning") == []
    assert advice.requirement == "tensorflow[and-cuda]==2.18.0"
    assert advice.install == ("/usr/bin/python3.11", "-m", "pip", "install",
                              "tensorflow[and-cuda]==2.18.0")
    covered = advice.finding("GPU_COVERED")
    assert covered.facts["cc"] == "8.9" and covered.facts["cubin"] == "sm_89"
    assert covered.facts["sass"] == SASS_2_18 and covered.facts["ptx"] == PTX_2_18
    assert "GPU 0 (NVIDIA GeForce RTX 4090) is CC 8.9; the 2.18.0 wheel carries SASS sm_60, " \
           "sm_70, sm_80, sm_89, sm_90 and PTX compute_90." in covered.evidence
    # CUDA 12.x minor-version compatibility floor 525.60.13; CUDA 12.5 shipped with 555.42.02
    driver = advice.finding("DRIVER_OK").facts
    assert (driver["driver"], driver["needed"], driver["cuda"]) == ("550.54.14", "525.60.13",
                                                                    "12.5.1")
    assert advice.finding("DRIVER_OLDER_THAN_PTXAS").facts["full"] == "555.42.02"
    assert advice.finding("PYTHON_PUBLISHED").facts["python"] == "3.11"
    assert advice.finding("GLIBC_OK").facts == {"glibc": "2.35", "floor": "2.17",
                                                "manylinux": "manylinux2014",
                                                "release": "2.18.0"}
    # the wheel serves: no build (and no build time) is proposed
    assert not advice.build_proposed
    assert advice.summary == (
        "The official `tensorflow[and-cuda]==2.18.0` wheel runs on this machine. Installing it "
        "takes minutes; no source build is needed.")


def test_rtx5090_with_2_18_states_the_ptx_path_its_cost_and_a_build_that_can_target_it(kb):
    advice = advise(kb, host=host("rtx5090-driver570-py312"), release="2.18.0",
                    intent=Intent.GPU)
    assert advice.verdict == "build" and not advice.official_serves
    assert advice.codes("error") == ["GPU_PTX_JIT_FAILS"]
    jit = advice.finding("GPU_PTX_JIT_FAILS")
    facts = jit.facts
    assert (facts["cc"], facts["sass"], facts["ptx"]) == ("12.0", SASS_2_18, PTX_2_18)
    # compute_90 <= 12.0, so the driver may JIT it; it must be at least CUDA 12.5.1's driver
    assert facts["jit_from"] == "compute_90"
    assert (facts["ptx_cuda"], facts["driver_ptx"], facts["driver"]) == ("12.5.1", "555.42.06",
                                                                       "570.133.07")
    assert facts["reported_failing"] and facts["reported_error"] == "CUDA_ERROR_INVALID_PTX"
    # the cost: CUDA's JIT cache, its place and default size (CUDA programming guide)
    assert (facts["cache_path"], facts["cache_default_bytes"]) == ("~/.nv/ComputeCache",
                                                                  256 * 2**20)
    assert "30 minutes or longer" in jit.message and "default 256 MiB" in jit.message
    assert "tf-blackwell-jit-issues" in jit.sources and "cuda-env-vars" in jit.sources
    assert ("PTX compute_90 can be JIT-compiled for CC 12.0 (PTX runs on any GPU of its CC or "
            "higher) by a driver of CUDA 12.5.1 or newer: the driver is 570.133.07, it needs "
            "555.42.06.") in jit.evidence
    # sm_120 needs CUDA 12.8 (cuda.toml); 2.18's hermetic list stops at 12.6.1, 2.20's has 12.8.1
    assert ("sm_120 needs CUDA 12.8 or newer to compile; TensorFlow 2.18.0's hermetic CUDA list "
            "ends at 12.6.1.") in jit.evidence
    (build,) = fixes(advice, "GPU_PTX_JIT_FAILS")["build"]
    # 2.20 has CUDA 12.8.1 but only its image's clang 18 (sm_120 needs clang 21: nvcc);
    # 2.21's hermetic toolchain offers LLVM 21, so TF's own compiler, clang, builds it
    assert build.changes["tensorflow.version"] == "2.21.0"
    assert build.changes["cuda.version"] == "12.8.1"
    assert build.changes["cuda.compute_capabilities"] == ["compute_120"]
    assert build.changes["cuda.compiler"] == "clang"
    assert build.changes["toolchain.clang"] == "21"
    assert build.changes["python.version"] == "3.12"
    assert ("TensorFlow 2.21.0 compiles with its hermetic LLVM, 18 by default; LLVM 21 "
            "(--repo_env=LLVM_VERSION=21) targets sm_120, which needs clang 21.") in jit.evidence
    assert advice.install == ()


def test_ptx_jit_that_is_not_reported_failing_is_a_caveat_with_its_cost(kb):
    """A B200 (CC 10.0): no cubin of major 10 in the wheel; everything JITs compute_90."""
    b200 = _with_gpu(host("h100-driver560"), "NVIDIA B200", "10.0")
    advice = advise(kb, host=b200, release="2.18.0", intent=Intent.GPU)
    assert advice.verdict == "official-with-caveats" and advice.official_serves
    assert advice.codes("warning") == ["GPU_PTX_JIT"] and advice.codes("error") == []
    jit = advice.finding("GPU_PTX_JIT")
    assert (jit.facts["cc"], jit.facts["jit_from"]) == ("10.0", "compute_90")
    assert "reported_failing" not in jit.facts
    kinds = fixes(advice, "GPU_PTX_JIT")
    # sm_100 needs CUDA 12.8 and clang 20: 2.21's list goes to 12.9.1 (13.0 needs driver
    # 580) and its hermetic toolchain offers LLVM 20
    build = kinds["build"][0].changes
    assert (build["tensorflow.version"], build["cuda.version"]) == ("2.21.0", "12.9.1")
    assert build["cuda.compute_capabilities"] == ["compute_100"]
    assert (build["cuda.compiler"], build["toolchain.clang"]) == ("clang", "20")
    assert kinds["env"][0].label.startswith("Set CUDA_CACHE_MAXSIZE=4294967296")
    assert advice.install[-1] == "tensorflow[and-cuda]==2.18.0"
    assert advice.build_proposed and "a source build about" in advice.summary


def test_an_h100_runs_the_sm_90_cubins_and_jits_only_the_generated_kernels(kb):
    """An H100 (CC 9.0): compute_90 carries sm_90 cubins for TF's hand-written kernels; the
    MLIR-generated ones JIT from PTX (tf-wheel-fatbins). The wheel serves: no build."""
    advice = advise(kb, host=host("h100-driver560"), release="2.18.0", intent=Intent.GPU)
    assert advice.verdict == "official" and advice.official_serves
    assert advice.codes("error") == [] and advice.codes("warning") == []
    covered = advice.finding("GPU_COVERED")
    assert covered.facts["cubin"] == "sm_90"
    assert covered.facts["generated_kernels_jit_from"] == "compute_90"
    assert "no cubin" not in covered.message and "generated kernels" in covered.message
    assert "tf-wheel-fatbins" in covered.sources
    assert not advice.build_proposed and "source build about" not in advice.summary


def test_a_cpu_without_avx_needs_a_build_whatever_the_release(kb):
    celeron = host("celeron-j1900-no-avx")
    advice = advise(kb, host=celeron, intent=Intent.CPU)
    assert advice.verdict == "build" and advice.release == kb.latest_release().version
    assert advice.finding("RELEASE_CHOSEN").facts["choice"] == "newest"
    assert advice.codes("error") == ["CPU_FEATURE_MISSING"]
    missing = advice.finding("CPU_FEATURE_MISSING")
    assert missing.facts["baseline"] == "avx"
    assert missing.facts["features"] == ["sse4_1", "sse4_2"]
    assert "The TensorFlow library was compiled to use AVX instructions" in missing.message
    (build,) = fixes(advice, "CPU_FEATURE_MISSING")["build"]
    assert build.changes["build.opt_flags"] == ["-Wno-sign-compare"]
    assert build.changes["backend.kind"] == "cpu"
    for rel in [r.version for r in kb.releases if kb.official_wheels(r.version, "x86_64")]:
        assert advise(kb, host=celeron, release=rel, intent=Intent.CPU).codes("error") == [
            "CPU_FEATURE_MISSING"], rel
    # 4 CPUs and 8 GiB: 3 jobs of 2.5 GiB
    assert advice.estimate.jobs == 3 and advice.estimate.cpus == 4


def test_glibc_older_than_the_floor_says_what_can_run_instead(kb):
    centos = host("centos7-glibc217")
    advice = advise(kb, host=centos, release="2.21.0", intent=Intent.CPU)
    assert advice.verdict == "fixable"
    assert advice.codes("error") == ["GLIBC_TOO_OLD"]
    glibc = advice.finding("GLIBC_TOO_OLD")
    assert (glibc.facts["glibc"], glibc.facts["floor"], glibc.facts["manylinux"]) == (
        "2.17", "2.27", "manylinux_2_27")
    assert "TensorFlow 2.20.0's wheel is manylinux2014 (glibc 2.17 or newer), which this " \
           "machine meets." in glibc.evidence
    kinds = fixes(advice, "GLIBC_TOO_OLD")
    assert set(kinds) == {"container", "release"}
    assert kinds["release"][0].requirement == "tensorflow-cpu==2.20.0"
    assert kb.release("2.21.0").image in kinds["container"][0].label
    # without a release: the newest one whose wheel fits is chosen, and said so
    chosen = advise(kb, host=centos, intent=Intent.CPU)
    assert (chosen.verdict, chosen.release) == ("official", "2.20.0")
    assert chosen.finding("RELEASE_CHOSEN").facts["choice"] == "newest-serving"
    assert chosen.install == ("/opt/python3.10/bin/python3.10", "-m", "pip", "install",
                              "tensorflow-cpu==2.20.0")


def test_python_3_13_with_2_18_was_never_published(kb):
    debian = host("debian13-py313")
    advice = advise(kb, host=debian, release="2.18.0", intent=Intent.CPU)
    assert advice.verdict == "fixable" and advice.python == "3.13"
    assert advice.codes("error") == ["PYTHON_NOT_PUBLISHED"]
    python = advice.finding("PYTHON_NOT_PUBLISHED")
    assert python.facts["published"] == ["3.9", "3.10", "3.11", "3.12"]
    assert python.facts["releases_with_python"] == ["2.20.0", "2.21.0"]
    assert "Python 3.13 wheels are published by TensorFlow 2.20.0, 2.21.0." in python.evidence
    # 2.18's build has hermetic Python lock files for 3.9-3.12 only: no build of 2.18 helps
    assert ("A source build of TensorFlow 2.18.0 does not help: its build takes Python 3.9 to "
            "3.12 only.") in python.evidence
    kinds = fixes(advice, "PYTHON_NOT_PUBLISHED")
    assert set(kinds) == {"python", "release"}
    assert "3.9, 3.10, 3.11, 3.12" in kinds["python"][0].label
    assert kinds["release"][0].requirement == "tensorflow-cpu==2.21.0"
    # a Python no release publishes: the build is the way, with a release whose build takes it
    future = advise(kb, host=debian, release="2.21.0", python="3.14", intent=Intent.CPU)
    assert future.verdict == "fixable"  # another Python is still a way without a build
    assert future.finding("PYTHON_NOT_PUBLISHED").facts["releases_with_python"] == []
    (build,) = fixes(future, "PYTHON_NOT_PUBLISHED")["build"]
    # audit 4 G7: the 2.22.0rc0 pre-release builds (and publishes) Python 3.14
    assert build.changes["tensorflow.version"] == "2.22.0rc0"
    assert build.changes["python.version"] == "3.14"


def test_a_driver_older_than_the_wheels_cuda_gets_both_fixes(kb):
    advice = advise(kb, host=host("rtx3060-driver470"), release="2.18.0", intent=Intent.GPU)
    assert advice.verdict == "fixable"
    assert advice.codes("error") == ["DRIVER_TOO_OLD"]
    driver = advice.finding("DRIVER_TOO_OLD")
    assert (driver.facts["driver"], driver.facts["supported"]) == ("470.256.02", "11.4")
    assert (driver.facts["cuda"], driver.facts["needed"]) == ("12.5.1", "525.60.13")
    assert "kernel version ... does not match DSO version" in driver.message
    kinds = fixes(advice, "DRIVER_TOO_OLD")
    assert "525.60.13 or newer" in kinds["driver"][0].label
    (build,) = kinds["build"]
    # CUDA 11.8 is in 2.18's hermetic list and runs on R470 (CUDA 11 floor 450.80.02)
    assert build.changes["tensorflow.version"] == "2.18.0"
    assert build.changes["cuda.version"] == "11.8"
    assert build.changes["cuda.compute_capabilities"] == ["compute_86"]
    assert build.changes["cuda.cudnn"] == "9.5.0"  # cuDNN 9.0-9.10 have CUDA 11 builds
    assert any("untested by TensorFlow" in e for e in driver.evidence)
    # the GPU itself is covered: sm_80's cubin runs on CC 8.6 (same major, higher minor)
    covered = advice.finding("GPU_COVERED")
    assert covered.facts["cubin"] == "sm_80"
    assert ("A cubin for sm_80 runs on GPUs of major 8 with minor 0 or higher."
            in covered.evidence)


# -- the compute capability rules, exactly ------------------------------------------------------


def _with_gpu(profile: HostProfile, name: str, cc: str) -> HostProfile:
    profile = HostProfile.from_json(profile.to_json())
    profile.nvidia.gpus[0].name, profile.nvidia.gpus[0].compute_capability = name, cc
    return profile


@pytest.mark.parametrize(("cc", "code", "detail"), [
    ("7.5", "GPU_COVERED", "sm_70"),  # Turing runs Volta's cubin: same major, higher minor
    ("8.0", "GPU_COVERED", "sm_80"),
    ("8.9", "GPU_COVERED", "sm_89"),  # the exact cubin wins over sm_80
    ("9.0", "GPU_COVERED", "sm_90"),  # compute_90 is a cubin too (tf-cuda-rules)
    ("10.0", "GPU_PTX_JIT", "compute_90"),  # PTX runs on any higher CC, across majors
    ("5.2", "GPU_NOT_COVERED", ["compute_52"]),  # below sm_60 and below compute_90
    # Orin is Tegra: desktop 8.x cubins are not for it, and compute_90 is above 8.7
    ("8.7", "GPU_NOT_COVERED", ["compute_87"]),
])
def test_cubins_run_within_a_major_and_ptx_upwards(kb, cc, code, detail):
    # driver 570: new enough to JIT 2.18's PTX (CUDA 12.5.1: 555.42.06)
    machine = _with_gpu(host("rtx5090-driver570-py312"), "a GPU", cc)
    advice = advise(kb, host=machine, release="2.18.0", intent=Intent.GPU)
    finding = advice.finding(code)
    assert finding is not None, advice.codes()
    if code == "GPU_COVERED":
        assert finding.facts["cubin"] == detail
    elif code == "GPU_PTX_JIT":
        assert finding.facts["jit_from"] == detail
    else:
        assert finding.severity == "error"
        (build,) = fixes(advice, code)["build"]
        assert build.changes["cuda.compute_capabilities"] == detail


def test_a_gpu_an_older_wheel_covers_gets_that_release(kb):
    """CC 5.2 (Maxwell): 2.16.1 is the newest wheel with sm_50 SASS (2.17 dropped it)."""
    machine = _with_gpu(host("rtx5090-driver570-py312"), "GeForce GTX 980", "5.2")
    advice = advise(kb, host=machine, release="2.18.0", intent=Intent.GPU)
    assert advice.verdict == "fixable"
    assert fixes(advice, "GPU_NOT_COVERED")["release"][0].requirement == \
        "tensorflow[and-cuda]==2.16.1"
    chosen = advise(kb, host=machine, intent=Intent.GPU)
    assert (chosen.release, chosen.verdict) == ("2.16.1", "official")
    assert chosen.finding("GPU_COVERED").facts["cubin"] == "sm_50"


def test_kepler_is_served_by_an_older_release_or_a_cuda_11_8_build(kb):
    k80 = _with_gpu(host("rtx3060-driver470"), "Tesla K80", "3.7")
    advice = advise(kb, host=k80, release="2.18.0", intent=Intent.GPU)
    kinds = fixes(advice, "GPU_NOT_COVERED")
    # sm_37 compiles up to CUDA 11.8 only (cuda.toml); 2.18's list has 11.8
    assert kinds["build"][0].changes["cuda.version"] == "11.8"
    # 2.14 is the newest wheel with sm_35 SASS (a cubin for 3.5 runs on 3.7), CUDA 11.8
    assert kinds["release"][0].requirement == "tensorflow[and-cuda]==2.14.0"


def test_a_ptx_jit_needs_a_driver_as_new_as_the_toolkit_that_wrote_it(kb):
    """CC 9.0 on driver 550: CUDA 12 runs (>= 525.60.13), but 12.5.1's PTX needs 555.42.06."""
    machine = _with_gpu(host("rtx4090-driver550-py311"), "NVIDIA H100", "9.0")
    advice = advise(kb, host=machine, release="2.18.0", intent=Intent.GPU)
    assert advice.codes("error") == ["GPU_PTX_DRIVER"]
    finding = advice.finding("GPU_PTX_DRIVER")
    assert (finding.facts["driver"], finding.facts["driver_ptx"]) == ("550.54.14", "555.42.06")
    # the generated kernels JIT 12.5.1's PTX; 2.16/2.17 (CUDA 12.3, driver 545.23.08) serve
    assert set(fixes(advice, "GPU_PTX_DRIVER")) == {"driver", "build", "release"}
    assert advice.verdict == "fixable"


# -- intent ---------------------------------------------------------------------------------------


def test_own_changes_need_a_build_even_where_the_wheel_serves(kb):
    advice = advise(kb, host=host("rtx4090-driver550-py311"), release="2.18.0",
                    intent=Intent.CHANGES)
    assert advice.verdict == "build" and advice.machine_verdict == "official"
    assert advice.codes("error") == ["LOCAL_CHANGES"]
    assert advice.backend == "cuda"
    assert advice.summary.endswith("Otherwise the official `tensorflow[and-cuda]==2.18.0` wheel "
                                   "would serve this machine.")


def test_a_recipe_with_custom_options_or_another_ref_needs_a_build(kb):
    recipe = Recipe()
    recipe.tensorflow.version = "2.20.0"
    recipe.tensorflow.ref = "my-fix"
    recipe.build.opt_flags = ["-O3", "-march=native"]
    recipe.build.xla = False
    advice = advise(kb, host=host("centos7-glibc217"), intent=Intent.CPU, recipe=recipe)
    assert advice.release == "2.20.0" and advice.machine_verdict == "official"
    assert advice.verdict == "build"
    assert sorted(advice.codes("error")) == ["CUSTOM_OPTIONS", "LOCAL_CHANGES"]
    assert advice.finding("LOCAL_CHANGES").facts["source"] == "my-fix"
    assert advice.finding("CUSTOM_OPTIONS").facts["options"] == {
        "build.opt_flags": ["-O3", "-march=native"], "build.xla": False}
    # the release's own tag is not a change
    recipe = Recipe()
    recipe.tensorflow.ref = kb.release("2.20.0").git_tag
    plain = advise(kb, host=host("centos7-glibc217"), release="2.20.0", intent=Intent.CPU,
                   recipe=recipe)
    assert plain.verdict == "official"


def test_a_wheel_for_another_machine_is_judged_on_that_machine(kb):
    build_host = host("no-gpu-server")
    unknown = advise(kb, host=build_host, intent=Intent.OTHER_MACHINE, backend="cuda",
                     release="2.20.0")
    assert unknown.verdict == "unknown" and unknown.codes("warning") == ["NO_TARGET_PROFILE"]
    needs = unknown.finding("WHEEL_NEEDS").facts
    assert (needs["glibc_floor"], needs["driver_min"], needs["sass"]) == ("2.17", "525.60.13",
                                                                         SASS_2_18)
    target = host("rtx4090-driver550-py311")
    known = advise(kb, host=build_host, target=target, intent=Intent.OTHER_MACHINE,
                   release="2.20.0")
    assert known.on_target and known.backend == "cuda" and known.verdict == "official"
    assert "the target machine" in known.summary
    # the build would run here: the estimate is this host's (64 CPUs), not the target's
    assert known.estimate.cpus == 64


def test_rocm_and_other_systems_are_not_judged(kb):
    assert advise(kb, host=host("rocm-mi210"), intent=Intent.GPU).verdict == "unknown"
    windows = HostProfile.from_json(host("no-gpu-server").to_json())
    windows.os.system = "windows"
    advice = advise(kb, host=windows, intent=Intent.CPU)
    assert (advice.verdict, advice.codes()) == ("unknown", ["OS_NOT_LINUX"])


def test_aarch64_has_no_gpu_wheel_but_a_cpu_one(kb):
    arm = host("aarch64-server")
    cpu = advise(kb, host=arm, release="2.18.0", intent=Intent.CPU)
    assert cpu.verdict == "official" and cpu.requirement == "tensorflow==2.18.0"
    assert cpu.finding("CPU_BASELINE_MET").facts["baseline"] == "armv8-a"
    gpu = advise(kb, host=arm, release="2.18.0", intent=Intent.GPU, backend="cuda")
    assert gpu.verdict == "build" and "NO_GPU_WHEEL_FOR_ARCH" in gpu.codes("error")


# -- profiles: what `tfwizard detect --json` writes, saved and loaded --------------------------


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_detected_profiles_round_trip_and_give_the_same_verdict(kb, tmp_path, name):
    detected = stable(detect(name, tmp_path))
    committed = host(name)
    assert detected == committed, f"regenerate with `python -m tests.core.advise_hosts` ({name})"
    saved = tmp_path / "target.json"
    saved.write_text(detected.to_json(), encoding="utf-8")
    loaded = HostProfile.load(saved)
    intent = Intent.GPU if loaded.nvidia.gpus else Intent.CPU
    for release in ("2.18.0", None):
        first = advise(kb, host=committed, release=release, intent=intent)
        again = advise(kb, host=loaded, release=release, intent=intent)
        assert first.to_dict() == again.to_dict()
        # and as a target, judged the same (only the machine's name in the texts differs)
        as_target = advise(kb, host=host("no-gpu-server"), target=loaded, release=release,
                           intent=intent)
        assert (as_target.verdict, as_target.codes()) == (first.verdict, first.codes())
        json.dumps(first.to_dict())


def test_every_fake_is_listed_in_the_hosts_readme():
    readme = (HOSTS / "README.md").read_text(encoding="utf-8")
    for name in MACHINES:
        assert f"`{name}.json`" in readme, name


# -- the estimate, the knowledge behind it, the language ----------------------------------------


def test_the_build_estimate_follows_cpus_ram_and_backend(kb):
    small, big = host("small-laptop"), host("no-gpu-server")
    assert estimate_build(kb, small, "cpu").hours > estimate_build(kb, big, "cpu").hours
    assert estimate_build(kb, small, "cuda").hours > estimate_build(kb, small, "cpu").hours
    est = estimate_build(kb, small, "cpu")  # 4 CPUs, 8 GiB: RAM allows 3 jobs
    assert est.jobs == 3 and est.low < est.hours < est.high
    assert "UNVERIFIED" in est.unverified.upper() or "not a measurement" in est.unverified
    assert est.sources and all(s in kb.sources for s in est.sources)


def test_advise_knowledge_is_complete(kb):
    data = kb.raw["advise"]
    assert data["jit_cache"]["default_bytes"] == 256 * 2**20
    assert data["jit_cache"]["max_bytes"] == 4 * 2**30
    for entry in data["jit_failure"]:
        SpecifierSet(entry["releases"])
        assert entry["ccs"] and entry["unverified"]
    assert {"cpu_thread_hours", "gpu_thread_hours", "overhead_hours"} <= set(data["build_time"])


def test_texts_are_translated(kb):
    machine = host("rtx5090-driver570-py312")
    try:
        i18n.set_language("pseudo")
        advice = advise(kb, host=machine, release="2.18.0", intent=Intent.GPU)
        texts = [advice.summary] + [f.message for f in advice.findings] + [
            e for f in advice.findings for e in f.evidence] + [
            r.label for f in advice.findings for r in f.fixes]
        assert all(t.startswith("⟦") and t.endswith("⟧") for t in texts), [
            t for t in texts if not t.startswith("⟦")]
        i18n.set_language("zh_CN")
        advice = advise(kb, host=machine, release="2.18.0", intent=Intent.GPU)
        assert advice.summary.startswith("需要从源码构建")
        assert "本机" in advice.summary
    finally:
        i18n.set_language("en")


def test_findings_are_ordered_and_serialisable(kb):
    advice = advise(kb, host=host("rtx3060-driver470"), intent=Intent.GPU)
    order = {"error": 0, "warning": 1, "info": 2}
    severities = [order[f.severity] for f in advice.findings]
    assert severities == sorted(severities)
    data = json.loads(json.dumps(advice.to_dict()))
    assert data["verdict"] == advice.verdict and data["intent"] == "gpu"
    assert dataclasses.asdict(advice.estimate)["jobs"] == advice.estimate.jobs


def test_profile_files_are_named_as_fakes():
    for name in MACHINES:
        data = json.loads(Path(HOSTS / f"{name}.json").read_text(encoding="utf-8"))
        for gpu in data["nvidia"]["gpus"]:
            assert "fake" in gpu["uuid"], name


def test_an_unknown_release_or_backend_is_a_usage_error(kb):
    from tfwizard.core.errors import UsageError

    with pytest.raises(UsageError, match="2.99.0"):
        advise(kb, host=host("centos7-glibc217"), release="2.99.0", intent=Intent.CPU)
    with pytest.raises(UsageError, match="metal"):
        advise(kb, host=host("centos7-glibc217"), backend="metal", intent=Intent.GPU)
    series = advise(kb, host=host("centos7-glibc217"), release="2.20", intent=Intent.CPU)
    assert series.release == "2.20.0"


def test_a_gpu_intent_without_a_gpu(kb):
    server = host("no-gpu-server")
    here = advise(kb, host=server, release="2.20.0", intent=Intent.GPU)
    assert (here.verdict, here.codes("warning")) == ("unknown", ["NO_GPU_ON_HOST"])
    assert {r.kind for r in here.finding("NO_GPU_ON_HOST").fixes} == {"profile", "cpu-wheel"}
    there = advise(kb, host=host("rtx4090-driver550-py311"), target=server, release="2.20.0",
                   intent=Intent.GPU)
    assert (there.verdict, there.codes("error")) == ("unsupported", ["NO_NVIDIA_GPU"])
    assert there.finding("NO_NVIDIA_GPU").fixes[0].requirement == "tensorflow-cpu==2.20.0"


def test_another_interpreter_on_the_machine_is_offered(kb):
    debian = host("debian13-py313")
    debian.pythons.append(PythonInterpreter(path="/opt/py312/bin/python3.12", version="3.12.9"))
    advice = advise(kb, host=debian, release="2.18.0", intent=Intent.CPU)
    (python,) = fixes(advice, "PYTHON_NOT_PUBLISHED")["python"]
    assert python.label == "Use Python 3.12, which this machine has (/opt/py312/bin/python3.12)"
    chosen = advise(kb, host=debian, release="2.18.0", python="3.12", intent=Intent.CPU)
    assert chosen.verdict == "official"
    assert chosen.install[0] == "/opt/py312/bin/python3.12"
