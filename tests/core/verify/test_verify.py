"""Verify: the probe in a real tensorflow-cpu, crashing and hanging probes, and every
runtime diagnosis against the real message texts (tests/data/runtime, from
gpu-compat-facts.md section 10)."""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.diagnosis import real_logs
from tfwizard.cli import capture
from tfwizard.core.diagnosis.runtime import diagnose, load_rules
from tfwizard.core.host import HostProfile, NvidiaGpu, NvidiaInfo, OsInfo
from tfwizard.core.verify.job import PROBE_SCRIPT, run_probe, verify

ROOT = Path(__file__).resolve().parents[3]
RUNTIME = ROOT / "tests" / "data" / "runtime"
TF_VENV = ROOT / ".venv-tf"


# -- helpers ---------------------------------------------------------------------------------


def log(name: str) -> list[str]:
    return (RUNTIME / name).read_text(encoding="utf-8").splitlines()


def gpu_host(cc: str = "8.6", *, wsl: bool = False, cuda: str = "12.4",
             driver: str = "550.54.14") -> HostProfile:
    return HostProfile(
        nvidia=NvidiaInfo(status="ok", source="nvml", driver_version=driver,
                          cuda_driver_version=cuda,
                          gpus=[NvidiaGpu(0, "NVIDIA GeForce RTX 3090", compute_capability=cc)]),
        os=OsInfo(wsl2=wsl),
    )


def cpu_host() -> HostProfile:
    return HostProfile(nvidia=NvidiaInfo(status="none", message="no NVIDIA GPU detected"))


def cuda_probe(*, lines: list[str] | None = None, gpus: int = 0, cuda: str = "12.3",
               ccs: list[str] | None = None, libraries: list[dict] | None = None) -> dict:
    """A probe result of a CUDA wheel, shaped like probe_tf.py's."""
    info = {"is_cuda_build": True, "is_rocm_build": False, "cuda_version": cuda,
            "cudnn_version": "8"}
    if ccs is not None:
        info["cuda_compute_capabilities"] = ccs
    devices = [{"name": "/physical_device:CPU:0", "type": "CPU"}]
    devices += [{"name": f"/physical_device:GPU:{i}", "type": "GPU"} for i in range(gpus)]
    return {
        "stage": "done", "complete": True, "tensorflow": {"version": "2.16.1"},
        "build_info": info, "built_with_cuda": True, "built_with_rocm": False,
        "devices": devices, "ops": [{"device": "/device:CPU:0", "ok": True, "value": 1.0,
                                     "expected": 1.0}],
        "libraries": libraries or [], "log": {"import": lines or []},
        "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/compat:/usr/lib"},
    }


def cpu_probe(lines: list[str] | None = None) -> dict:
    probe = cuda_probe(lines=lines)
    probe["build_info"] = {"is_cuda_build": False, "is_rocm_build": False}
    probe["built_with_cuda"] = False
    return probe


def ids(diagnoses) -> list[str]:
    return [d.id for d in diagnoses]


def by_id(diagnoses, rule_id):
    found = [d for d in diagnoses if d.id == rule_id]
    assert found, f"{rule_id} not in {ids(diagnoses)}"
    return found[0]


# -- the rules as data -------------------------------------------------------------------------

KNOWN_PLACEHOLDERS = {
    "python", "ld_library_path", "gpus", "expect",  # every rule
    "kernel", "dso", "libs", "cc", "sm", "device", "minimum", "driver", "ptxas", "loaded",
    "compiled", "host_gpu_message", "why", "cuda", "driver_cuda", "driver_needed", "gpu",
    "built", "ptx", "libcuda_state", "error", "how", "stage", "timeout", "needed", "lib",
    "plugin", "framework", "proto", "gencode", "runtime", "package", "version",
}


