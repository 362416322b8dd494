"""The rules' findings in another language: every message and fix label is translatable.

The example recipes against every host profile, plus variants that provoke the rule codes
one by one (as tests/core/rules/test_rules.py does), are evaluated in the pseudo language (every
translated text comes back as ⟦text⟧): English outside ⟦ ⟧ is text nobody marked. Then a
few findings in Chinese.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from tests.i18n_scan import unmarked
from tfwizard.core import i18n
from tfwizard.core.findings import Finding
from tfwizard.core.host import HostProfile, NvidiaGpu, NvidiaInfo, PythonInterpreter
from tfwizard.core.recipe import Recipe, load_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"
TREES = ROOT / "tests" / "fixtures" / "tf_trees"
RECIPES = sorted((ROOT / "recipes").glob("*.toml"))
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
ROCM = load_recipe(ROOT / "recipes" / "tf216-rocm-gfx90a.toml")
CPU = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml")
RULE_CODES = {code for path in (ROOT / "tfwizard" / "core" / "rules").glob("*.py")
              for code in re.findall(r'ctx\.add\("([A-Z0-9_]+)"', path.read_text(encoding="utf-8"))}
CJK = re.compile(r"[\u4e00-\u9fff]")

Case = tuple[str, Recipe, HostProfile | None, HostProfile | None]


def host(name: str) -> HostProfile:
    return HostProfile.load(HOSTS / f"{name}.json")


def gpu_target(ccs: list[str], driver="560.35.03", cuda="12.6", status="ok",
               error: str | None = None) -> HostProfile:
    gpus = [NvidiaGpu(index=i, name=f"GPU{i}", compute_capability=c, error=error)
            for i, c in enumerate(ccs)]
    return dataclasses.replace(host("no-gpu-server"), nvidia=NvidiaInfo(
        status=status, source="nvml", driver_version=driver, cuda_driver_version=cuda, gpus=gpus))


def with_os(base: HostProfile, **changes) -> HostProfile:
    return dataclasses.replace(base, os=dataclasses.replace(base.os, **changes))


def variants() -> list[Case]:
    """Recipes and hosts that between them make (nearly) every rule code fire."""
    nogpu = host("no-gpu-server")
    mi210 = host("rocm-mi210")
    l = LAPTOP.with_changes  # noqa: E741 - short on purpose: a table of laptop variants
    return [
        ("release unknown", l({"tensorflow.version": "9.99.0"}), nogpu, None),
        ("release empty", l({"tensorflow.version": ""}), nogpu, None),
        ("short commit", l({"tensorflow.ref": "1a2b3c4d"}), nogpu, None),
        ("master", l({"tensorflow.version": "master", "python.version": "3.12"}), nogpu, None),
        ("python 3.13", l({"python.version": "3.13", "cuda.version": "12.9.0"}), nogpu, None),
        ("old numpy", l({"tensorflow.version": "2.16.1", "cuda.version": "12.3",
                         "cuda.cudnn": "8.9", "toolchain.clang": "17"}), nogpu, None),
        ("python on target", LAPTOP, nogpu, dataclasses.replace(
            host("ada-8.9-driver550"), pythons=[PythonInterpreter("/usr/bin/python3", "3.10.12")])),
        ("cuda empty", l({"cuda.version": "", "cuda.cudnn": ""}), nogpu, None),
        ("cuda 12.5.2", l({"cuda.version": "12.5.2"}), nogpu, None),
        ("cudnn 9.9.9", l({"cuda.cudnn": "9.9.9"}), nogpu, None),
        ("cuda without nccl", l({"tensorflow.version": "2.19.0", "cuda.version": "12.6.3"}),
         nogpu, None),
        ("unverified list", l({"tensorflow.version": "2.22.0rc0", "python.version": "3.12",
                               "cuda.version": "13.4.0", "cuda.cudnn": "9.23.0"}), nogpu, None),
        ("source differs", l({"tensorflow.version": "2.19.0",
                              "tensorflow.source_dir": str(TREES / "2.21")}), nogpu, None),
        ("source with bzlmod and cuda 13", l({
            "tensorflow.version": "master", "tensorflow.source_dir": str(TREES / "master"),
            "python.version": "3.12", "cuda.version": "13.0.1", "cuda.cudnn": "9.12.0"}),
         nogpu, None),
        ("source lacks a config", ROCM.with_changes({
            "tensorflow.version": "2.20.0", "tensorflow.source_dir": str(TREES / "2.20")}),
         nogpu, None),
        ("cudnn major", l({"cuda.version": "11.8", "cuda.cudnn": "9.22.0"}), nogpu, None),
        ("pre-hermetic", l({"tensorflow.version": "2.15.0", "cuda.version": "12.5",
                            "cuda.cudnn": "8.9", "toolchain.clang": "16"}), nogpu, None),
        ("pre-hermetic empty", l({"tensorflow.version": "2.15.0", "cuda.version": "",
                                  "cuda.cudnn": "8.9", "toolchain.clang": "16"}), nogpu, None),
        ("driver 520 target", LAPTOP, nogpu, host("ada-8.9-driver520")),
        ("driver 520 here", LAPTOP, host("ada-8.9-driver520"), None),
        ("driver old, no cuda info", LAPTOP, nogpu, gpu_target(["8.9"], "520.61.05", "")),
        ("driver old here, no cuda info", LAPTOP, gpu_target(["8.9"], "520.61.05", ""), None),
        ("driver mismatch", LAPTOP, nogpu, gpu_target(["8.9"], status="mismatch")),
        ("gpu error", LAPTOP, nogpu, gpu_target(["8.9", "8.6"], error="GPU is lost")),
        ("ptx driver target", l({"cuda.compute_capabilities": ["sm_80", "compute_90"]}), nogpu,
         gpu_target(["10.0"], "550.54.14", "12.4")),
        ("ptx driver here", l({"cuda.compute_capabilities": ["sm_80", "compute_90"]}),
         gpu_target(["10.0"], "550.54.14", "12.4"), None),
        ("cc not covered", l({"cuda.compute_capabilities": ["sm_86"]}), nogpu,
         gpu_target(["9.0", "8.7"])),
        ("cc ptx jit", l({"cuda.compute_capabilities": ["compute_80"]}), nogpu,
         gpu_target(["8.9"])),
        ("cc covers", LAPTOP, nogpu, gpu_target(["8.6", "8.9"])),
        ("cc limits", l({"cuda.compute_capabilities": ["sm_35", "sm_120", "2.0", "sm_99",
                                                       "sm_90a", "sm_100f"]}), nogpu, None),
        ("cc dropped with note", l({"tensorflow.version": "master", "cuda.version": "13.0.0",
                                    "cuda.cudnn": "9.12.0", "toolchain.clang": "22",
                                    "python.version": "3.12",
                                    "cuda.compute_capabilities": ["sm_70", "sm_101"]}),
         nogpu, None),
        ("cc default", l({"cuda.compute_capabilities": ["3.5", "7.0"]}), nogpu, None),
        ("cc bare order", l({"cuda.compute_capabilities": ["8.9", "12.0"],
                             "cuda.version": "12.8.1"}), nogpu, None),
        ("a suffix, old cuda", l({"cuda.version": "11.8",
                                  "cuda.compute_capabilities": ["sm_90a"]}), nogpu, None),
        ("hermetic llvm unknown", l({"tensorflow.version": "2.21.0", "python.version": "3.12",
                                     "toolchain.clang": "17"}), nogpu, None),
        ("hermetic llvm 21, gcc, nvcc", l({"tensorflow.version": "2.21.0",
                                          "python.version": "3.12", "toolchain.clang": "21",
                                          "toolchain.gcc": "13", "cuda.compiler": "nvcc"}),
         nogpu, None),
        ("local clang ignored", l({"toolchain.local_clang": True}), nogpu, None),
        ("cc empty", l({"cuda.compute_capabilities": []}), nogpu, None),
        ("cc auto here", l({"cuda.compute_capabilities": ["auto"]}), nogpu, None),
        ("cc auto target", l({"cuda.compute_capabilities": ["auto"]}), nogpu, nogpu),
        ("and-cuda major", l({"cuda.version": "11.8"}), nogpu, None),
        ("and-cuda missing", l({"install.extras": []}), nogpu, None),
        ("clang 19", l({"toolchain.clang": "19"}), nogpu, None),
        ("clang 17", l({"toolchain.clang": "17"}), nogpu, None),
        ("clang unknown", l({"toolchain.clang": "99"}), nogpu, None),
        ("clang missing", l({"toolchain.clang": ""}), nogpu, None),
        ("clang and gcc", l({"toolchain.gcc": "13"}), nogpu, None),
        ("clang and gcc cpu", CPU.with_changes({"toolchain.gcc": "13"}), nogpu, None),
        ("gcc", Recipe().with_changes({"tensorflow.version": "2.18.0", "toolchain.gcc": "13"}),
         nogpu, None),
        ("nvcc", l({"cuda.compiler": "nvcc", "toolchain.clang": "", "toolchain.gcc": "13"}),
         nogpu, None),
        ("windows build", LAPTOP, with_os(nogpu, system="windows"), None),
        ("windows target", LAPTOP, nogpu, with_os(host("ada-8.9-driver550"), system="windows")),
        ("macos", LAPTOP, with_os(nogpu, system="darwin"), with_os(nogpu, system="darwin")),
        ("wsl2", LAPTOP, nogpu, host("wsl2-rtx4090")),
        ("wsl2 no libcuda", LAPTOP, nogpu, with_os(host("wsl2-rtx4090"), wsl_libcuda_path=None)),
        ("glibc", CPU, nogpu, with_os(nogpu, glibc="2.17")),
        ("arch mismatch", LAPTOP, nogpu, host("aarch64-server")),
        ("arm image", CPU.with_changes({"build.image": "tensorflow/build:x86"}),
         host("aarch64-server"), None),
        ("cpu for gpu target", CPU, nogpu, host("h100-driver560")),
        ("rocm and cuda", l({"backend.kind": "rocm", "rocm.version": "6.2.0",
                             "rocm.amdgpu_targets": ["gfx90a"]}), nogpu, None),
        ("rocm empty", ROCM.with_changes({"rocm.version": "", "rocm.amdgpu_targets": []}),
         nogpu, None),
        ("rocm unknown", ROCM.with_changes({"rocm.version": "9.9.9"}), nogpu, None),
        ("rocm auto", ROCM.with_changes({"tensorflow.version": "2.18.0",
                                         "rocm.amdgpu_targets": ["auto", "gfx1234"]}), nogpu, None),
        ("rocm not covered", ROCM.with_changes({"rocm.amdgpu_targets": ["gfx1100"]}), nogpu, mi210),
        ("rocm override", ROCM.with_changes({"rocm.amdgpu_targets": ["gfx1100"]}), nogpu,
         dataclasses.replace(mi210, amd=dataclasses.replace(mi210.amd,
                                                            hsa_override_gfx_version="9.0.10"))),
        ("rocm for nvidia", ROCM, nogpu, host("ada-8.9-driver550")),
        ("cuda for amd", LAPTOP, nogpu, mi210),
        ("small laptop", l({"build.jobs": 8}), host("small-laptop"), None),
        ("disk without path", l({"build.jobs": 8}), dataclasses.replace(
            host("small-laptop"), resources=dataclasses.replace(host("small-laptop").resources,
                                                                disk_path=None)), None),
        ("docker down", LAPTOP, dataclasses.replace(nogpu, docker=dataclasses.replace(
            nogpu.docker, status="not_running", message="start it")), None),
        ("flags", CPU.with_changes({"build.bazel_flags": ["--config=cuda", "--jobs=4"],
                                    "build.jobs": 4}), nogpu, None),
        ("remote executor", l({"remote.executor": "https://x.example",
                               "remote.cache": "http://cache:8080",
                               "remote.headers": ["x-api-key=abc123"],
                               "remote.bes_results_url": "https://results"}), nogpu, None),
        ("remote unused", l({"remote.headers": ["k=${K}"], "remote.upload": True}), nogpu, None),
        ("remote secret reference", l({"remote.cache": "grpcs://c", "remote.headers": ["k=${K}"],
                                       "network.https_proxy": "${P}"}), nogpu, None),
        ("remote loopback", l({"remote.cache": "grpc://localhost:9092", "remote.upload": True,
                               "build.network": "bridge"}), nogpu, None),
        ("host network", l({"build.network": "host"}), nogpu, None),
        ("host network loopback", l({"build.network": "host",
                                     "remote.cache": "grpc://127.0.0.1:9092"}), nogpu, None),
        ("network none proxy", l({"build.network": "none",
                                  "network.https_proxy": "http://u:p@proxy:3128"}), nogpu, None),
        ("network none remote", l({"build.network": "none", "remote.cache": "grpcs://c"}),
         nogpu, None),
        ("network none clone", l({"build.network": "none"}), nogpu, None),
        ("offline", l({"build.network": "none", "tensorflow.source_dir": "/src/tf"}), nogpu, None),
        # real folders: one with files but no configure.py, one empty
        ("not a checkout", l({"tensorflow.source_dir": str(ROOT / "tests" / "data")}),
         nogpu, None),
        ("empty checkout", l({"tensorflow.source_dir": tempfile.mkdtemp()}), nogpu, None),
        ("a file for a checkout", l({"tensorflow.source_dir": str(ROOT / "pyproject.toml")}),
         nogpu, None),
    ]


def cases() -> list[Case]:
    """Every example recipe built here and against every host profile, then the variants."""
    build = host("no-gpu-server")
    out: list[Case] = []
    for path in RECIPES:
        recipe = load_recipe(path)
        out.append((f"{path.stem} here", recipe, build, None))
        for profile in sorted(HOSTS.glob("*.json")):
            out.append((f"{path.stem} -> {profile.stem}", recipe, build,
                        HostProfile.load(profile)))
    return out + variants()


def shown(finding: Finding) -> str:
    """What a user reads of a finding: its message and its fix's label."""
    return finding.message + ("\n" + finding.fix.label if finding.fix else "")


