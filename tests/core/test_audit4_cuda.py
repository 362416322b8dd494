"""Audit 4's compute-capability, toolchain and GPU rows (shared/reference/tf-facts-audit-4.md),
one test per row, each naming the row and the source TensorFlow's fact was read from; and the
Blackwell path it asks for (a 2.21 sm_120 recipe plans a hermetic LLVM that targets sm_120, or
gets that as a one-click fix).

The facts are written out here from the sources, not read back from the knowledge base, so a
wrong fact in resources/knowledge fails here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tfwizard.core import cc as ccmod
from tfwizard.core.advise import Intent, advise
from tfwizard.core.building.plan.configure import configure_env
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.compat import driver_for_toolkit
from tfwizard.core.host import HostProfile, PythonInterpreter
from tfwizard.core.recipe import Recipe, load_recipe, schema_reference
from tfwizard.core.rules import apply_fix, evaluate

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "tests" / "data" / "hosts"
BLACKWELL = ROOT / "recipes" / "tf221-cuda-rtx50-blackwell.toml"
#: TF 2.21's hermetic C++ toolchain: tensorflow/java's copy of TF's .bazelrc @82373b893
#: (`common --repo_env USE_HERMETIC_CC_TOOLCHAIN=1`), rules_ml_toolchain @d8cb9c2c
#: cc/deps/cc_toolchain_deps.bzl (llvm_linux_x86_64 default_version "18", versions 18-21)
LLVM_CHOICES = ("18", "19", "20", "21")


def host(name: str) -> HostProfile:
    return HostProfile.load(HOSTS / f"{name}.json")


def gpu(profile: HostProfile, name: str, cc: str) -> HostProfile:
    profile = HostProfile.from_json(profile.to_json())
    profile.nvidia.gpus[0].name, profile.nvidia.gpus[0].compute_capability = name, cc
    return profile


def codes(findings, severity=None) -> set[str]:
    return {f.code for f in findings if severity is None or f.severity == severity}


def finding(findings, code):
    return next(f for f in findings if f.code == code)


def cuda_recipe(**changes) -> Recipe:
    base = {"tensorflow.version": "2.21.0", "python.version": "3.12", "backend.kind": "cuda",
            "cuda.version": "12.8.1", "cuda.cudnn": "9.10.2", "cuda.compiler": "clang",
            "cuda.compute_capabilities": ["compute_120"], "toolchain.clang": "18",
            "install.extras": ["and-cuda"]}
    return Recipe(name="audit4").with_changes({**base, **changes})


def check(recipe: Recipe, target: HostProfile | None = None):
    return evaluate(recipe, host("no-gpu-server"), target)


# -- the official wheels' SASS and PTX -------------------------------------------------------


def test_19_10_the_2_19_wheel_sass_is_inferred_and_says_so(kb):
    """Row 19.10 (UNVERIFIED: 2.19's fatbins were not read): build_info.py of the 2.19.0
    wheel lists sm_60,sm_70,sm_80,sm_89,compute_90 (pypi-wheel-files); by TF's CUDA rules
    (rules_ml_toolchain @d8cb9c2c cuda_configure.bzl) compute_90 is SASS sm_90 and PTX. The
    knowledge base infers sm_90 and marks it: the rule is cited, not the fatbins."""
    wheel = kb.official_wheel("2.19.0", "x86_64")
    assert wheel.sass == ("sm_60", "sm_70", "sm_80", "sm_89", "sm_90")
    assert (wheel.ptx, wheel.sass_partial) == (("compute_90",), ("sm_90",))
    raw = next(w for w in kb.raw["wheels"]["wheel"]
               if (w["release"], w["arch"], w["package"]) == ("2.19.0", "x86_64", "tensorflow"))
    assert raw["fact_sources"]["sass"] == "pypi-wheel-files tf-cuda-rules"
    assert any(u.startswith("sass:") and "fatbins were not read" in u for u in raw["unverified"])
    assert any(u.startswith("sass_partial:") and "were not read" in u for u in raw["unverified"])


def test_20_11_the_2_20_wheel_has_sm_90_cubins(kb):
    """Row 20.11: the fatbins of the 2.20.0 wheel's libtensorflow_framework.so.2 carry SASS
    sm_60,70,80,89,90 (36 entries, 35 with PTX 90) and 131 entries PTX 90 only
    (tf-wheel-fatbins)."""
    wheel = kb.official_wheel("2.20.0", "x86_64")
    assert "sm_90" in wheel.sass and wheel.sass_partial == ("sm_90",)
    raw = next(w for w in kb.raw["wheels"]["wheel"]
               if (w["release"], w["arch"], w["package"]) == ("2.20.0", "x86_64", "tensorflow"))
    assert raw["fact_sources"]["sass"] == "pypi-wheel-files tf-wheel-fatbins"
    assert "tf-wheel-fatbins" in raw["sources"]


def test_21_16_an_h200_runs_the_2_21_cubins_and_jits_only_the_generated_kernels(kb):
    """Row 21.16: 2.21.0's libtensorflow_cc.so.2 has 249 fatbins {SASS 60-90, PTX 90} (the
    hand-written kernels) and 1149 {SASS 60,70,80,89, PTX 90} (MLIR-generated kernels)
    (tf-wheel-fatbins). An H200 (9.0) is served: it is not told "no cubin", the JIT caveat
    stays for the generated kernels, and no build is proposed.

    The machine is a real H200's profile (tests/data/hosts/h200-driver580-real.json). Measured
    there (driver 580.159.04, nvcc 13.0.88, cuModuleLoadData): an sm_90 cubin loads, an sm_100
    cubin fails with 209 (NO_BINARY_FOR_GPU), compute_90 PTX JIT-compiles, and the same PTX
    marked .version 9.9 fails with 222 (UNSUPPORTED_PTX_VERSION): the rules cubins and PTX
    follow here, and why PTX needs a driver as new as its toolkit."""
    h200 = host("h200-driver580-real")
    assert (h200.nvidia.gpus[0].name, h200.nvidia.gpus[0].compute_capability) == (
        "NVIDIA H200", "9.0")
    advice = advise(kb, host=h200, target=h200, release="2.21.0", intent=Intent.GPU)
    assert advice.verdict == "official" and advice.codes("error") == []
    covered = advice.finding("GPU_COVERED")
    assert covered.facts["cubin"] == "sm_90"
    assert covered.facts["generated_kernels_jit_from"] == "compute_90"
    assert "no cubin" not in covered.message and "runs only by JIT" not in covered.message
    assert "generated kernels are JIT-compiled from PTX compute_90" in covered.message
    assert not advice.build_proposed and "source build about" not in advice.summary
    assert advice.install[-1] == "tensorflow[and-cuda]==2.21.0"


def test_21_17_compute_xy_is_sass_and_ptx(kb):
    """Row 21.17: rules_ml_toolchain @d8cb9c2c cuda_configure.bzl `_compute_capabilities`
    ("'compute_xy' refers to both PTX and SASS, 'sm_xy' refers to SASS only") and
    `_create_cuda_copts_list` (--cuda-include-ptx=sm_XY and --cuda-gpu-arch=sm_XY)."""
    compute = ccmod.parse_target("compute_80")
    assert compute is not None and (compute.cubin, compute.ptx) == (True, True)
    sm = ccmod.parse_target("sm_80")
    assert sm is not None and (sm.cubin, sm.ptx) == (True, False)
    # the recipe key's text says so
    help_text = next(r["help"] for r in schema_reference()
                     if r["key"] == "cuda.compute_capabilities")
    assert '"compute_xy" (cubin and PTX)' in help_text and "(PTX)" not in help_text
    # and the rules read it so: compute_80's cubin runs on an 8.9 GPU, no JIT warning
    recipe = cuda_recipe(**{"cuda.compute_capabilities": ["compute_80"]})
    found = check(recipe, gpu(host("ada-8.9-driver550"), "NVIDIA RTX 4090", "8.9"))
    assert "CC_PTX_JIT" not in codes(found)
    assert "sm_80 cubin" in finding(found, "CC_COVERS_GPU").message


def test_21_18_a_bare_list_gets_ptx_for_its_highest_only():
    """Row 21.18: rules_ml_toolchain @d8cb9c2c `_compute_capabilities`: a list of only x.y
    entries is sorted (as text) and gives "sm_" to all but the last, "compute_" to the last."""
    assert ccmod.tf_tokens(["8.6", "8.9"]) == ["sm_86", "compute_89"]
    assert ccmod.tf_tokens(["8.6"]) == ["compute_86"]
    # mixed with sm_/compute_ tokens, an x.y entry is compute_xy
    assert ccmod.tf_tokens(["8.6", "sm_90"]) == ["compute_86", "sm_90"]
    # the text sort: of 8.9 and 12.0 the "highest" is 8.9
    assert ccmod.tf_tokens(["8.9", "12.0"]) == ["sm_120", "compute_89"]
    targets = ccmod.targets(["8.6", "8.9"])
    assert [(t.cubin_token, t.ptx) for t in targets] == [("sm_86", False), ("sm_89", True)]


def test_21_18_check_names_the_text_order_pitfall_and_fixes_it():
    """Row 21.18, its consequence: ["8.9", "12.0"] builds PTX compute_89, not compute_120."""
    recipe = cuda_recipe(**{"cuda.compute_capabilities": ["8.9", "12.0"],
                            "toolchain.clang": "21"})
    warn = finding(check(recipe), "CC_BARE_PTX_ORDER")
    assert warn.severity == "warning" and "compute_89, not compute_120" in warn.message
    assert warn.fix.changes == {"cuda.compute_capabilities": ["sm_89", "compute_120"]}
    assert "CC_BARE_PTX_ORDER" not in codes(check(apply_fix(recipe, warn)))
    # where text and number order agree there is nothing to say
    ok = cuda_recipe(**{"cuda.compute_capabilities": ["8.6", "8.9"]})
    assert "CC_BARE_PTX_ORDER" not in codes(check(ok))


def test_21_19_a_family_suffix_is_refused():
    """Row 21.19: rules_ml_toolchain @d8cb9c2c (and HEAD b117455) `_compute_capabilities`
    strips only an 'a' suffix; "sm_100f" fails with "Invalid compute capability". The
    audit's own case: 2.21.0, CUDA 13.0.0, ["sm_100f", "sm_120a"], nvcc."""
    recipe = cuda_recipe(**{"cuda.version": "13.0.0", "cuda.cudnn": "9.11.0",
                            "cuda.compiler": "nvcc",
                            "cuda.compute_capabilities": ["sm_100f", "sm_120a"]})
    err = finding(check(recipe), "CC_SUFFIX_REJECTED")
    assert err.severity == "error" and "sm_100f" in err.message
    assert "Invalid compute capability: sm_100f" in err.message
    assert "rules-ml-toolchain-d8cb9c2c" in err.sources
    assert err.fix.changes == {"cuda.compute_capabilities": ["sm_100", "sm_120a"]}
    assert "CC_SUFFIX_REJECTED" not in codes(check(apply_fix(recipe, err)))
    # the 'a' suffix stays accepted (a note says it runs on that exact CC only)
    assert "CC_SUFFIX_A" in codes(check(recipe))


