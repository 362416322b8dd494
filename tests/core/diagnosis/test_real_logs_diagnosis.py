"""The diagnosis on real logs (tests/data/real-logs): right first cause, no false
positives, and the streaming fast path equal to the plain per-line reference.

Only the tuning excerpts' diagnoses are checked here: the held-out third is for measuring,
once, signatures written without it (`bench/diagnosis.py` prints tuning and holdout apart,
the CHANGELOG the figures). Negatives are the exception: no excerpt where nothing applies,
held out or not, may get a diagnosis. The matcher's mechanics (the fast path is the
per-line reference) are checked on every excerpt.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from tests.core.diagnosis import real_logs
from tfwizard.core.diagnosis import logscan, paste
from tfwizard.core.diagnosis.build import (
    diagnose,
    diagnose_file,
    diagnose_stream,
    load_failures,
    matcher_for,
)
from tfwizard.core.diagnosis.linetext import line_text
from tfwizard.core.diagnosis.literals import line_pattern
from tfwizard.core.diagnosis.logscan import (
    WRAP_LINES,
    WRAP_MIN,
    LineHit,
    LineMatcher,
    Prefilter,
    ScanResult,
    _wrapped_match,
    read_lines,
    split_lines,
)
from tfwizard.core.diagnosis.runtime import diagnose_log, load_rules, log_matcher

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "data" / "logs"
RUNTIME = ROOT / "tests" / "data" / "runtime"
#: of the tuning excerpts of the rounds before LATEST, per kind: a guard against a rule that
#: breaks what was right, not a target. The untargeted rounds from LATEST on add excerpts
#: nothing was written for (rounds 37, 38 and 39: tuning build 4 of 9, 6 of 13 and 3 of 4
#: before any rule); they are measured by bench/diagnosis.py, not held to this line,
#: because rules written to win them back fit the tuning part: in session 21 generic ones
#: that gained 9 tuning excerpts without a false positive gave the held-out third 3 more
#: right and 15 more false positives (corpus README, round 37)
MINIMUM = 0.95
LATEST = 37
#: the excerpts the tests may diagnose: the tuning ones (see the module docstring)
TUNING = real_logs.entries(holdout=False)

#: ids reported besides the expected cause that the excerpt does show (not false positives)
ALSO = {
    # round 24: a compiler too new or too old whose compile did fail (which compiler was
    # meant is not in the log: misses, not false positives); Bazel 0.19's apple_cc_toolchain finding no
    # toolchain for 'darwin' (fixed with an older Bazel; the line is the toolchain's); a
    # server that died with code 14 and an empty jvm.out, as a server killed for memory
    # does (the thread confirmed no cause)
    "build/compile-upb-clang19-jax-env-only.log": {"compile-error"},
    "build/compiler-too-old-gcc47-names-constructor-array-slice-tf05.log": {"compile-error"},
    "build/toolchain-no-cpu-darwin-apple-cc-toolchain-bazel019-tf113.log":
        {"cc-toolchain-unresolved"},
    "build/server-terminated-abruptly-error-code-14-empty-jvm-out.log": {"bazel-server-oom"},
    # the compile did fail; which compiler the configuration meant to run is not in the log
    "build/envoy-config-clang-but-gcc-compiles-rhel8.log": {"compile-error"},
    # round 16: Bazel 0.19.1's toolchain-identifier regression, which only the version tells
    # (the build failed, nothing more specific is said); cuBLAS symbols an old CUDA 9.1
    # lacks (the link did fail; which toolkit was installed is not in the log)
    "build/toolchain-identifier-local-not-found-clang-crosstool-bazel-0191.log": {"build-failed"},
    "build/undefined-reference-cublasgemmstridedbatchedex-cuda-9-1-tf114.log": {"link-error"},
    "runtime/cudnn-805-vs-860-conv1d-tf212.log": {"dnn-library-not-found"},  # the symptom
    "runtime/cudnn-840-vs-860-dnn-not-found-tf212.log": {"dnn-library-not-found"},
    "runtime/cudnn-runtime-7103-compiled-7005-conda-env-voxelnet-tf141.log":
        {"dnn-library-not-found"},  # round 17: TF 1.x's conv CHECK after the mismatch
    "runtime/mbnet-cudnn-7605-vs-7005-conv-check-abort-zh-locale.log":
        {"dnn-library-not-found"},  # round 36: the same CHECK after the mismatch
    # XLA's ptxas fell back to the driver, whose PTX load then failed (listed after it)
    "runtime/jax-ptxas-no-cc89-invalid-image-rtx40.log": {"cc-not-in-build"},
    # libcudart is missing too, besides the cause the excerpt is labelled with
    "runtime/dlopen-cuda100-set-missing-tf1.log": {"cudart-not-found"},
    "runtime/libcuda-missing-303-wsl2-pip-tf24.log": {"cudart-not-found"},
    "runtime/tf22-cuda101-libs-missing-titanxp-nvvl.log": {"cudart-not-found"},
    "runtime/windows-cudart64-101-cublas64-10-cufft64-10-not-found-tf210rc0.log":
        {"cudart-not-found"},
    # cublas64_10.dll fails to load too: several libraries, the corpus's dlopen-failed
    # convention; the excerpt is labelled after its cudart line (counted as not right)
    "runtime/cudart64-101-dll-windows-tf22.log": {"dlopen-failed"},
    # the message alone says the config is undefined; the thread, that Bazel 0.19 no longer
    # read tools/bazel.rc (one of the causes that signature names): counted as not right
    "build/serving-config-value-cuda-not-defined-bazel-019.log": {"bazel-config-undefined"},
    # round 17: cuDNN did not start (cudaErrorSymbolNotFound before its handle); the thread
    # put it down to a host driver older than the container's CUDA, which the driver's
    # version tells (verify's check), not the lines: counted as not right
    "runtime/af3-singularity-cudnn-handle-symbol-not-found-driver.log": {"cudnn-handle-failed"},
    # round 18: cl.exe did fail; that it was MSVC 2015 shows only in the include path
    "build/msvc-2015-llvm-mc-cl-exe-failed-vs14-include-tf115-toco.log": {"compile-error"},
    # round 19: a protobuf rule's output not created under a newer Bazel; only the version
    # tells (the build failed, nothing more specific is said)
    "build/endpoint-pb2-output-not-created-tensorflow-io-081-newer-bazel.log": {"build-failed"},
    # round 26: TensorFlow 1.x's `Config value opt` under a Bazel that no longer reads
    # tools/bazel.rc (labelled an undefined config; configure writes opt too); a jax CUDA
    # plugin whose initialize() fails against another jaxlib's API (labelled the plugin's
    # failure; the version mismatch its note describes is what the diagnosis names): both
    # counted as not right
    "build/tensorflow-lite-toco-config-opt-undefined-tools-bazel-rc-not-read.log":
        {"configure-not-run"},
    "runtime/jax-cuda12-plugin-initialize-typeerror-register-custom-call-target-spyx.log":
        {"jaxlib-version-mismatch"},
    # round 27: TensorFlow's rules asking for a repository feature the consuming project's
    # .bazelrc does not enable (labelled a failed build: "none fits"; the diagnosis names
    # the flag the Bazel of its time needed); "no kernel image" under a driver older than
    # the CUDA 11.6 ptxas XLA used (labelled ptxas-newer-than-driver, the thread's fix; the
    # line is the compute capability's): both counted as not right
    "build/mediapipe-external-dep-remotable-experimental-missing-repo-remote-exec-flag.log":
        {"bazel-version-mismatch"},
    "runtime/jax-0-3-16-no-kernel-image-available-driver-470-cuda-11-6-toolkit.log":
        {"cc-not-in-build"},
    # round 28: Docker's warning of an amd64 image on an arm64 host, then Bazel's output
    # root refused (the image ran emulated; the warning alone is the same in a run that
    # fails for the architecture): counted as not right
    "build/bazel-output-user-root-mkdir-permission-denied-amd64-image-on-arm64-host-docker.log":
        {"container-image-wrong-arch"},
    # round 37: Spack's compiler wrapper putting another package's headers first (the
    # thread's suspicion; the compile did fail, the wrapper is not in the log)
    "build/r37-mirror-of-bazelbuild-bazel-10437-tf-2.log": {"compile-error"},
    # Keras 3.6 over TensorFlow 2.4.1 (labelled Keras 3 over an old TensorFlow): since
    # session 21 its "No module named 'tensorflow.python.trackable'" reads as the more
    # general Keras newer than the TensorFlow (Keras 2.11-2.15 say it too): counted as not
    # right
    "runtime/keras36-over-tf241-no-module-tensorflow-python-trackable.log":
        {"keras-newer-than-tf"},
    # round 38: the compile's lines cut from the post, Bazel's summary left (a failed build,
    # labelled the failed compile); TensorFlow's genrule failing with exit 127, which
    # python-not-on-path reads as no python (its inference; here bash names no command and
    # the thread does not say which: labelled a failed build); an add-on importing Keras 2's
    # keras.engine under a newer Keras (the import did fail; labelled the add-on's
    # mismatch); XLA's warning for ptxas before 11.1, labelled the known-bad release here and
    # ptxas-too-old in an older thread (ptxas-110-older-than-111-kaggle-flax): all counted
    # as not right
    "build/r38-tensorflow-text-2-17-0-source-build.log": {"build-failed"},
    "build/r38-building-the-tflite-select-tf-ops-aar.log": {"python-not-on-path"},
    "runtime/r38-importing-itex-fails-because-its-layer-norm.log": {"import-failed"},
    "runtime/r38-user-keeps-getting-ptxas-11-0-warnings.log": {"ptxas-too-old"},
    # round 39: two imports of a Keras module that failed (labelled Keras 2 code on Keras 3,
    # and a KerasCV newer than its TensorFlow; the lines alone do not say which); jax's CUDA
    # plugin failing on "Unable to load cuSPARSE" (labelled the plugin; one library that
    # failed to load is dlopen-failed by the round-5 convention); libcuda.so.1 missing at
    # import (labelled a CUDA library missing at import; two older tuning threads label it
    # libcuda-not-found): all counted as not right
    "runtime/r39-tfp-import-colab-keras3-without-tf-keras.log": {"import-failed"},
    "runtime/r39-keras-cv-import-colab-tensorflow-older-than-29.log": {"import-failed"},
    "runtime/r39-mjx-jax-cuda12-plugin-cusparse-not-loaded.log": {"dlopen-failed"},
    "runtime/r39-nni-docker-trial-import-libcuda-so-1-missing.log": {"libcuda-not-found"},
}
#: the hand-written logs of the other tests: what each must give, in order
EXPECTED_LOGS = {
    "fixture-break.log.txt": ["compile-error"],
    "fixture-cached.log.txt": [],
    "fixture-cold.log.txt": [],
    "remote-cache-http10.log.txt": ["remote-cache-unusable"],  # a warning the build went past
}
EXPECTED_RUNTIME = {
    "cc_below_minimum.log": ["cc-below-minimum"],
    "cudart_not_found.log": ["cudart-not-found"],
    "dlopen_failed.log": ["dlopen-failed"],
    "dlopen_failed_unnamed.log": ["dlopen-failed"],
    "dso_mismatch.log": ["compat-not-supported", "dso-mismatch"],
    "ptx_jit.log": ["ptx-jit"],
    "ptx_jit_suffix.log": ["ptx-jit"],
    "ptxas_older_driver.log": ["ptxas-newer-than-driver"],
    "version_mismatch.log": ["cudnn-mismatch", "driver-insufficient"],
}


def false_positives(entry: dict, ids: list[str]) -> list[str]:
    """The ids reported on an excerpt where they do not apply (see the module docstring)."""
    generic = {s.id for s in load_failures() if s.generic}
    cause = entry["cause"]
    if cause == real_logs.NONE:
        bad = ids
    elif cause == "build-failed":
        bad = [i for i in ids if i not in generic and i not in ALSO.get(entry["file"], set())]
    else:
        bad = [i for i in ids if i != cause and i not in ALSO.get(entry["file"], set())]
    return [f"{entry['file']}: {i}" for i in bad]


@pytest.fixture(scope="module")
def results() -> list[tuple[dict, list[str]]]:
    return [(entry, real_logs.diagnosed_ids(entry)) for entry in TUNING]


@pytest.mark.parametrize("kind", real_logs.KINDS)
def test_at_least_95_percent_of_the_tuning_excerpts_get_the_right_first_cause(results, kind):
    rows = [(e, ids) for e, ids in results
            if e["kind"] == kind and e.get("round", 0) < LATEST]
    wrong = [f"{e['file']}: want {e['cause']}, got {ids}" for e, ids in rows
             if real_logs.first_cause(ids) != e["cause"]]
    assert len(rows) >= 90
    assert 1 - len(wrong) / len(rows) >= MINIMUM, "\n".join(wrong)


@pytest.mark.parametrize("prefix", ["(02:13:50) ", "[2024-05-01T12:00:00.123Z] ",
                                    "tensorflow-build-1  | ",
                                    "2024-05-01T12:00:00.123456789Z stderr F ",
                                    "[pod/tf-build-7d9f5/bazel] ",
                                    "Dec  1 12:00:00 build-host bazel[1234]: ", "##[error]"])
def test_the_same_excerpts_behind_a_ci_prefix_give_the_same_first_cause(results, prefix):
    """Bazel's --show_timestamps, Jenkins' timestamper, Docker Compose, a container
    runtime's log file, kubectl's --prefix, syslog and GitHub's annotations put their
    prefix before a line: what was recognised still is (a pattern anchored at ^ included)."""
    changed = []
    for entry, ids in results:
        if entry["kind"] != "build" or real_logs.first_cause(ids) != entry["cause"]:
            continue
        text = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8")
        data = "".join(prefix + line + "\n" for line in text.splitlines()).encode()
        got = [d.id for d in diagnose_stream(io.BytesIO(data))]
        if real_logs.first_cause(got) != entry["cause"]:
            changed.append(f"{entry['file']}: {ids} -> {got}")
    assert changed == []


@pytest.mark.parametrize("kind", real_logs.KINDS)
def test_most_excerpts_a_console_cut_at_80_columns_give_the_same_first_cause(results, kind):
    """A terminal cuts a long line where its width ends, mid-word, and a paste keeps the
    cut: of the tuning excerpts recognised right, at least 90 % still are with every line
    cut at 80 columns (before cut lines were joined: build 480/553, runtime 279/331)."""
    right = changed = 0
    for entry, ids in results:
        if (entry["kind"] != kind or entry["cause"] == real_logs.NONE
                or real_logs.first_cause(ids) != entry["cause"]):
            continue
        text = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8")
        cut = [line[i:i + 80] for line in text.splitlines() for i in range(0, len(line) or 1, 80)]
        data = io.BytesIO("".join(x + "\n" for x in cut).encode())
        got = [d.id for d in (diagnose_stream(data) if kind == "build" else diagnose_log(data))]
        right += 1
        changed += real_logs.first_cause(got) != entry["cause"]
    assert right > 300
    assert changed / right <= 0.10, (changed, right)


def test_no_false_positives_on_the_tuning_excerpts(results):
    """(The negatives only a machine's facts tell apart are tested below, with the facts.)"""
    bad = [fp for entry, ids in results for fp in false_positives(entry, ids)
           if AMBIGUOUS_WITHOUT_FACTS.get(entry["file"]) != ids]
    assert bad == []
    # every "also" of a tuning excerpt is still reported: the list stays true
    reported = {e["file"]: set(ids) for e, ids in results}
    for name, also in ALSO.items():
        if name in reported:
            assert also <= reported[name], name


def test_no_false_positives_on_the_other_tests_logs():
    assert {p.name: [d.id for d in diagnose_file(p)]
            for p in sorted(LOGS.glob("*.log.txt"))} == EXPECTED_LOGS
    found = {}
    for path in sorted(RUNTIME.glob("*.log")):
        with path.open("rb") as fh:
            found[path.name] = [d.id for d in diagnose_log(fh)]
    assert found == EXPECTED_RUNTIME


#: negatives whose lines alone cannot be told from a failure, with the machine's facts that
#: tell them apart (bench/diagnosis.py still counts them as false positives). TensorFlow's
#: stub prints "Could not find cuda drivers on your machine" at INFO level on every start
#: without a GPU, and the same line is all a CUDA wheel without its libraries prints
#: (tuning excerpts cudart-stub-*): verify knows the machine and says "info" on a CPU-only
#: one (tests/core/verify/test_verify.py); a pasted log has no machine. Found by the
#: round-8 holdout run, after which it was left as it is rather than tuned away. The second
#: is a held-out build negative of round 11 (a GPU-less build machine's genrule loading
#: TensorFlow: "Could not load dynamic library 'libcudart.so.10.1'", then the stub's "Ignore
#: above cudart dlerror if you do not have a GPU"), shown by this test; left as it is too.
AMBIGUOUS_WITHOUT_FACTS = {
    "runtime/tf213-import-startup-no-cuda-drivers-cpu-feature-trt.log": ["cudart-not-found"],
    "build/negative-spack-tf210-api-gen-cudart-dlerror-then-up-to-date.log": ["cudart-not-found"],
    # TensorFlow's stub in a CPU-only image (round 15), like the first
    "runtime/deepvariant-cpu-image-could-not-find-cuda-drivers-make-examples.log":
        ["cudart-not-found"],
    "runtime/benign-cudart-dlerror-stub-hint-cpu-only-aizynthcli-batch.log": ["cudart-not-found"],
    # jax's CUDA plugin on a node without a GPU, where the CPU run was meant (round 14)
    "runtime/negative-jax-cuda12-plugin-cuinit-no-device-on-cpu-node-acm.log": ["cuinit-no-device"],
    # the same on a CPU job, and TensorFlow's stub before another failure, both held out
    # (round 16): shown by the test below, listed as they are
    "runtime/benign-cuinit-no-device-cpu-job-genomad-nn-classification-tf213.log":
        ["cuinit-no-device"],
    "runtime/benign-cudart-dlerror-then-absl-flags-parsing-error-alphapulldown.log":
        ["cudart-not-found"],
    # round 17: the Windows cudart DLL's warning in a run that worked, like the others
    "runtime/cudart64-110-dll-warning-runs-fine-lightweight-mmm.log": ["cudart-not-found"],
    # round 19: the same at the start of a CPU-only DeepVariant run
    "runtime/deepvariant-1-8-cpu-only-host-cudart-tensorrt-dlerror-startup.log":
        ["cudart-not-found"],
    # round 27: the Windows cudart DLL's warning with no CUDA installed, CPU wanted
    "runtime/negative-tensorflow-2-windows-cudart64-101-dll-not-found-no-cuda-installed.log":
        ["cudart-not-found"],
    # round 38: TensorFlow's cuInit 303 and "kernel driver does not appear to be running"
    # on an Intel machine with no NVIDIA GPU (Intel's extension; harmless, its maintainer says)
    "runtime/r38-intel-maintainer-the-cuinit-nvidia-driver-messages.log": ["libcuda-not-found"],
    # round 39, held out: TensorFlow's cudart dlerror at the start of a tf2onnx conversion on
    # a CPU-only machine, and XLA's cuInit 303 on a TPU host (MaxText)
    "runtime/r39-tf2onnx-cpu-cudart-dlerror-before-convert-failure.log": ["cudart-not-found"],
    "runtime/r39-maxtext-tpu-cuinit-303-harmless.log": ["libcuda-not-found"],
}
#: negatives whose build-log lines name a failure the build then got past: Bazel's warning
#: for a mirror it could not reach before it fetched from the next URL. Only the build's
#: outcome tells them apart from a build that failed there (an excerpt that stops at the
#: warning is one, in two held-out positives); the bench counts them as false positives.
RECOVERED_WITHOUT_OUTCOME = {
    "build/benign-jdk-ppc64le-mirror-typo-unknown-host-warning-bazel-33.log": ["download-failed"],
    # round 22, held out: the same warning for a mistyped mirror host (shown by the test
    # below, listed as it is)
    "build/warning-unknown-host-mirror-bazel-com-typo-recovered.log": ["download-failed"],
}


def test_a_harmless_line_of_every_kind_stays_quiet():
    """Excerpts where nothing applies exist in both kinds and give nothing in either (all
    of them, the held-out ones too: a false positive is never allowed, save the listed
    lines that only the machine's facts can tell apart)."""
    for entry in real_logs.entries():
        if entry["cause"] == real_logs.NONE:
            for kind in real_logs.KINDS:
                want = (AMBIGUOUS_WITHOUT_FACTS if kind == "runtime"
                        else RECOVERED_WITHOUT_OUTCOME).get(entry["file"], [])
                assert real_logs.diagnosed_ids(entry, kind=kind) == want, (entry["file"], kind)


def test_an_ambiguous_negative_is_info_on_a_machine_without_gpu():
    from tfwizard.core.diagnosis.runtime import diagnose_log
    from tfwizard.core.host import HostProfile

    host = HostProfile.load(ROOT / "tests" / "data" / "hosts" / "no-gpu-server.json")
    for name in AMBIGUOUS_WITHOUT_FACTS:
        with (real_logs.CORPUS / name).open("rb") as fh:
            found = diagnose_log(fh, host=host)
        assert {d.severity for d in found} == {"info"}, name


# -- the fast path is the per-line definition ------------------------------------------------


def _matchers() -> list[LineMatcher]:
    from tfwizard.core.diagnosis.unrecognised import _scanner

    return [matcher_for(load_failures()), log_matcher(), _scanner().matcher]


def naive_scan(matcher: LineMatcher, lines: list[str]) -> ScanResult:
    """The definition spelled out: every line, every key, its patterns in order (no
    literal tests at all); a wrap-tolerant pattern also tried on the line joined with the
    next WRAP_LINES lines when its lead is in the line, or, on a line of WRAP_MIN
    characters or more, with the next ones that continue it (each after one of WRAP_MIN or
    more, none starting with a space), a match starting in the line and ending past it (the
    line before joined before it, to look back at, when this one may continue it); a key's
    context lines are the next ones after its evidence's last line, blank and
    progress lines counted but not kept; a small log is read without its common
    indentation, and one a console cut at its width with its cut lines joined back as
    well (paste.py)."""
    def text_of(raw: str) -> str:  # the channel tag, ANSI codes and CI prefixes taken off
        return line_text(raw, untag_lines=matcher.untag_lines)

    def progress(text: str) -> bool:
        return matcher.skip_progress and re.match(r"\[[\d,]+ / [\d,]+\] ", text) is not None

    def first_hit(key: str, group: list, text: str, after_at: int, cut: list[str],
                  continues: str) -> tuple[tuple[str, dict[str, str]], int] | None:
        """The key's first pattern matching `text` (the lines after it start at index
        after_at), and the index after its evidence's last line."""
        rest = [text_of(x) for x in lines[after_at:after_at + WRAP_LINES]]
        for p in group:
            m = p.regex.search(text) or p.regex.search(text.rstrip())  # trailing blanks
            hit = (text.strip(), {k: v for k, v in m.groupdict().items() if v is not None}
                   ) if m else None
            lead = p.lead is not None and p.lead in text
            pieces = rest if lead else cut if len(text) >= WRAP_MIN else []
            if hit is None and p.wraps and pieces:
                hit = _wrapped_match(p, text, pieces, "" if lead else continues)
            if hit is not None:
                return hit, after_at + hit[0].count("\n")
        return None

    # a paste a console cut at its width: each cut line joined back is tried too, at its
    # first piece, and a key it matches is taken from it, quoted as its pieces; a later
    # piece cut inside a word keeps only the keys its whole line matched
    head, rest, runs = paste.split(lines, logscan.SMALL_LOG)
    lines = head + list(rest)  # a small one without its common indentation
    inside = {k: first for first, run in runs.items() for k in run.inside}
    joined_keys: dict[int, set[str]] = {}
    result = ScanResult(lines=len(lines))
    for number, raw in enumerate(lines, start=1):
        text = text_of(raw)
        if progress(text):
            continue
        rest = [text_of(x) for x in lines[number:number + WRAP_LINES]]
        before = text_of(lines[number - 2]) if number > 1 else ""
        continues = before if len(before) >= WRAP_MIN and text[:1].strip() else ""
        cut: list[str] = []  # the lines continuing a long one
        for piece, after in zip([text, *rest], rest, strict=False):
            if len(piece) < WRAP_MIN or not after or after[0].isspace():
                break
            cut.append(after)
        for key, group in matcher.groups:
            found = None
            if number in runs:
                joined, last = runs[number].text, runs[number].last
                found = first_hit(key, group, text_of(joined), last, [], "")
                if found is not None:
                    joined_keys.setdefault(number, set()).add(key)
                    shown = "\n".join(x.strip() for x in lines[number - 1:last])
                    found = (shown, found[0][1]), found[1]
            if found is None:
                found = first_hit(key, group, text, number, cut, continues)
            if number in inside and key not in joined_keys.get(inside[number], set()):
                found = None
            if found is not None:
                hit, first = found
                after = [text_of(x) for x in lines[first:first + matcher.context.get(key, 0)]]
                context = tuple(t.strip() for t in after if t.strip() and not progress(t))
                hits = result.hits.setdefault(key, [])
                if len(hits) < matcher.max_hits:
                    hits.append(LineHit(number, *hit, context))
                elif key in matcher.keep_last:  # the last ones, not the first
                    del hits[0]
                    hits.append(LineHit(number, *hit, context))
    return result


def test_the_reference_is_the_naive_definition():
    # every excerpt, held out too: this is the matcher's mechanics, not its rules' results
    for matcher in _matchers():
        for path in _corpus_paths():
            lines = read_lines(path)
            assert matcher.scan_lines(lines) == naive_scan(matcher, lines), path


def _corpus_paths() -> list[Path]:
    paths = [real_logs.CORPUS / e["file"] for e in real_logs.entries()]
    return paths + sorted(LOGS.glob("*.log.txt")) + sorted(RUNTIME.glob("*.log"))


def test_the_fast_path_equals_the_reference_on_every_excerpt():
    """Each excerpt as the product reads it: a small log, every line checked."""
    for matcher in _matchers():
        for path in _corpus_paths():
            with path.open("rb") as fh:
                assert matcher.scan_stream(fh) == matcher.scan_lines(read_lines(path)), path


@pytest.mark.parametrize("chunk", [7, 1000, 1 << 20])
def test_the_prefilter_path_equals_the_reference(chunk, monkeypatch):
    """The excerpts in batches of 48, each batch one log, through the prefilter. Chunks as
    small as 7 bytes put chunk ends everywhere: inside lines, inside wrapped runs of lines,
    between a line and its newline. (Building the prefilter from a log's start is most of
    this test's time, about 0.1 s a log: batches of 16 took 70 s for the three chunk sizes,
    48 take 30 s.)"""
    monkeypatch.setattr(logscan, "SMALL_LOG", 0)
    paths = _corpus_paths()
    batches = [b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in paths[i:i + 48])
               for i in range(0, len(paths), 48)]
    for matcher in _matchers():
        for number, batch in enumerate(batches):
            # (through the prefilter a line a console cut is not joined: it cannot see a
            # literal cut in two)
            reference = matcher.scan_lines(split_lines(batch), cut_lines=False)
            assert matcher.scan_stream(io.BytesIO(batch), chunk_size=chunk) == reference, number


