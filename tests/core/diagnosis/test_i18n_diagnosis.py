"""Build-failure diagnosis, runtime diagnosis and the verify report in another language.

With the pseudo language (every translated text is ⟦text⟧) the real code paths are run on
the logs and probe data the other tests use, and `unmarked()` lists English that nobody
marked; the knowledge texts shown translated (knowledge.display_texts) must all have a
Chinese translation; and one diagnosis and one report come out in Chinese.
"""

from __future__ import annotations

import json
import os
import string
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.cli.test_diagnose import NO_KERNEL
from tests.core.diagnosis import real_logs, sourced_gpu_runtime
from tests.core.diagnosis.test_diagnose import EXAMPLES, LOGS, example_lines
from tests.core.verify.test_verify import RUNTIME, cpu_host, cpu_probe, cuda_probe, gpu_host, log
from tests.i18n_scan import unmarked
from tfwizard.cli import ExitStatus, capture
from tfwizard.core import i18n
from tfwizard.core.diagnosis.build import diagnose, diagnose_file, load_failures
from tfwizard.core.diagnosis.linetext import line_text
from tfwizard.core.diagnosis.runtime import diagnose as runtime_diagnose
from tfwizard.core.diagnosis.runtime import diagnose_log, load_rules, probe_failure
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import display_texts
from tfwizard.core.verify.job import render_report, verify

ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"


def fields(text: str) -> set[str]:
    return {f for _lit, f, _spec, _conv in string.Formatter().parse(text) if f is not None}


def env_in(lang: str) -> dict[str, str]:
    return {**os.environ, "TFWIZARD_LANG": lang}


# -- the knowledge texts -----------------------------------------------------------------------


def test_every_shown_knowledge_text_has_a_chinese_translation_with_its_placeholders(kb):
    texts = display_texts(kb)
    # the build diagnosis, the runtime diagnosis and the platform checks all have words here
    sig = next(s for s in load_failures() if s.id == "oom-compiler-killed")
    rule = load_rules(kb)["dso-mismatch"]
    assert {sig.title, sig.cause, sig.next_step} <= texts
    assert {rule.title, rule.cause, rule.next_step, rule.next_step_wsl} <= texts
    assert kb.platforms["windows"]["message"] in texts and kb.archs[35].note in texts
    assert not any(s.title in texts for s in kb.sources.values())  # document names stay
    zh = i18n.catalog("zh_CN")
    missing = sorted(t for t in texts if not (zh.lookup(t) or "").strip())
    assert not missing, "no zh_CN translation for:\n" + "\n".join(missing)
    bad = sorted(t for t in texts if fields(t) != fields(zh.gettext(t)))
    assert not bad, "placeholders differ:\n" + "\n".join(bad)


# -- build failures ----------------------------------------------------------------------------


def diagnosis_text(found) -> str:
    """What a person reads of a build diagnosis (the quoted log excerpt aside)."""
    return "\n".join(f"{d.id}: {d.title}\ncause: {d.cause}\nnext: {d.next_step}" for d in found)


def test_every_failure_signature_is_shown_marked(pseudo_lang):
    seen = set()
    for line in EXAMPLES.values():
        found = diagnose(["unrelated", *example_lines(line)])
        assert found and unmarked(diagnosis_text(found)) == [], line
        assert found[0].title.startswith("⟦") and found[0].next_step.endswith("⟧")
        seen.update(d.id for d in found)
    assert seen == {s.id for s in load_failures()}
    found = diagnose_file(LOGS / "fixture-break.log.txt")
    assert [d.id for d in found][:1] == ["compile-error"]
    assert unmarked(diagnosis_text(found)) == []


def test_cli_diagnose_is_marked():
    status, out, err = capture(["diagnose", str(LOGS / "fixture-break.log.txt")],
                               env_in("pseudo"))
    assert status == ExitStatus.OK, err
    assert "⟦A C++ file failed to compile⟧" in out
    shown = [line for line in out.splitlines() if not line.startswith("  > ")]  # log quotes
    assert unmarked("\n".join(shown)) == []


