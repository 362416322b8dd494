"""Configure answers reproduce what TF's real configure.py wrote (tf-configure-goldens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.building.plan.configure import configure_env, parse_env_file, simulate_configure
from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.recipe import Recipe

# A copy of shared/reference/tf-configure-goldens (what TF's real configure.py wrote),
# kept in the repository so the tests need nothing outside it.
GOLDENS = Path(__file__).resolve().parents[2] / "data" / "tf-configure-goldens"

#: the recipe equivalent to each golden set's answers
RECIPES: dict[str, dict] = {
    "cpu-clang17": {"backend.kind": "cpu", "toolchain.clang": "17"},
    "cpu-clang18": {"backend.kind": "cpu", "toolchain.clang": "18"},
    "cpu-gcc": {"backend.kind": "cpu", "toolchain.clang": "", "toolchain.gcc": "13"},
    "cpu-native-xla-off": {"backend.kind": "cpu", "toolchain.clang": "18", "build.xla": False,
                           "build.opt_flags": ["-march=native", "-Wno-sign-compare"],
                           "build.system_libs": ["zlib", "png"]},
    "cuda-clang17-multi-cc": {"backend.kind": "cuda", "cuda.version": "12.5.1",
                              "cuda.cudnn": "9.3.0", "toolchain.clang": "17",
                              "cuda.compute_capabilities": ["sm_60", "sm_70", "sm_80", "sm_89",
                                                            "compute_90"]},
    "cuda-clang18-12.5.1": {"backend.kind": "cuda", "cuda.version": "12.5.1",
                            "cuda.cudnn": "9.3.0", "toolchain.clang": "18",
                            "cuda.compute_capabilities": ["8.6"]},
    "cuda-local-paths": {"backend.kind": "cuda", "cuda.version": "12.5.1", "cuda.cudnn": "9.3.0",
                         "toolchain.clang": "18", "cuda.compute_capabilities": ["8.6"],
                         "cuda.local_cuda_path": "/usr/local/cuda-12.5",
                         "cuda.local_cudnn_path": "/usr/local/cudnn",
                         "cuda.local_nccl_path": "/usr/local/nccl"},
    "cuda-nvcc-gcc": {"backend.kind": "cuda", "cuda.version": "12.3.2",
                      "cuda.cudnn": "8.9.7.29", "cuda.compiler": "nvcc", "toolchain.clang": "",
                      "cuda.compute_capabilities": ["7.5", "8.0"]},
    "rocm": {"backend.kind": "rocm", "rocm.version": "6.2.0", "rocm.path": "/opt/rocm-6.2.0",
             "toolchain.clang": "18"},
    "bad-cc": {"backend.kind": "cuda", "cuda.version": "12.5.1", "cuda.cudnn": "9.3.0",
               "toolchain.clang": "18", "cuda.compute_capabilities": ["2.0"]},
}

SETS = sorted(p.name for p in GOLDENS.iterdir() if p.is_dir()) if GOLDENS.is_dir() else []


def test_goldens_are_present():
    assert len(SETS) >= 12, f"tf-configure-goldens not found at {GOLDENS}"


@pytest.mark.parametrize("name", SETS)
def test_simulated_configure_matches_golden_byte_for_byte(name):
    folder = GOLDENS / name
    env = parse_env_file((folder / "env.txt").read_text())
    result = simulate_configure(env)
    assert result.text == (folder / "tf_configure.bazelrc").read_text()
    assert result.exit_code == int((folder / "exit_code.txt").read_text())
    if (folder / "stderr.txt").exists():
        assert result.error == (folder / "stderr.txt").read_text().strip()


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_recipe_prediction_has_the_golden_lines(name):
    folder = GOLDENS / name
    recipe = Recipe().with_changes({"tensorflow.version": "2.20.0", **RECIPES[name]})
    release = load_knowledge().release("2.20.0")
    env = configure_env(recipe, release)
    golden_env = parse_env_file((folder / "env.txt").read_text())
    for key, value in golden_env.items():
        if key == "TF_NEED_CLANG" and value == "0":
            assert env.get(key) == "0"
            continue
        assert env.get(key) == value, key
    predicted = simulate_configure(env).lines
    golden = (folder / "tf_configure.bazelrc").read_text().splitlines()
    machine = ("PYTHON_LIB_PATH",)
    assert {x for x in predicted if not any(m in x for m in machine)} == \
        {x for x in golden if not any(m in x for m in machine)}
    # every question answered: nothing left for configure to prompt about
    if recipe.backend.kind == "cuda":
        for key in ("HERMETIC_CUDA_VERSION", "HERMETIC_CUDNN_VERSION",
                    "HERMETIC_CUDA_COMPUTE_CAPABILITIES", "LOCAL_CUDA_PATH", "LOCAL_CUDNN_PATH",
                    "LOCAL_NCCL_PATH", "TF_CUDA_CLANG"):
            assert key in env


def test_bad_cc_prediction_warns_of_silent_fallback():
    env = parse_env_file((GOLDENS / "bad-cc" / "env.txt").read_text())
    result = simulate_configure(env)
    assert any("falls back" in m for m in result.messages)
    assert 'HERMETIC_CUDA_COMPUTE_CAPABILITIES="3.5,7.0"' in result.text


def test_legacy_release_answers_pre_hermetic_variables():
    recipe = Recipe().with_changes({"tensorflow.version": "2.16.1", "backend.kind": "cuda",
                                    "cuda.version": "12.3", "cuda.cudnn": "8.9",
                                    "toolchain.clang": "17",
                                    "cuda.compute_capabilities": ["sm_80", "compute_90"]})
    env = configure_env(recipe, load_knowledge().release("2.16.1"))
    assert env["TF_CUDA_VERSION"] == "12.3" and env["TF_CUDNN_VERSION"] == "8"
    assert env["TF_CUDA_COMPUTE_CAPABILITIES"] == "sm_80,compute_90"
    assert "HERMETIC_CUDA_VERSION" not in env and env["TF_NEED_TENSORRT"] == "0"
    lines = simulate_configure(env, hermetic=False).lines
    assert 'build --action_env TF_CUDA_COMPUTE_CAPABILITIES="sm_80,compute_90"' in lines