@pytest.mark.parametrize("small_log", [0, logscan.SMALL_LOG])
def test_the_fast_path_on_awkward_bytes(small_log, monkeypatch):
    """CRLF, a lone CR, bad UTF-8, no final newline, a wrapped message at the very end;
    through the prefilter and without it."""
    monkeypatch.setattr(logscan, "SMALL_LOG", small_log)
    text = (b"noise\r\nerr | gcc: internal compiler error: Killed (program cc1plus)\r\n"
            b"\xff\xfe broken No space left on device\nlone\rcr\n" + b"x" * 5000 + b"\n"
            b"The NVIDIA driver's CUDA version is 11.\n0 which is older than the ptxas "
            b"CUDA version (11.6.124). Because")
    for matcher in _matchers():
        lines = [raw.decode("utf-8", "replace").removesuffix("\r")
                 for raw in text.split(b"\n")]
        reference = matcher.scan_lines(lines)
        for chunk in (1, 3, 50, 1 << 16):
            assert matcher.scan_stream(io.BytesIO(text), chunk_size=chunk) == reference
        assert reference.lines == 7
    found = {h.line: h for hits in _matchers()[1].scan_lines(lines).hits.values()
             for h in hits}
    assert found[6].groups == {"driver": "11.0", "ptxas": "11.6.124"}