def test_cli_runtime_diagnose_is_marked(tmp_path):
    """`diagnose --runtime` with a fix to apply, and without the recipe it needs: only the
    quoted log lines, names and the command stay English."""
    log = tmp_path / "no-kernel.log"
    log.write_text(NO_KERNEL)
    recipe = ROOT / "recipes" / "tf220-cuda-h100-from-gpuless-server.toml"
    for extra, said in (([], "⟦no recipe fix: "), (["--recipe", str(recipe)], "⟦apply: ")):
        status, out, err = capture(["diagnose", "--runtime", str(log), "--target",
                                    str(HOSTS / "laptop-rtx3060-550.json"), *extra],
                                   env_in("pseudo"))
        assert status == ExitStatus.OK, err
        shown = [line for line in out.splitlines() if not line.startswith("  > ")]
        assert unmarked("\n".join(shown)) == [], out
        assert said in out


def test_a_build_diagnosis_in_chinese(zh_cn_lang):
    found = diagnose(["gcc: internal compiler error: Killed (program cc1plus)"])
    assert found[0].title == "编译器被终止：内存不足"
    assert "build.jobs" in found[0].next_step and "减半" in found[0].next_step
    status, out, _err = capture(["diagnose", str(LOGS / "fixture-break.log.txt")],
                                env_in("zh_CN"))
    assert status == ExitStatus.OK and "compile-error: 一个 C++ 文件编译失败" in out


# -- runtime diagnosis -------------------------------------------------------------------------