# -- the hermetic C++ toolchain ---------------------------------------------------------------


def test_21_10_the_hermetic_llvm_is_chosen_and_the_image_clang_is_not_warned_about(kb):
    """Row 21.10: TF 2.21 compiles with its hermetic LLVM (USE_HERMETIC_CC_TOOLCHAIN=1;
    rules_ml_toolchain @d8cb9c2c default 18, LLVM_VERSION 18/19/20/21); the image's
    /usr/lib/llvm-N is used only with --config=clang_local (tensorflow/java's copy of TF's
    .bazelrc @82373b893)."""
    release = kb.release("2.21.0")
    assert release.hermetic_cc_toolchain and release.hermetic_llvm_versions == LLVM_CHOICES
    recipe = cuda_recipe(**{"toolchain.clang": "21"})
    found = check(recipe)
    assert not {"CLANG_NOT_IN_IMAGE", "CC_TOO_NEW_FOR_CLANG"} & codes(found)
    assert codes(found, "error") == set() and codes(found, "warning") == set()
    assert "LLVM 21" in finding(found, "CXX_HERMETIC").message
    plan = make_plan(recipe)
    assert "--repo_env=LLVM_VERSION=21" in plan.flag_list
    assert "--config=clang_local" not in plan.flag_list
    assert plan.hermetic_llvm == "21"
    # a version the pin does not offer is refused, naming the choices
    bad = finding(check(cuda_recipe(**{"toolchain.clang": "17"})), "LLVM_VERSION_UNKNOWN")
    assert bad.severity == "error" and "18, 19, 20, 21" in bad.message
    assert bad.fix.changes == {"toolchain.clang": "18"}