def test_context_lines_are_the_same_on_every_path():
    """A key's context lines (failures.toml's `context_lines`, issue 15) on the fast path
    equal the reference and the naive definition: across chunk ends, at the log's very end,
    overlapping (a match inside another's context), after a wrapped match, with blank and
    progress lines among them (counted, not kept)."""
    matcher = LineMatcher(
        [line_pattern("warn", r"^WARNING: (Reading from|Writing to) Remote Cache:"),
         line_pattern("wrap", r"The NVIDIA driver's CUDA version is (?P<driver>\d+\.\d+) which"),
         line_pattern("plain", r"bulk transfer")],
        untag_lines=True, skip_progress=True, context={"warn": 3, "wrap": 2})
    assert matcher.lookahead == WRAP_LINES + 3
    lines = ["err | WARNING: Reading from Remote Cache:",
             "err | HTTP version 1.1 is required, was: HTTP/1.0",
             "err | [5 / 30] Compiling a.cc; 0s remote-cache, processwrapper-sandbox",
             "",
             "err | WARNING: Writing to Remote Cache:",
             "err | WARNING: Writing to Remote Cache:",
             "err | 4 errors during bulk transfer",
             "noise",
             "The NVIDIA driver's CUDA version is 11.",
             "0 which is older than the ptxas",
             "after wrap one",
             "after wrap two",
             "after wrap three",
             "WARNING: Reading from Remote Cache:",
             "last words"]
    reference = matcher.scan_lines(lines)
    assert [(h.line, h.context) for h in reference.hits["warn"]] == [
        (1, ("HTTP version 1.1 is required, was: HTTP/1.0",)),
        (5, ("WARNING: Writing to Remote Cache:", "4 errors during bulk transfer", "noise")),
        (6, ("4 errors during bulk transfer", "noise", "The NVIDIA driver's CUDA version is 11.")),
        (14, ("last words",))]
    wrapped, = reference.hits["wrap"]
    assert (wrapped.line, wrapped.context) == (9, ("after wrap one", "after wrap two"))
    assert [h.context for h in reference.hits["plain"]] == [()]  # no context asked for
    assert naive_scan(matcher, lines) == reference
    for end in (b"\n", b""):  # the last line with and without its newline
        text = "\n".join(lines).encode() + end
        for chunk in (1, 2, 5, 7, 33, 1 << 16):
            assert matcher.scan_stream(io.BytesIO(text), chunk_size=chunk) == reference, chunk