def test_every_finding_message_and_fix_label_is_marked(pseudo_lang):
    seen: set[str] = set()
    fixes = 0
    for label, recipe, build, target in cases():
        for finding in evaluate(recipe, build, target):
            seen.add(finding.code)
            fixes += finding.fix is not None
            assert unmarked(shown(finding)) == [], (label, finding.code, shown(finding))
            assert finding.message.startswith("⟦"), (label, finding.code, finding.message)
            if finding.fix is not None:
                assert finding.fix.label.startswith("⟦"), (label, finding.code)
    missing = RULE_CODES - seen
    assert len(RULE_CODES) > 70 and not missing, f"no case provokes {sorted(missing)}"
    assert fixes > 50


def test_codes_keys_and_fix_changes_do_not_depend_on_the_language(pseudo_lang):
    def machine(findings: list[Finding]) -> list[tuple]:
        return [(f.code, f.severity, f.key, f.sources, f.fix.changes if f.fix else None)
                for f in findings]

    for label, recipe, build, target in variants():
        pseudo = machine(evaluate(recipe, build, target))
        i18n.set_language("en")
        try:
            english = machine(evaluate(recipe, build, target))
        finally:
            i18n.set_language(i18n.PSEUDO)
        assert pseudo == english, label


def test_driver_too_old_in_chinese(zh_cn_lang):
    found = evaluate(LAPTOP, host("no-gpu-server"), host("ada-8.9-driver520"))
    err = next(f for f in found if f.code == "DRIVER_TOO_OLD")
    assert CJK.search(err.message) and "525.60.13" in err.message and "驱动" in err.message
    assert "needs NVIDIA driver" not in err.message
    assert err.fix is not None and CJK.search(err.fix.label) and "CUDA" in err.fix.label
    assert err.fix.changes == {"cuda.version": err.fix.changes["cuda.version"]}


def test_every_finding_is_chinese_in_chinese(zh_cn_lang):
    for label, recipe, build, target in cases():
        for finding in evaluate(recipe, build, target):
            assert CJK.search(finding.message), (label, finding.code, finding.message)
            if finding.fix is not None:
                assert CJK.search(finding.fix.label), (label, finding.code, finding.fix.label)


def test_the_portable_preset_does_not_read_translated_messages(pseudo_lang):
    from tfwizard.core.rules import portable_compute_capabilities

    assert portable_compute_capabilities(LAPTOP) == ["sm_50", "sm_60", "sm_70", "sm_80",
                                                     "compute_90"]