def test_21_10_the_image_clang_only_when_the_recipe_asks(kb):
    """Row 21.10, the other way: toolchain.local_clang = true is TF's --config=clang_local
    (with local_config_cuda's crosstool, as its release_gpu_linux_clang_local); then the
    image's clang compiles, and a clang the image lacks is warned about again."""
    recipe = cuda_recipe(**{"toolchain.clang": "21", "toolchain.local_clang": True})
    found = check(recipe)
    assert "CLANG_NOT_IN_IMAGE" in codes(found, "warning")
    assert "CXX_HERMETIC" not in codes(found)
    plan = make_plan(recipe)
    assert "--config=clang_local" in plan.flag_list
    assert "--crosstool_top=@local_config_cuda//crosstool:toolchain" in plan.flag_list
    assert not any(f.startswith("--repo_env=LLVM_VERSION") for f in plan.flag_list)
    assert plan.configure_env["CLANG_CUDA_COMPILER_PATH"] == "/usr/lib/llvm-21/bin/clang"
    assert plan.hermetic_llvm == ""
    # on a release without the hermetic toolchain the key changes nothing, and says so
    old = recipe.with_changes({"tensorflow.version": "2.20.0", "cuda.cudnn": "9.8.0"})
    assert "LOCAL_CLANG_ALWAYS" in codes(check(old))
    assert "--config=clang_local" not in make_plan(old).flag_list