def test_every_runtime_rule_has_words_sources_and_known_placeholders(kb):
    rules = load_rules(kb)
    assert len([r for r in rules.values() if r.kind == "message"]) >= 6
    for rule in rules.values():
        assert rule.title and rule.cause and rule.next_step, rule.id
        assert rule.sources and all(s in kb.sources for s in rule.sources), rule.id
        # beyond the known ones, a placeholder every one of the rule's patterns fills
        groups = (set.intersection(*(set(r.groupindex) for r in rule.regexes))
                  if rule.regexes else set())
        for text in (rule.title, rule.cause, rule.next_step, rule.next_step_wsl):
            names = {f for _, f, _, _ in string.Formatter().parse(text) if f}
            unknown = names - KNOWN_PLACEHOLDERS - groups
            assert not unknown, (rule.id, unknown)
        if rule.kind == "message":
            # every message rule matches a line in tests/data/runtime or a real excerpt (a
            # tuning one: the held-out third is for measuring, bench/diagnosis.py)
            samples = [RUNTIME / f.name for f in RUNTIME.glob("*.log")]
            samples += [real_logs.CORPUS / e["file"]
                        for e in real_logs.entries("runtime", holdout=False)]
            assert any(regex.search(line) for regex in rule.regexes for f in samples
                       for line in f.read_text(encoding="utf-8").splitlines()), \
                rule.id + " has no real sample"


# -- messages ----------------------------------------------------------------------------------


def test_dso_mismatch_names_both_versions_and_says_reboot():
    found = diagnose(cuda_probe(lines=log("dso_mismatch.log")), gpu_host())
    d = by_id(found, "dso-mismatch")
    assert d.severity == "error"
    assert "515.105.1" in d.cause and "470.223.2" in d.cause
    assert "Reboot" in d.next_step and "reinstall one driver" in d.next_step
    assert "/usr/local/cuda/compat" in d.next_step  # the LD_LIBRARY_PATH the probe saw
    assert any("does not match DSO version" in e for e in d.evidence)
    # the same log carries the forward-compat failure
    compat = by_id(found, "compat-not-supported")
    assert "compat" in compat.next_step


def test_dso_mismatch_on_wsl2_says_never_install_a_linux_driver():
    d = by_id(diagnose(cuda_probe(lines=log("dso_mismatch.log")), gpu_host(wsl=True)),
              "dso-mismatch")
    assert "never install a Linux driver inside WSL2" in d.next_step
    assert "/usr/lib/wsl/lib" in d.next_step


def test_cudart_not_found_means_and_cuda_missing_on_a_gpu_build():
    d = by_id(diagnose(cuda_probe(lines=log("cudart_not_found.log")), gpu_host(),
                       python="/v/bin/python"), "cudart-not-found")
    assert d.severity == "error"
    assert "libcudart" in d.cause and "not a driver check" in d.cause
    assert "--extras and-cuda" in d.next_step and "/v/bin/python" in d.next_step


def test_cudart_not_found_is_harmless_on_a_cpu_build_without_gpu():
    d = by_id(diagnose(cpu_probe(log("cudart_not_found.log")), cpu_host(), expect="cpu"),
              "cudart-not-found")
    assert d.severity == "info"


def test_dlopen_failure_names_the_libraries_from_the_preceding_lines():
    d = by_id(diagnose(cuda_probe(lines=log("dlopen_failed.log")), gpu_host()),
              "dlopen-failed")
    assert "libcudnn.so.8" in d.cause and "libcublasLt.so.11" in d.cause
    assert "CPU only" in d.cause
    assert "and-cuda" in d.next_step


def test_dlopen_failure_without_named_libraries_names_what_was_not_loaded():
    libs = [{"name": "libcudart.so.12", "path": "/x/libcudart.so.12", "origin": "pip"}]
    d = by_id(diagnose(cuda_probe(lines=log("dlopen_failed_unnamed.log"), libraries=libs),
                       gpu_host()), "dlopen-failed")
    assert "libcudnn" in d.cause and "libcublas" in d.cause
    assert "libcudart," not in d.cause  # it was loaded