def test_a_warning_keeps_its_words_and_hides_no_error_on_the_fast_path():
    """diagnose_file streams (logscan's fast path): the warning's context line is in its
    excerpt, and a generic error after it is still reported (a warning never hides it)."""
    lines = ["WARNING: Writing to Remote Cache:", "4 errors during bulk transfer",
             "ERROR: x.cc:1:1: Compiling x.cc failed: (Exit 1): gcc failed",
             "FAILED: Build did NOT complete successfully"]
    stream = diagnose_stream(io.BytesIO("\n".join(f"err | {x}" for x in lines).encode()))
    assert stream == diagnose(lines)
    assert [d.id for d in stream] == ["remote-cache-unusable", "compile-error"]
    assert stream[0].severity == "warning" and stream[0].excerpt == tuple(lines[:2])


def test_a_wrapped_line_is_found_and_quoted_whole():
    lines = ["2022-12-16 W nvptx_compiler.cc:497] The NVIDIA driver's CUDA version is 11.",
             "0 which is older than the ptxas CUDA version (11.6.124). Because the driver",
             "is older than the ptxas version, XLA is disabling parallel compilation"]
    d = diagnose_log(lines)[0]
    assert d.id == "ptxas-newer-than-driver" and d.lines == [1]
    assert "11.0" in d.cause and "11.6.124" in d.cause
    # the first two lines are as wide as each other and as the widest: a console cut them
    # there, and its third piece belongs to the same line (paste.py)
    assert d.evidence[0] == "\n".join(lines)
    # where no console width shows, the pattern's own words decide how far it runs on
    lines[1] += "."
    d = diagnose_log(lines)[0]
    assert d.id == "ptxas-newer-than-driver" and d.evidence[0] == "\n".join(lines[:2])