def test_21_11_configure_is_never_told_a_clang_the_image_lacks(kb):
    """Row 21.11: TF's cuda_clang_official sets no CLANG_CUDA_COMPILER_PATH (java copy
    @82373b893). configure.py (hermetic era, tf-configure-py) still asks for one when
    TF_CUDA_CLANG=1 and checks that the file exists, so the plan answers with the image's own
    clang, whatever hermetic LLVM compiles; a CPU build names no compiler."""
    release = kb.release("2.21.0")
    for llvm in LLVM_CHOICES:
        env = configure_env(cuda_recipe(**{"toolchain.clang": llvm}), release)
        assert env["CLANG_CUDA_COMPILER_PATH"] == f"/usr/lib/llvm-{release.image_clang}/bin/clang"
    cpu = Recipe(name="cpu").with_changes({"tensorflow.version": "2.21.0",
                                           "toolchain.clang": "21"})
    env = configure_env(cpu, release)
    assert env["TF_NEED_CLANG"] == "0" and "CLANG_COMPILER_PATH" not in env
    assert "--repo_env=LLVM_VERSION=21" in make_plan(cpu).flag_list


# -- Blackwell end to end -------------------------------------------------------------------


@pytest.mark.parametrize(("cc", "token", "llvm"), [
    ("12.0", "compute_120", "21"),  # RTX 50, RTX PRO Blackwell: clang 21 (llvm-project#127187)
    ("10.0", "compute_100", "20"),  # B200: clang 20 (cuda.toml [[arch]] sm 100)
])
def test_a_2_21_blackwell_recipe_with_clang_gets_the_hermetic_llvm_as_one_click(kb, cc, token,
                                                                                 llvm):
    """The issue's done-when: a 2.21 sm_120 (and sm_100) recipe with clang 18 gets the hermetic
    LLVM that targets it as its one-click fix; fixed, check is clean and the plan has
    LLVM_VERSION and the targets."""
    recipe = cuda_recipe(**{"cuda.compute_capabilities": [token]})
    err = finding(check(recipe), "CC_TOO_NEW_FOR_CLANG")
    assert err.fix.changes == {"toolchain.clang": llvm}  # not nvcc, not the image's clang
    fixed = apply_fix(recipe, err)
    found = check(fixed)
    assert codes(found, "error") == set() and codes(found, "warning") == set(), found
    plan = make_plan(fixed)
    assert f"--repo_env=LLVM_VERSION={llvm}" in plan.flag_list
    assert plan.configure_env["HERMETIC_CUDA_COMPUTE_CAPABILITIES"] == token
    assert kb.arch(int(token.split("_")[1])).min_clang == int(llvm)