def test_ptx_jit_asks_for_a_rebuild_with_the_recipe_change():
    found = diagnose(cuda_probe(lines=log("ptx_jit.log"), gpus=1, ccs=["sm_80", "compute_80"]),
                     gpu_host("9.0"), recipe_ccs=["sm_80", "compute_80"])
    d = by_id(found, "ptx-jit")
    assert d.severity == "warning" and "9.0" in d.cause
    assert '"sm_90"' in d.next_step
    assert d.recipe_fix == {"cuda.compute_capabilities": ["sm_80", "compute_80", "sm_90"]}
    assert "cc-ptx-only" not in ids(found)  # TF said it; no duplicate from the join


def test_ptx_jit_with_a_suffixed_cc():
    d = by_id(diagnose(cuda_probe(lines=log("ptx_jit_suffix.log"), gpus=1), gpu_host("12.0")),
              "ptx-jit")
    # no recipe known: failures.toml's symbolic "append this value", resolved against a
    # recipe later (core/fixes.py), or saying that it needs one
    assert "12.0" in d.cause and d.recipe_fix == {"cuda.compute_capabilities": "+sm_120"}


def test_gpu_below_minimum_cc():
    d = by_id(diagnose(cuda_probe(lines=log("cc_below_minimum.log")), gpu_host("3.7")),
              "cc-below-minimum")
    assert "5.0" in d.cause and "3.7" in d.cause and '"sm_37"' in d.next_step


def test_driver_older_than_ptxas():
    d = by_id(diagnose(cuda_probe(lines=log("ptxas_older_driver.log"), gpus=1), gpu_host()),
              "ptxas-newer-than-driver")
    assert "12.3.107" in d.next_step


def test_cudnn_and_driver_version_mismatch():
    found = diagnose(cuda_probe(lines=log("version_mismatch.log")), gpu_host())
    cudnn = by_id(found, "cudnn-mismatch")
    assert "8.1.0" in cudnn.cause and "8.6.0" in cudnn.cause
    assert "Upgrade the NVIDIA driver" in by_id(found, "driver-insufficient").next_step


# -- facts joined with the host ------------------------------------------------------------------


def test_cuda_major_newer_than_driver_is_an_error_with_the_driver_to_get():
    d = by_id(diagnose(cuda_probe(cuda="12.5.1"), gpu_host(cuda="11.8", driver="520.61.05")),
              "cuda-newer-than-driver")
    assert d.severity == "error"
    assert "12.5.1" in d.cause and "11.8" in d.cause
    assert "555.42.02" in d.next_step  # the 12.5.0 toolkit driver from cuda.toml


def test_cuda_minor_newer_than_driver_is_a_warning():
    found = diagnose(cuda_probe(cuda="12.5", gpus=1), gpu_host(cuda="12.2"))
    assert by_id(found, "cuda-minor-newer-than-driver").severity == "warning"
    assert "cuda-newer-than-driver" not in ids(found)


def test_same_cuda_as_driver_says_nothing():
    found = diagnose(cuda_probe(cuda="12.4", gpus=1), gpu_host(cuda="12.4"))
    assert not [i for i in ids(found) if i.startswith("cuda-")]


def test_wheel_without_kernels_for_the_gpu():
    found = diagnose(cuda_probe(gpus=1, ccs=["sm_70", "sm_80", "compute_80"]), gpu_host("6.1"),
                     recipe_ccs=["sm_70", "sm_80", "compute_80"])
    d = by_id(found, "cc-not-in-build")
    assert "6.1" in d.cause and "sm_70, sm_80, compute_80" in d.cause
    assert d.recipe_fix == {"cuda.compute_capabilities": ["sm_70", "sm_80", "compute_80",
                                                          "sm_61"]}


def test_wheel_with_only_ptx_for_the_gpu():
    d = by_id(diagnose(cuda_probe(gpus=1, ccs=["sm_80", "compute_80"]), gpu_host("9.0")),
              "cc-ptx-only")
    assert d.severity == "warning" and "compute_80" in d.cause


def test_covered_gpu_says_nothing():
    found = diagnose(cuda_probe(gpus=1, ccs=["sm_70", "sm_80", "compute_80"]), gpu_host("8.6"))
    assert not [i for i in ids(found) if i.startswith("cc-")]