def runtime_cases() -> list[tuple[list, list[str]]]:
    """(diagnoses, log lines they may quote) for every runtime rule, from test_verify's data."""
    cases = []
    for name in sorted(p.name for p in RUNTIME.glob("*.log")):
        lines = log(name)
        for host in (gpu_host(), gpu_host(wsl=True)):
            cases.append((runtime_diagnose(cuda_probe(lines=lines, gpus=0), host,
                                           recipe_ccs=["sm_80"]), lines))
        cases.append((runtime_diagnose(cpu_probe(lines), cpu_host(), expect="cpu"), lines))
    cases.append((runtime_diagnose(cpu_probe(), cpu_host(), expect="cuda"), []))
    cases.append((runtime_diagnose(cuda_probe(cuda="12.5.1"),
                                   gpu_host(cuda="11.8", driver="520.61.05")), []))
    cases.append((runtime_diagnose(cuda_probe(cuda="12.5", gpus=1), gpu_host(cuda="12.2")), []))
    cases.append((runtime_diagnose(cuda_probe(gpus=1, ccs=["sm_70", "compute_70"]),
                                   gpu_host("6.1")), []))
    cases.append((runtime_diagnose(cuda_probe(gpus=1, ccs=["sm_80", "compute_80"]),
                                   gpu_host("9.0")), []))
    for libs in ([], [{"name": "libcudart.so.12", "path": "/v/libcudart.so.12", "origin": "pip"}],
                 [{"name": "libcudart.so.12", "path": "/v/libcudart.so.12", "origin": "pip"},
                  {"name": "libcuda.so.1", "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                   "origin": "system"}]):
        for wsl in (False, True):
            cases.append((runtime_diagnose(cuda_probe(gpus=0, libraries=libs),
                                           gpu_host(wsl=wsl), expect="cuda"), []))
    probe = cuda_probe(gpus=1)
    probe["ops"] = [{"device": "/device:CPU:0", "ok": False, "value": 3.0, "expected": 1.0},
                    {"device": "/device:GPU:0", "ok": False,
                     "error": "InternalError: CUDA_ERROR_INVALID_PTX"}]
    cases.append((runtime_diagnose(probe, gpu_host(), expect="cuda"), []))
    error = "ModuleNotFoundError: No module named 'tensorflow'"  # Python's words, quoted
    cases.append((runtime_diagnose({"stage": "done", "tensorflow": None, "import_error": error},
                                   None, python="/p/py"), [error]))
    cases.append(([probe_failure("crashed", {"how": "SIGSEGV", "stage": "import"}),
                   probe_failure("timeout", {"timeout": "2", "stage": "ops"})], []))
    for entry in real_logs.entries("runtime", holdout=False):  # programs' own output
        lines = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8").splitlines()
        for host in (None, gpu_host(), cpu_host()):
            cases.append((diagnose_log(lines, host), lines))
    for lines, _sig in sourced_gpu_runtime.RUNTIME:  # the tools' own texts, no corpus needed
        cases.append((diagnose_log(lines, None), lines))
    return cases


def test_every_runtime_diagnosis_is_shown_marked(pseudo_lang, kb):
    seen = set()
    for found, lines in runtime_cases():
        for d in found:
            seen.add(d.id)
            # TensorFlow's own log lines and the host's (detect's) message are quoted as is
            # (a wrapped line's first line without the prefix the matcher took off, "[1] ")
            logged = {line.strip() for line in lines} | {line_text(x).strip() for x in lines}
            own = [x for e in d.evidence for x in e.splitlines() if x.strip() not in logged]
            text = f"{d.title}\n{d.cause}\n{d.next_step}\n" + "\n".join(own)
            assert unmarked(text, allow=(*lines, "no NVIDIA GPU detected")) == [], d.id
            assert d.title.startswith("⟦") and d.cause.startswith("⟦"), d.id
    assert seen == set(load_rules(kb)), set(load_rules(kb)) - seen


def test_a_wrong_result_is_said_in_the_current_language(pseudo_lang):
    probe = cuda_probe(gpus=0)
    probe["ops"] = [{"device": "/device:CPU:0", "ok": False, "value": 3.0, "expected": 1.0,
                     "error": "wrong result: 3.0, expected 1.0"}]  # probe_tf.py's English
    d = next(d for d in runtime_diagnose(probe, cpu_host()) if d.id == "cpu-op-failed")
    assert "⟦wrong result: 3.0, expected 1.0⟧" in d.cause
    assert d.evidence == ["⟦wrong result: 3.0, expected 1.0⟧"]


# -- the verify report -------------------------------------------------------------------------


def fake_python(tmp_path: Path, body: str) -> Path:
    """An executable that stands in for the target interpreter (sys.argv[2] is OUT_DIR)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "python"
    path.write_text(f"#!{sys.executable}\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def gpu_wheel_python(tmp_path: Path) -> tuple[Path, list[str]]:
    """A "python" whose TensorFlow is a CUDA wheel that found the GPU but could not use it:
    what probe_tf.py would file on a machine with a mismatched driver (none here)."""
    lines = log("dso_mismatch.log") + log("ptx_jit.log")
    data = cuda_probe(lines=lines, gpus=1, ccs=["sm_80", "compute_80"])
    data["python"] = {"executable": "/v/bin/python", "version": "3.11.9"}
    data["tensorflow"] = {"version": "2.16.1", "path": "/v/lib/tensorflow"}
    data["gpu_details"] = [{"name": "/physical_device:GPU:0", "device_name": "RTX 3090",
                            "compute_capability": "8.6"}]
    data["ops"] = [{"device": "/device:CPU:0", "ok": True, "value": 1.0, "expected": 1.0},
                   {"device": "/device:GPU:0", "ok": False, "value": 5.0, "expected": 1.0}]
    data["matmul"] = [{"device": "/device:CPU:0", "n": 512, "ms": 2.5, "gflops": 107.4},
                      {"device": "/device:GPU:0", "n": 512, "error": "InternalError: boom"}]
    data["libraries"] = [{"name": "libcudart.so.12", "origin": "pip",
                          "path": "/v/nvidia/cuda_runtime/lib/libcudart.so.12"},
                         {"name": "libcuda.so.1", "origin": "system",
                          "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}]
    body = ("import json, os, sys\n"
            f"data = json.loads({json.dumps(json.dumps(data))})\n"
            "out = sys.argv[2]\n"
            "json.dump(data, open(os.path.join(out, 'result.json'), 'w'))\n")
    return fake_python(tmp_path, body), lines


def host_file(tmp_path: Path, host: HostProfile) -> Path:
    path = tmp_path / "host.json"
    path.write_text(host.to_json(), encoding="utf-8")
    return path


def quoted(lines: list[str]) -> tuple[str, ...]:
    """TensorFlow's log lines as the report quotes them (whole, or cut after 200 characters)."""
    return (*lines, *(line[:200] for line in lines))


def report_lines(text: str) -> str:
    """The report without the TensorFlow log it quotes (`  | ...`)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("  | "))


def test_verify_reports_are_marked(pseudo_lang, tmp_path):
    python, lines = gpu_wheel_python(tmp_path / "gpu")
    report = verify(python, expect="cuda", host=gpu_host("9.0"), timeout=60,
                    recipe=None)
    assert {"dso-mismatch", "ptx-jit", "gpu-op-failed"} <= {d.id for d in report.diagnoses}
    text = render_report(report)
    assert "⟦RESULT: FAILED, see the checks and diagnosis above.⟧" in text
    # ⟦[FAIL] {check}: {detail}⟧ filled in, the wrong value said by verify, not the probe
    assert ("⟦[FAIL] ⟦GPU op on every GPU⟧: /device:GPU:0: ⟦wrong result: 5.0, expected 1.0⟧⟧"
            in text)
    assert unmarked(text, allow=quoted(lines)) == []
    # a probe that crashes, hangs, exits with an error, or never starts
    crash = fake_python(tmp_path / "crash", "import os, signal\nos.kill(os.getpid(), "
                        "signal.SIGSEGV)")
    silent = fake_python(tmp_path / "silent", "import sys\nprint('no probe here')\nsys.exit(3)")
    hang = fake_python(tmp_path / "hang", "import time\ntime.sleep(120)")
    for py, timeout in ((crash, 30), (silent, 30), (hang, 2),
                        (tmp_path / "nope" / "python", 5)):
        report = verify(py, expect="cpu", host=cpu_host(), timeout=timeout)
        assert not report.ok
        text = render_report(report)
        assert unmarked(text, allow=("no probe here",)) == [], report.probe.status


def test_cli_verify_is_marked_and_chinese(tmp_path):
    python, lines = gpu_wheel_python(tmp_path)
    host = host_file(tmp_path, HostProfile.load(HOSTS / "laptop-rtx3060-550.json"))
    argv = ["verify", "--python", str(python), "--expect", "cuda", "--host", str(host)]
    status, out, err = capture(argv, env_in("pseudo"))
    assert status == ExitStatus.ERROR, out + err
    assert "⟦Diagnosis:⟧" in out
    assert unmarked(report_lines(out), allow=quoted(lines)) == []
    status, out, err = capture(argv, env_in("zh_CN"))
    assert status == ExitStatus.ERROR, out + err
    assert "结果：失败，请查看上方的检查项和诊断。" in out
    assert "[失败] 每个 GPU 上的运算：/device:GPU:0: 结果错误" in out and "诊断：" in out
    # a runtime diagnosis from runtime.toml, its placeholders filled in
    assert "已加载的 libcuda（用户态驱动 515.105.1）" in out
    assert "  构建" in out and "cuda 构建（is_built_with_cuda = True）" in out


def test_verify_report_in_chinese(zh_cn_lang, tmp_path):
    python, _lines = gpu_wheel_python(tmp_path)
    text = render_report(verify(python, expect="cuda", host=gpu_host("9.0"), timeout=60))
    assert "/device:GPU:0: 结果错误：5.0，应为 1.0" in text
    assert "没有适用于此 GPU 计算能力的内核：TensorFlow 会对 PTX 进行 JIT 编译" in text
    # the labels stay aligned with two-column Chinese characters
    devices = next(line for line in text.splitlines() if line.startswith("  设备"))
    label = devices[:devices.index("/physical_device")]
    assert sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in label) == 17


@pytest.mark.slow
def test_real_tensorflow_cpu_report_is_marked(tf_python, tmp_path):
    host = host_file(tmp_path, cpu_host())
    status, out, err = capture(["verify", "--python", str(tf_python), "--expect", "cuda",
                                "--host", str(host)], env_in("pseudo"))
    assert status == ExitStatus.ERROR, out + err
    assert "⟦[FAIL] ⟦GPU visible⟧: ⟦no GPU device⟧⟧" in out
    assert unmarked(report_lines(out), allow=("no NVIDIA GPU detected",)) == []