def test_an_rtx_5090_target_reaches_a_clean_plan_by_one_click_fixes(kb):
    """The whole path from the default 2.21 CUDA recipe (CUDA 12.5.1, clang 18, official
    targets) for an RTX 5090 target: each error's own fix, applied as the GUI's click does,
    until none is left: sm_120 (cuda.toml [[arch]] sm 120: CUDA 12.8, clang 21), CUDA 12.8.1
    from 2.21's hermetic list, the hermetic LLVM 21. Then the plan has them."""
    target = host("rtx5090-driver570-py312")
    recipe = cuda_recipe(**{"cuda.version": kb.release("2.21.0").hermetic_cuda_default,
                            "cuda.cudnn": "9.3.0",
                            "cuda.compute_capabilities": list(
                                kb.release("2.21.0").wheel_compute_capabilities)})
    # the official targets reach 12.0 only through compute_90's PTX: a warning whose fix
    # adds the GPU's own cubin
    jit = finding(check(recipe, target), "CC_PTX_JIT")
    recipe = apply_fix(recipe, jit)
    applied = []
    for _ in range(6):
        errors = [f for f in check(recipe, target) if f.severity == "error"]
        if not errors:
            break
        assert errors[0].fix is not None, errors[0]
        applied.append(errors[0].code)
        recipe = apply_fix(recipe, errors[0])
    assert [f for f in check(recipe, target) if f.severity == "error"] == []
    assert sorted(applied) == ["CC_TOO_NEW_FOR_CLANG", "CC_TOO_NEW_FOR_CUDA"]
    assert (recipe.cuda.version, recipe.toolchain.clang) == ("12.8.1", "21")
    assert "sm_120" in recipe.cuda.compute_capabilities
    plan = make_plan(recipe, target_host=target)
    assert "--repo_env=LLVM_VERSION=21" in plan.flag_list
    assert "sm_120" in plan.configure_env["HERMETIC_CUDA_COMPUTE_CAPABILITIES"].split(",")


def test_the_shipped_blackwell_recipe_checks_and_plans_clean():
    """recipes/tf221-cuda-rtx50-blackwell.toml: no error, no warning, LLVM 21 for sm_120."""
    recipe = load_recipe(BLACKWELL)
    found = evaluate(recipe, host("no-gpu-server"), None)
    assert codes(found, "error") == set() and codes(found, "warning") == set(), found
    rtx5090 = evaluate(recipe, host("no-gpu-server"), host("rtx5090-driver570-py312"))
    assert codes(rtx5090, "error") == set()
    assert "sm_120 cubin" in finding(rtx5090, "CC_COVERS_GPU").message
    plan = make_plan(recipe, recipe_dir=BLACKWELL.parent)
    assert "--repo_env=LLVM_VERSION=21" in plan.flag_list
    assert plan.compute_capabilities == ["compute_120"]


def test_advise_points_an_rtx_50_owner_at_the_2_21_llvm_21_build(kb):
    """Official wheels on RTX 50 (12.0): PTX compute_90 JIT is reported to fail with
    CUDA_ERROR_INVALID_PTX (tensorflow/tensorflow#99592 with TF 2.20, #101746 with 2.20.0
    and 2.16.2: tf-blackwell-jit-issues); the build it proposes compiles sm_120 with clang."""
    advice = advise(kb, host=host("rtx5090-driver570-py312"), release="2.20.0",
                    intent=Intent.GPU)
    fails = advice.finding("GPU_PTX_JIT_FAILS")
    assert fails.facts["reported_error"] == "CUDA_ERROR_INVALID_PTX"
    assert "tf-blackwell-jit-issues" in fails.sources
    (build,) = [r for r in fails.fixes if r.kind == "build"]
    assert build.changes["tensorflow.version"] == "2.21.0"
    assert (build.changes["cuda.compiler"], build.changes["toolchain.clang"]) == ("clang", "21")
    assert build.changes["cuda.compute_capabilities"] == ["compute_120"]
    assert advice.build_proposed