def test_empty_gpu_list_with_a_gpu_present():
    d = by_id(diagnose(cuda_probe(gpus=0), gpu_host(), expect="cuda"), "no-gpu-visible")
    assert "RTX 3090" in d.cause and "libcudart was never loaded" in d.cause
    assert "--extras and-cuda" in d.next_step and "LD_LIBRARY_PATH" in d.next_step


def test_wsl2_libcuda_from_a_linux_driver():
    libs = [{"name": "libcudart.so.12", "path": "/v/nvidia/cuda_runtime/lib/libcudart.so.12",
             "origin": "pip"},
            {"name": "libcuda.so.1", "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
             "origin": "system"}]
    found = diagnose(cuda_probe(gpus=0, libraries=libs), gpu_host(wsl=True), expect="cuda")
    d = by_id(found, "wsl-libcuda-path")
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.1" in d.cause
    assert "never install a Linux driver inside WSL2" in d.next_step
    assert "/usr/lib/wsl/lib" in by_id(found, "no-gpu-visible").next_step


def test_wsl2_libcuda_from_the_windows_driver_is_fine():
    libs = [{"name": "libcuda.so.1", "path": "/usr/lib/wsl/lib/libcuda.so.1", "origin": "wsl"}]
    found = diagnose(cuda_probe(gpus=1, libraries=libs), gpu_host(wsl=True), expect="cuda")
    assert "wsl-libcuda-path" not in ids(found)


def test_cpu_build_when_cuda_expected_and_no_gpu():
    found = diagnose(cpu_probe(), cpu_host(), expect="cuda")
    assert ids(found)[:2] == ["cpu-build-gpu-expected", "no-gpu-on-host"]
    assert "No GPU" in by_id(found, "no-gpu-on-host").title


def test_failed_gpu_op_is_reported():
    probe = cuda_probe(gpus=1)
    probe["ops"].append({"device": "/device:GPU:0", "ok": False,
                         "error": "InternalError: CUDA_ERROR_INVALID_PTX"})
    d = by_id(diagnose(probe, gpu_host(), expect="cuda"), "gpu-op-failed")
    assert "CUDA_ERROR_INVALID_PTX" in d.cause


def test_import_failure():
    probe = {"stage": "done", "tensorflow": None,
             "import_error": "ModuleNotFoundError: No module named 'tensorflow'"}
    d = by_id(diagnose(probe, cpu_host(), python="/p/python"), "import-failed")
    assert "No module named" in d.cause and "/p/python -m pip show" in d.next_step


# -- probes that misbehave ---------------------------------------------------------------------


