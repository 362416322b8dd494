"""Each rule family: a case that fires and one that does not; every tested config is clean."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tfwizard.core.host import HostProfile, NvidiaGpu, NvidiaInfo
from tfwizard.core.recipe import Recipe, load_recipe
from tfwizard.core.rules import apply_fix, evaluate

ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")


def host(name: str) -> HostProfile:
    return HostProfile.load(HOSTS / f"{name}.json")


def codes(findings, severity=None):
    return {f.code for f in findings if severity is None or f.severity == severity}


def check(recipe: Recipe, build="no-gpu-server", target=None):
    return evaluate(recipe, host(build) if build else None, host(target) if target else None)


def gpu_target(ccs: list[str], driver="560.35.03", cuda="12.6") -> HostProfile:
    base = host("no-gpu-server")
    gpus = [NvidiaGpu(index=i, name=f"GPU{i}", compute_capability=c) for i, c in enumerate(ccs)]
    return dataclasses.replace(base, nvidia=NvidiaInfo(status="ok", source="nvml",
                                                       driver_version=driver,
                                                       cuda_driver_version=cuda, gpus=gpus))


def test_laptop_against_ada_550_is_clean_and_explains_cc():
    findings = check(LAPTOP, target="ada-8.9-driver550")
    assert codes(findings, "error") == set()
    explain = [f for f in findings if f.code == "CC_COVERS_GPU"]
    assert explain and "8.6" in explain[0].message and "8.9" in explain[0].message


def test_laptop_against_ada_520_reports_driver_with_fix():
    findings = check(LAPTOP, target="ada-8.9-driver520")
    err = [f for f in findings if f.code == "DRIVER_TOO_OLD"]
    assert err and err[0].severity == "error" and "525.60.13" in err[0].message
    assert err[0].fix is not None
    fixed = apply_fix(LAPTOP, err[0])
    assert "DRIVER_TOO_OLD" not in codes(evaluate(fixed, host("no-gpu-server"),
                                                  host("ada-8.9-driver520")))


def test_errors_come_first():
    recipe = LAPTOP.with_changes({"python.version": "3.13", "cuda.version": "12.9.0"})
    findings = check(recipe, target="ada-8.9-driver550")
    severities = [f.severity for f in findings]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    assert {"PYTHON_RANGE", "CUDA_NOT_SUPPORTED"} <= codes(findings, "error")


def test_python_range():
    assert "PYTHON_RANGE" in codes(check(LAPTOP.with_changes({"python.version": "3.13"})))
    assert "PYTHON_RANGE" not in codes(check(LAPTOP))
    f = next(f for f in check(LAPTOP.with_changes({"python.version": "3.13"}))
             if f.code == "PYTHON_RANGE")
    assert f.fix.changes == {"python.version": "3.12"}


def test_numpy_range_note_mentions_numpy2_for_old_releases():
    old = LAPTOP.with_changes({"tensorflow.version": "2.16.1", "cuda.version": "12.3",
                               "cuda.cudnn": "8.9", "toolchain.clang": "17"})
    note = next(f for f in check(old) if f.code == "NUMPY_RANGE")
    assert "NumPy 2 is not supported" in note.message
    note = next(f for f in check(LAPTOP) if f.code == "NUMPY_RANGE")
    assert "<2.1.0" in note.message and "NumPy 2 is not supported" not in note.message


def test_cuda_not_in_list_suggests_closest():
    f = next(f for f in check(LAPTOP.with_changes({"cuda.version": "12.5.2"}))
             if f.code == "CUDA_NOT_SUPPORTED")
    assert f.severity == "error" and f.fix.changes == {"cuda.version": "12.5.1"}
    assert "CUDA_NOT_SUPPORTED" not in codes(check(LAPTOP))


def test_cudnn_list_and_major():
    assert "CUDNN_NOT_SUPPORTED" in codes(check(LAPTOP.with_changes({"cuda.cudnn": "9.9.9"})))
    assert "CUDNN_CUDA_MAJOR" in codes(check(LAPTOP.with_changes({"cuda.version": "11.8",
                                                                   "cuda.cudnn": "9.22.0"})))
    assert "CUDNN_CUDA_MAJOR" not in codes(check(LAPTOP))


def test_and_cuda_major_mismatch():
    assert "AND_CUDA_MAJOR" in codes(check(LAPTOP.with_changes({"cuda.version": "11.8"})))
    assert "AND_CUDA_MAJOR" not in codes(check(LAPTOP))


def test_ptx_driver_rule():
    # only PTX for 9.0 and a 9.0-less list: a 10.0 GPU must JIT; driver older than toolkit
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_80", "compute_90"]})
    old = gpu_target(["10.0"], driver="550.54.14", cuda="12.4")
    found = evaluate(recipe, host("no-gpu-server"), old)
    assert "PTX_DRIVER" in codes(found, "error") and "CC_PTX_JIT" in codes(found)
    new = gpu_target(["10.0"], driver="560.35.03")
    assert "PTX_DRIVER" not in codes(evaluate(recipe, host("no-gpu-server"), new))


def test_cc_coverage():
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_86"]})
    found = evaluate(recipe, host("no-gpu-server"), gpu_target(["9.0"]))
    err = next(f for f in found if f.code == "CC_NOT_COVERED")
    assert err.fix.changes == {"cuda.compute_capabilities": ["sm_86", "sm_90"]}
    fixed = apply_fix(recipe, err)
    assert "CC_NOT_COVERED" not in codes(evaluate(fixed, host("no-gpu-server"), gpu_target(["9.0"])))
    # compute_80 is a cubin and PTX (tf-cuda-rules): the 8.9 GPU runs its cubin...
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["compute_80"]})
    found = evaluate(recipe, host("no-gpu-server"), gpu_target(["8.9"]))
    assert "CC_PTX_JIT" not in codes(found)
    assert any(f.code == "CC_COVERS_GPU" and "sm_80 cubin" in f.message for f in found)
    # ...a 9.0 GPU (another major) only its PTX: JIT warning
    found = evaluate(recipe, host("no-gpu-server"), gpu_target(["9.0"]))
    jit = next(f for f in found if f.code == "CC_PTX_JIT")
    assert "9.0 GPU would JIT from PTX for ~30 minutes or fail" in jit.message


def test_cc_tegra_needs_its_own_cubin():
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_86"]})
    found = evaluate(recipe, host("no-gpu-server"), gpu_target(["8.7"]))
    assert "CC_NOT_COVERED" in codes(found)


def test_cc_limits_by_cuda_and_clang():
    sm35 = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_35", "sm_86"]})
    assert "CC_DROPPED_BY_CUDA" in codes(check(sm35), "error")
    b = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_120"]})
    found = codes(check(b), "error")
    assert {"CC_TOO_NEW_FOR_CUDA", "CC_TOO_NEW_FOR_CLANG"} <= found
    ok = LAPTOP.with_changes({"tensorflow.version": "master", "cuda.version": "12.8.1",
                              "cuda.cudnn": "9.8.0", "toolchain.clang": "21",
                              "cuda.compute_capabilities": ["sm_120", "compute_120"],
                              "python.version": "3.12"})
    assert not {"CC_TOO_NEW_FOR_CUDA", "CC_TOO_NEW_FOR_CLANG"} & codes(check(ok))
    c13 = ok.with_changes({"cuda.version": "13.0.0", "cuda.cudnn": "9.12.0",
                           "cuda.compute_capabilities": ["sm_70", "sm_120"]})
    assert "CC_DROPPED_BY_CUDA" in codes(check(c13), "error")


def test_cc_suffixes():
    a = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_90a"]})
    found = check(a)
    assert "CC_SUFFIX_A" in codes(found)
    # 'a' target runs only on exactly 9.0
    assert "CC_NOT_COVERED" in codes(evaluate(a, host("no-gpu-server"), gpu_target(["10.0"])))
    assert "CC_NOT_COVERED" not in codes(evaluate(a, host("no-gpu-server"), gpu_target(["9.0"])))
    # TF's CUDA rules take only an 'a' suffix (audit 4 row 21.19; test_audit4_cuda.py)
    f = LAPTOP.with_changes({"cuda.compute_capabilities": ["sm_100f"]})
    assert "CC_SUFFIX_REJECTED" in codes(check(f), "error")
    old_cuda = LAPTOP.with_changes({"cuda.version": "11.8", "cuda.compute_capabilities": ["sm_90a"]})
    assert "CC_SUFFIX_CUDA" in codes(check(old_cuda), "error")


def test_tf_default_and_configure_rejected_ccs():
    default = LAPTOP.with_changes({"cuda.compute_capabilities": ["3.5", "7.0"]})
    assert "CC_TF_DEFAULT" in codes(check(default), "error")
    bad = LAPTOP.with_changes({"cuda.compute_capabilities": ["2.0"]})
    assert "CC_CONFIGURE_REJECTS" in codes(check(bad), "error")
    empty = LAPTOP.with_changes({"cuda.compute_capabilities": []})
    f = next(f for f in check(empty) if f.code == "CC_EMPTY")
    assert f.fix.changes["cuda.compute_capabilities"] == ["sm_60", "sm_70", "sm_80", "sm_89",
                                                          "compute_90"]
    assert not {"CC_TF_DEFAULT", "CC_CONFIGURE_REJECTS", "CC_EMPTY"} & codes(check(LAPTOP))


def test_auto_needs_target_gpus():
    auto = LAPTOP.with_changes({"cuda.compute_capabilities": ["auto"]})
    assert "CC_AUTO_NO_GPU" in codes(check(auto), "error")
    found = evaluate(auto, host("no-gpu-server"), host("ada-8.9-driver550"))
    assert "CC_AUTO_NO_GPU" not in codes(found)
    assert "CC_NOT_COVERED" not in codes(found)


def test_clang_versus_release():
    assert "CLANG_MATCHES" in codes(check(LAPTOP))
    assert "CLANG_OFFSETOF" in codes(check(LAPTOP))
    c19 = LAPTOP.with_changes({"toolchain.clang": "19"})
    assert {"CLANG_NOT_TESTED", "CLANG_C23"} <= codes(check(c19))
    c17 = LAPTOP.with_changes({"toolchain.clang": "17"})
    assert "CLANG_OFFSETOF" not in codes(check(c17))
    gcc = Recipe().with_changes({"tensorflow.version": "2.18.0", "toolchain.gcc": "13"})
    assert "GCC_NOT_TESTED" in codes(check(gcc))


def test_windows_wsl_and_exclusive_backends():
    win = dataclasses.replace(host("no-gpu-server"),
                              os=dataclasses.replace(host("no-gpu-server").os, system="windows"))
    assert "WINDOWS_CUDA" in codes(evaluate(LAPTOP, win, None), "error")
    assert "WINDOWS_CUDA" not in codes(check(LAPTOP))
    wsl = evaluate(LAPTOP, host("no-gpu-server"), host("wsl2-rtx4090"))
    assert "WSL2" in codes(wsl)
    rocm = LAPTOP.with_changes({"backend.kind": "rocm", "rocm.version": "6.2.0",
                                "rocm.amdgpu_targets": ["gfx90a"]})
    assert "ROCM_CUDA_EXCLUSIVE" in codes(check(rocm))


def test_rocm_targets():
    recipe = load_recipe(ROOT / "recipes" / "tf216-rocm-gfx90a.toml")
    assert codes(evaluate(recipe, host("no-gpu-server"), host("rocm-mi210")), "error") == set()
    other = recipe.with_changes({"rocm.amdgpu_targets": ["gfx1100"]})
    found = evaluate(other, host("no-gpu-server"), host("rocm-mi210"))
    assert "ROCM_GPU_NOT_COVERED" in codes(found, "error")


def test_ram_disk_glibc_and_arch():
    small = evaluate(LAPTOP.with_changes({"build.jobs": 8}), host("small-laptop"), None)
    f = next(f for f in small if f.code == "RAM_PER_JOB")
    assert f.fix.changes == {"build.jobs": 3}
    assert "DISK_LOW" in codes(small)
    assert not {"RAM_PER_JOB", "DISK_LOW"} & codes(check(LAPTOP))
    old = dataclasses.replace(host("no-gpu-server"),
                              os=dataclasses.replace(host("no-gpu-server").os, glibc="2.17"))
    cpu221 = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
    assert "GLIBC_TOO_OLD" in codes(evaluate(cpu221, host("no-gpu-server"), old), "error")
    assert "GLIBC_TOO_OLD" not in codes(evaluate(LAPTOP, host("no-gpu-server"), old))
    arm = evaluate(cpu221, host("no-gpu-server"), host("aarch64-server"))
    assert "ARCH_MISMATCH" in codes(arm, "error")
    arm_native = evaluate(load_recipe(ROOT / "recipes" / "tf221-aarch64-cpu.toml"),
                          host("aarch64-server"), None)
    assert codes(arm_native, "error") == set() and "AARCH64_SVE" in codes(arm_native)


def test_docker_unavailable():
    base = host("no-gpu-server")
    down = dataclasses.replace(base, docker=dataclasses.replace(base.docker, status="not_running",
                                                                message="start it"))
    assert "DOCKER_UNAVAILABLE" in codes(evaluate(LAPTOP, down, None), "error")
    assert "DOCKER_UNAVAILABLE" not in codes(check(LAPTOP))


def _tested_recipes():
    from tfwizard.core.knowledge import load_knowledge

    kb = load_knowledge()
    for rel in kb.releases:
        for py in rel.pythons:
            for kind in ("cpu", "cuda"):
                changes = {"tensorflow.version": rel.version, "python.version": py,
                           "backend.kind": kind}
                if rel.tested_clang:
                    changes["toolchain.clang"] = str(rel.tested_clang)
                else:
                    changes["toolchain.gcc"] = str(rel.tested_gcc)
                    changes["toolchain.clang"] = ""
                if kind == "cuda":
                    changes["cuda.version"] = rel.tested_cuda_version
                    changes["cuda.cudnn"] = rel.hermetic_cudnn_default or rel.tested_cudnn
                    changes["cuda.compute_capabilities"] = list(rel.wheel_compute_capabilities)
                    changes["cuda.compiler"] = "clang" if rel.tested_clang else "nvcc"
                yield f"{rel.version}-py{py}-{kind}", Recipe().with_changes(changes)


@pytest.mark.parametrize(("label", "recipe"), list(_tested_recipes()))
def test_every_tested_configuration_has_no_error(label, recipe):
    found = evaluate(recipe, host("no-gpu-server"), None)
    assert [f for f in found if f.severity == "error"] == [], label


def test_findings_serialise_with_sources(kb):
    found = check(LAPTOP, target="ada-8.9-driver520")
    data = [f.to_dict(kb) for f in found]
    json.dumps(data)
    for f in found:
        assert f.message and f.sources, f.code
        for s in f.sources:
            assert s in kb.sources, (f.code, s)


def test_remote_and_network_rules():
    base = LAPTOP.with_changes({"remote.executor": "grpcs://remote.buildbuddy.io",
                                "remote.headers": ["x-buildbuddy-api-key=abc123"]})
    found = check(base)
    assert {"REMOTE_EXEC_TOOLCHAIN", "SECRET_IN_RECIPE"} <= codes(found)
    secret = next(f for f in found if f.code == "SECRET_IN_RECIPE")
    fixed = apply_fix(base, secret)
    assert fixed.remote.headers == ["x-buildbuddy-api-key=${X_BUILDBUDDY_API_KEY}"]
    assert "SECRET_IN_RECIPE" not in codes(check(fixed))
    offline = LAPTOP.with_changes({"build.network": "none",
                                   "network.https_proxy": "http://u:p@proxy:3128"})
    found = codes(check(offline))
    assert "NETWORK_NONE" in found and "SECRET_IN_RECIPE" in found
    local = LAPTOP.with_changes({"build.network": "none", "tensorflow.source_dir": "/src/tf"})
    assert "OFFLINE_BUILD" in codes(check(local)) and "NETWORK_NONE" not in codes(check(local))
    assert not {"REMOTE_EXEC_TOOLCHAIN", "SECRET_IN_RECIPE", "NETWORK_NONE"} & codes(check(LAPTOP))


def test_portable_preset_follows_what_the_toolchain_can_build():
    from tfwizard.core.rules import portable_compute_capabilities

    assert portable_compute_capabilities(LAPTOP) == ["sm_50", "sm_60", "sm_70", "sm_80",
                                                     "compute_90"]
    cuda13 = LAPTOP.with_changes({"tensorflow.version": "master", "cuda.version": "13.0.0",
                                  "cuda.cudnn": "9.12.0", "toolchain.clang": "22",
                                  "python.version": "3.12"})
    tokens = portable_compute_capabilities(cuda13)
    assert tokens[0] == "sm_75" and "sm_100" in tokens and tokens[-1] == "compute_120"
    assert codes(check(cuda13.with_changes({"cuda.compute_capabilities": tokens})),
                 "error") == set()


def test_a_gpu_wheel_for_the_other_vendors_gpus_is_an_error():
    """ROCm for a target with only NVIDIA GPUs (and CUDA for one with only AMD GPUs) can
    use none of them: an error on backend.kind with the other backend as its fix."""
    rocm = load_recipe(ROOT / "recipes" / "tf216-rocm-gfx90a.toml")
    nvidia_target = HostProfile.load(HOSTS / "rtx4090-driver550-py311.json")
    findings = evaluate(rocm, HostProfile.load(HOSTS / "no-gpu-server.json"), nvidia_target)
    found = [f for f in findings if f.code == "ROCM_FOR_NVIDIA_TARGET"]
    assert found and found[0].severity == "error" and found[0].key == "backend.kind"
    assert found[0].fix is not None and found[0].fix.changes == {"backend.kind": "cuda"}
    # a target with an AMD GPU, or none known, is left to the ROCm rules
    assert "ROCM_FOR_NVIDIA_TARGET" not in _codes(evaluate(
        rocm, HostProfile.load(HOSTS / "no-gpu-server.json"),
        HostProfile.load(HOSTS / "rocm-mi210.json")))
    assert "ROCM_FOR_NVIDIA_TARGET" not in _codes(evaluate(
        rocm, HostProfile.load(HOSTS / "no-gpu-server.json"), None))


def _codes(findings) -> set[str]:
    return {f.code for f in findings}