def test_without_its_literal_a_pattern_checks_every_line():
    """A pattern with no literal text (here: case-insensitive) makes the fast path check
    every line: slower, never different."""
    matcher = LineMatcher([line_pattern("x", r"(?i)killed"), line_pattern("y", "[0-9]+ MB")])
    assert matcher.every_line
    text = b"one\nKILLED here\n12 MB\n"
    assert matcher.scan_stream(io.BytesIO(text), chunk_size=4) == matcher.scan_lines(
        ["one", "KILLED here", "12 MB"])


# -- the catalogues stay fast and consistent -------------------------------------------------


def test_every_shipped_pattern_has_literal_text_for_the_fast_path():
    for matcher in _matchers():
        assert not matcher.every_line, [p.regex.pattern for p in matcher.patterns
                                        if p.anchors is None]
        # the prefilter built from an empty or a log-like sample covers every pattern
        for sample in (b"", (LOGS / "fixture-cold.log.txt").read_bytes()):
            prefilter = Prefilter(matcher.patterns, sample)
            assert prefilter.rare or prefilter.common


def test_secondary_and_required_ids_exist():
    failures = {s.id: s for s in load_failures()}
    for sig in failures.values():
        assert set(sig.secondary_to) <= set(failures), sig.id
    rules = load_rules()
    for rule in rules.values():
        assert set(rule.secondary_to) <= set(rules) | {"*"}, rule.id
        if rule.log_cause:
            assert rule.kind == "check" and rule.regexes, rule.id