def fake_python(tmp_path: Path, body: str) -> Path:
    """An executable that acts as the target interpreter."""
    path = tmp_path / "python"
    path.write_text(f"#!{sys.executable}\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_hanging_probe_is_reported_not_fatal(tmp_path):
    python = fake_python(tmp_path, "import time\ntime.sleep(120)")
    report = verify(python, expect="cpu", host=cpu_host(), timeout=2)
    assert report.probe.status == "timeout"
    assert not report.ok
    assert report.diagnoses[0].id == "probe-timeout"
    assert "2 s" in report.diagnoses[0].cause
    assert report.probe.elapsed_s < 60


def test_a_segfaulting_python_is_reported_not_fatal(tmp_path):
    python = fake_python(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    run = run_probe(python, timeout=30)
    assert run.status == "crashed" and run.signal == "SIGSEGV"
    report = verify(python, expect="cpu", host=cpu_host(), timeout=30)
    assert not report.ok and report.diagnoses[0].id == "probe-crashed"
    assert "SIGSEGV" in report.diagnoses[0].cause


def test_a_tensorflow_that_segfaults_on_import_keeps_the_log_and_the_stage(tmp_path):
    fake_tf = tmp_path / "site" / "tensorflow"
    fake_tf.mkdir(parents=True)
    (fake_tf / "__init__.py").write_text(
        "import os, signal\n"
        "os.write(2, b'E0000 fake_loader.cc:1] about to crash in a C++ static initialiser\\n')\n"
        "os.kill(os.getpid(), signal.SIGSEGV)\n", encoding="utf-8")
    python = fake_python(
        tmp_path, f"import os, sys\nsys.path.insert(0, {str(tmp_path / 'site')!r})\n"
        "sys.argv = sys.argv[1:]\nimport runpy\nrunpy.run_path(sys.argv[0], run_name='__main__')")
    report = verify(python, expect="cpu", host=cpu_host(), timeout=60)
    assert report.probe.status == "crashed" and report.probe.stage == "import"
    crash = report.diagnoses[0]
    assert crash.id == "probe-crashed" and "'import'" in crash.cause
    assert any("about to crash" in line for line in crash.evidence)


def test_a_missing_interpreter_is_reported(tmp_path):
    run = run_probe(tmp_path / "nope" / "python", timeout=5)
    assert run.status == "not_started"


def test_probe_script_imports_nothing_from_tfwizard():
    text = PROBE_SCRIPT.read_text(encoding="utf-8")
    assert "tfwizard" not in "".join(
        line for line in text.splitlines() if line.lstrip().startswith(("import", "from")))


# -- the real tensorflow-cpu -----------------------------------------------------------------------


# tf_python (the real tensorflow-cpu in <repo>/.venv-tf) is in tests/conftest.py


@pytest.mark.slow
def test_real_tensorflow_cpu_verifies_with_expect_cpu(tf_python, tmp_path):
    host = tmp_path / "host.json"
    host.write_text(cpu_host().to_json(), encoding="utf-8")
    save = tmp_path / "report.json"
    status, out, err = capture(["verify", "--python", str(tf_python), "--expect", "cpu",
                                "--host", str(host), "--save", str(save)])
    assert status == 0, out + err
    version = subprocess.run([str(tf_python), "-c", "import tensorflow as t;print(t.__version__)"],
                             capture_output=True, text=True, timeout=300,
                             check=False).stdout.strip().splitlines()[-1]
    assert f"TensorFlow     {version}" in out
    assert "cpu build (is_built_with_cuda = False)" in out
    assert "[ok] CPU op" in out and "reduce_sum     /device:CPU:0: ok" in out
    assert "GPUs           none" in out
    assert "RESULT: OK" in out
    data = json.loads(save.read_text(encoding="utf-8"))
    assert data["ok"] is True and data["tensorflow"] == version
    probe = data["probe"]["data"]
    assert probe["built_with_cuda"] is False
    assert [d["type"] for d in probe["devices"]] == ["CPU"]
    assert probe["ops"][0]["ok"] and abs(probe["ops"][0]["value"] - probe["ops"][0]["expected"]) < 1
    assert probe["matmul"][0]["ms"] > 0
    assert probe["log"]["import"], "TF's C++ log lines on fd 2 were captured"


@pytest.mark.slow
def test_real_tensorflow_cpu_fails_expect_cuda_with_no_gpu(tf_python, tmp_path):
    host = tmp_path / "host.json"
    host.write_text(cpu_host().to_json(), encoding="utf-8")
    status, out, err = capture(["verify", "--python", str(tf_python), "--expect", "cuda",
                                "--host", str(host), "--quiet-log"])
    assert status == 1, out + err
    assert "[FAIL] GPU visible: no GPU device" in out
    assert "no-gpu-on-host: No GPU" in out
    assert "cpu-build-gpu-expected" in out
    assert "RESULT: FAILED" in out


@pytest.mark.slow
def test_verify_saves_beside_the_build_record(tf_python, tmp_path):
    data_dir = tmp_path / "data"
    record = data_dir / "builds" / "20250101-000000-abcdef"
    record.mkdir(parents=True)
    host = tmp_path / "host.json"
    host.write_text(cpu_host().to_json(), encoding="utf-8")
    status, out, _ = capture(["verify", "--venv", str(TF_VENV), "--build", record.name,
                              "--host", str(host), "--json"],
                             env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(data_dir)})
    assert status == 0
    assert json.loads(out)["expect"] == "cpu"  # from the wheel: it is a CPU build
    assert json.loads((record / "verify.json").read_text(encoding="utf-8"))["ok"] is True