# -- GPU / CUDA facts -------------------------------------------------------------------------


def test_g4_cuda_13_3_to_13_5_have_a_driver_row_or_a_lower_bound(kb):
    """Row G4: NVIDIA's release notes exist for 13.3, 13.4 (13.4.1 GA, 13.4.2 U1) and 13.5;
    their Table 3 was not readable. 13.3.x: 610.43.02, the driver packagers find in the
    runfile (glfs-book/glfs#506; cuda-runfile-driver-reports), UNVERIFIED; 13.4/13.5: no row,
    so 13.3's driver stands as a lower bound (drivers only go up)."""
    assert driver_for_toolkit(kb, "13.3.0") == driver_for_toolkit(kb, "13.3.1") == "610.43.02"
    assert set(kb.toolkit_driver_unverified) == {"13.3.0", "13.3.1"}
    for later in ("13.4.1", "13.4.2", "13.5.0"):
        assert driver_for_toolkit(kb, later) == "610.43.02", later
    assert driver_for_toolkit(kb, "13.2.2") == "595.71.05"  # Table 3 (cuda-release-notes)
    # the rules use it: PTX from CUDA 13.4.1 does not JIT on driver 595
    recipe = cuda_recipe(**{"tensorflow.version": "master", "cuda.version": "13.4.1",
                            "cuda.compute_capabilities": ["sm_90", "compute_90"]})
    old = gpu(host("rtx5090-driver570-py312"), "NVIDIA B200", "10.0")
    old.nvidia.driver_version, old.nvidia.cuda_driver_version = "595.71.05", "13.2"
    assert "PTX_DRIVER" in codes(evaluate(recipe, host("no-gpu-server"), old), "error")


@pytest.mark.parametrize(("name", "cc"), [
    ("NVIDIA RTX PRO 4500 Blackwell", "12.0"),  # the audit's row G6
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
    ("NVIDIA RTX 5880 Ada Generation", "8.9"),
    ("NVIDIA RTX 4000 SFF Ada Generation", "8.9"),
    ("NVIDIA A800 80GB PCIe", "8.0"),
    ("NVIDIA A800-SXM4-80GB", "8.0"),
    ("NVIDIA RTX A4500", "8.6"),
    ("NVIDIA RTX A5500 Laptop GPU", "8.6"),
    ("NVIDIA RTX A1000", "8.6"),  # "A100" must not take it for an A100
    ("NVIDIA A100-SXM4-80GB", "8.0"),
    ("NVIDIA GeForce GTX 1630", "7.5"),
])
def test_g6_gpu_names_the_driver_cannot_type(kb, name, cc):
    """Row G6: NVIDIA's CUDA GPUs list (cuda-gpus; secondary pages quoting it): RTX PRO 4500
    Blackwell 12.0, RTX 5880 Ada 8.9, A800 8.0, RTX A4500 8.6, and their neighbours in the
    same name patterns."""
    assert kb.cc_for_gpu_name(name) == cc


def test_g7_python_3_14_is_published_by_a_pre_release(kb):
    """Row G7: PyPI has cp310-cp314 wheels of 2.22.0rc0 (2026-09-22; pypi-wheels): advise
    says so instead of "no release publishes"."""
    machine = host("debian13-py313")
    machine = dataclasses.replace(
        machine, pythons=[PythonInterpreter("/usr/bin/python3.14", "3.14.0", is_current=True)])
    advice = advise(kb, host=machine, release="2.21.0", intent=Intent.CPU)
    missing = advice.finding("PYTHON_NOT_PUBLISHED")
    assert not any("No TensorFlow release publishes" in e for e in missing.evidence)
    assert ("No final TensorFlow release publishes Python 3.14 wheels; the pre-release "
            "2.22.0rc0 (uploaded 2026-09-22) does.") in missing.evidence
    (pre,) = [r for r in missing.fixes if r.kind == "prerelease"]
    assert pre.requirement == "tensorflow-cpu==2.22.0rc0" and "--pre" in pre.label
