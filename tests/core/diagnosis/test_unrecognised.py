"""The fallback for a failure no rule knows (core/diagnosis/unrecognised.py): the log's root-cause
lines, who printed each, a search query; never a diagnosis. The build's own path too: a
failed build nothing explains ends with those lines as an event and in its record."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from tests.core.building.test_bundle import write_record
from tests.core.diagnosis import real_logs
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.diagnoses import build_diagnoses
from tfwizard.core.building.run.record import BuildRecord
from tfwizard.core.diagnosis.build import diagnose_stream, recognised
from tfwizard.core.diagnosis.text import unrecognised_block
from tfwizard.core.diagnosis.types import DiagnosisEvent, UnrecognisedEvent
from tfwizard.core.diagnosis.unrecognised import QUERY_WORDS, Unrecognised, root_lines, search_query
from tfwizard.core.recipe import parse_recipe

#: a failed build whose cause no signature knows, as log.txt holds it (channel tags)
BUILD_LOG = [
    "err | INFO: Analyzed target //tensorflow/tools/pip_package:wheel (433 packages loaded).",
    "err | [1,204 / 9,812] Compiling tensorflow/core/kernels/foo.cc; 12s local",
    "err | ERROR: /src/tensorflow/core/kernels/BUILD:4211:18: Compiling "
    "tensorflow/core/kernels/foo.cc failed: (Exit 1): gcc failed: error executing command",
    "err | tensorflow/core/kernels/foo.cc:87:5: error: 'FrobnicateKernel' was not declared "
    "in this scope",
    "err | tensorflow/core/kernels/foo.cc:90:1: error: expected '}' at end of input",
    "err | Target //tensorflow/tools/pip_package:wheel failed to build",
    "err | ERROR: Build did NOT complete successfully",
]
#: a program's output nothing known explains: start-up noise at E level, two exceptions
RUNTIME_LOG = [
    "2025-02-09 09:37:32.334610: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:"
    "9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN "
    "when one has already been registered",
    "Traceback (most recent call last):",
    '  File "train.py", line 12, in <module>',
    "ValueError: first exception, handled",
    "Traceback (most recent call last):",
    '  File "train.py", line 40, in <module>',
    "tensorflow.python.framework.errors_impl.UnknownError: Graph execution error: frob "
    "0x7f3a2c001e40 failed after 1234 steps in /home/me/run/ckpt-17",
]


def test_a_build_log_gives_the_compilers_first_error_and_bazels_first_error_line():
    unknown = root_lines(BUILD_LOG, "build")
    assert isinstance(unknown, Unrecognised) and unknown.kind == "build"
    assert [(r.line, r.speaker) for r in unknown.lines] == [(3, "bazel"), (4, "compiler")]
    assert unknown.lines[1].text.endswith("'FrobnicateKernel' was not declared in this scope")
    # the compiler's words are the query: no path, no line and column numbers
    assert unknown.query == "error FrobnicateKernel was not declared in this scope"
    # Bazel's summaries ("Build did NOT complete", "Target ... failed") are no root cause
    assert all("did NOT complete" not in r.text for r in unknown.lines)


def test_a_programs_output_gives_its_last_exception_and_skips_harmless_e_lines():
    unknown = root_lines(RUNTIME_LOG, "runtime")
    assert [(r.line, r.speaker) for r in unknown.lines] == [(7, "tf-runtime")]
    query = unknown.query
    assert query.startswith("tensorflow.python.framework.errors_impl.UnknownError Graph "
                            "execution error frob failed after steps in")
    assert "0x7f3a" not in query and "1234" not in query and "/home" not in query
    assert len(query.split()) <= QUERY_WORDS


def test_who_speaks_is_read_from_the_line():
    lines = ["I0000 00:00:1744708234.717753 1370911 cuda_dnn.cc:8579] Loaded cuDNN",
             "E0000 00:00:1744708234.717753 1370911 cuda_driver.cc:152] failed call to "
             "cuInit: CUDA_ERROR_UNKNOWN: unknown error",
             "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: something else",
             "Killed"]
    unknown = root_lines(lines, "runtime")
    assert [(r.line, r.speaker) for r in unknown.lines] == [
        (2, "cuda-runtime"), (3, "xla"), (4, "system")]
    assert unknown.query.startswith("failed call to cuInit CUDA_ERROR_UNKNOWN")
    java = root_lines(["java.lang.OutOfMemoryError: Java heap space"], "build")
    assert [r.speaker for r in java.lines] == ["bazel"]  # Bazel's server, not Python


def test_log_prefixes_do_not_hide_a_root_cause_line():
    lines = ["00:30:13 ERROR: /src/x/BUILD:3:1: Linking x failed: (Exit 1)",
             "[1,0]<stderr>:x.o: undefined reference to `frob()'",
             "1>c:\\src\\x.cc(12): fatal error C1083: Cannot open include file: 'frob.h'"]
    unknown = root_lines(lines, "build")
    assert [r.speaker for r in unknown.lines] == ["bazel", "linker", "compiler"]
    assert unknown.query == "fatal error Cannot open include file frob.h"


def test_nothing_that_looks_like_an_error_gives_no_lines_and_says_so():
    unknown = root_lines(["Epoch 1/10", "loss: 0.31 - accuracy: 0.91"], "runtime")
    assert unknown.lines == () and unknown.query == ""
    assert "no line of the log looks like an error" in "\n".join(unrecognised_block(unknown))


def test_with_no_error_at_all_the_warning_that_says_what_went_wrong_is_shown():
    """A program that ran on the CPU, or on a module built for another Python, says so only
    in a warning: the last resort shows it rather than nothing (its first such line)."""
    for warning in [
            "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 "
            "and rerun for more info.)",
            "/env/lib/python3.6/importlib/_bootstrap.py:219: RuntimeWarning: compiletime "
            "version 3.7 of module 'lapack' does not match runtime version 3.6",
            "GPU is NOT AVAILABLE"]:
        unknown = root_lines(["Epoch 1/10", warning, "loss: 0.31"], "runtime")
        assert [(r.text, r.speaker) for r in unknown.lines] == [(warning, "other")]


def test_it_is_never_a_diagnosis():
    unknown = root_lines(BUILD_LOG, "build")
    data = unknown.to_dict()
    assert data["recognised"] is False and unknown.recognised is False
    assert not {"id", "cause", "next_step", "recipe_fix", "severity"} & set(data)
    block = unrecognised_block(unknown)
    assert block[0].startswith("NOT RECOGNISED") and "not a diagnosis" in block[0]
    assert any("printed by the compiler" in line for line in block)
    assert block[-1] == "  search for: " + unknown.query


def test_the_stream_and_the_lines_agree_at_any_chunk_size():
    data = "\n".join(BUILD_LOG + RUNTIME_LOG).encode()
    by_lines = root_lines(data.decode().splitlines(), "build")
    from tfwizard.core.diagnosis.unrecognised import _scanner, from_scan

    scan = _scanner()
    for chunk in (5, 64, 1 << 16):
        result = scan.matcher.scan_stream(io.BytesIO(data), chunk_size=chunk)
        assert from_scan(result, "build", scan.speakers) == by_lines
    assert root_lines(io.BytesIO(data), "build") == by_lines


def test_search_query_keeps_names_and_drops_numbers_paths_hashes():
    assert search_query("ImportError: libcudart.so.11.0: cannot open shared object file: "
                        "No such file or directory") == (
        "ImportError libcudart.so cannot open shared object file No such file or directory")
    assert search_query("x.cc:46:22: error: ‘uint32_t’ was not declared in this scope") == (
        "error uint32_t was not declared in this scope")
    assert search_query("Checksum was 80685bf2fd46edc5c6f47b61ec9d747f2b17dec6a8c304eeeb196f8"
                        "d4bda68a5 but wanted 99c732b9") == "Checksum was but wanted"


def test_the_real_logs_no_signature_knows_get_root_cause_lines():
    """The corpus's tuning excerpts whose cause no specific signature knows (only the
    generic build-failed applies) are what the fallback is for: each gets a line (and
    none is recognised but those the diagnosis test lists as showing another id's evidence
    too, which it counts as misses). An excerpt cut to Bazel's summary, with no error line
    of any tool in it (round 38's XLA build), gets its last lines instead."""
    from tests.core.diagnosis.test_real_logs_diagnosis import ALSO

    unknown = [e for e in real_logs.entries("build", holdout=False)
               if e["cause"] == "build-failed"]
    assert unknown
    for entry in unknown:
        with (real_logs.CORPUS / entry["file"]).open("rb") as fh:
            found = diagnose_stream(fh)
        assert not recognised(found) or entry["file"] in ALSO, entry["file"]
        with (real_logs.CORPUS / entry["file"]).open("rb") as fh:
            shown = root_lines(fh, "build")
        if not shown.lines:
            text = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8")
            assert shown.tail and not re.search(r"(?i)error[: ]", text), entry["file"]


def _plan_and_recipe() -> tuple[object, str]:
    from tests.core.building.test_bundle import RECIPE

    return make_plan(parse_recipe(RECIPE, "r.toml"), uid=1000, gid=1000), RECIPE


def test_a_failed_build_nothing_explains_ends_with_its_root_cause_lines(tmp_path):
    record = BuildRecord(write_record(tmp_path, log_lines=BUILD_LOG))
    plan, recipe = _plan_and_recipe()
    events = build_diagnoses(record, 1, plan=plan, recipe_text=recipe, warnings_only=False)
    # the generic compile-error (a generic failed build adds nothing to it), then the
    # lines to read (no finding id)
    assert [e.type for e in events] == ["finding", "unrecognised"]
    unknown = events[-1]
    assert isinstance(unknown, UnrecognisedEvent) and unknown.recognised is False
    assert [line[:1] + line[2:] for line in unknown.lines] == [(3, "bazel"), (4, "compiler")]
    assert json.loads(json.dumps(unknown.to_dict()))["type"] == "unrecognised"
    logged = record.log_path.read_text()
    assert "NOT RECOGNISED: no known cause matches this log" in logged
    assert "search for: error FrobnicateKernel was not declared in this scope" in logged


def test_a_build_with_a_known_cause_or_that_succeeded_has_no_fallback(tmp_path):
    plan, recipe = _plan_and_recipe()
    known = BuildRecord(write_record(tmp_path / "a", log_lines=[
        *BUILD_LOG[:3], "err | gcc: fatal error: Killed signal terminated program cc1plus"]))
    events = build_diagnoses(known, 1, plan=plan, recipe_text=recipe, warnings_only=False)
    assert [type(e) for e in events] == [DiagnosisEvent]
    ok = BuildRecord(write_record(tmp_path / "b", log_lines=BUILD_LOG))
    assert build_diagnoses(ok, 0, plan=plan, recipe_text=recipe, warnings_only=True) == []


def test_the_speakers_of_the_catalogues_are_one_vocabulary():
    from tfwizard.core.diagnosis.build import load_failures
    from tfwizard.core.diagnosis.runtime import load_rules
    from tfwizard.core.vocab import SPEAKER_WORDS, SPEAKERS, speaker_word

    assert {s.speaker for s in load_failures()} <= set(SPEAKERS)
    assert {r.speaker for r in load_rules().values() if r.regexes} <= set(SPEAKERS)
    assert set(real_logs.SPEAKERS) == set(SPEAKERS)
    assert set(SPEAKER_WORDS) == set(SPEAKERS)  # every one has its words
    assert speaker_word("compiler") == "the compiler" and speaker_word("nobody") == "nobody"


def test_the_root_line_kinds_have_literals_for_the_fast_path():
    from tfwizard.core.diagnosis.unrecognised import _scanner

    assert not _scanner().matcher.every_line


def test_a_missing_log_is_an_error_not_a_fallback(tmp_path):
    from tfwizard.core.diagnosis.build import unrecognised_event

    try:
        unrecognised_event(Path(tmp_path / "none.log"))
    except OSError:
        return
    raise AssertionError("a missing log must raise")


def test_with_no_error_looking_line_its_last_lines_are_shown():
    """A program's output that stops without an error line (killed, cut short): the last
    lines that are not blank, with their numbers, the same from a stream (CRLF, no final
    newline, a long log read from its end) and from the lines; said as such, never as
    root-cause lines; in the JSON and in a build's event."""
    cases = [b"Epoch 1/10\nloss: 0.31\n\naccuracy: 0.91\n\n",
             b"start\r\nstep 1\r\nstep 2\r\nstep 3",
             b"step\n" * 40000 + b"Epoch 7/10\n"]
    wanted = [((1, "Epoch 1/10"), (2, "loss: 0.31"), (4, "accuracy: 0.91")),
              ((2, "step 1"), (3, "step 2"), (4, "step 3")),
              ((39999, "step"), (40000, "step"), (40001, "Epoch 7/10"))]
    for data, tail in zip(cases, wanted, strict=True):
        from_stream = root_lines(io.BytesIO(data), "runtime")
        assert from_stream.lines == () and from_stream.tail == tail
        text = data.decode().replace("\r\n", "\n").split("\n")
        assert root_lines(text, "runtime").tail == tail
    unknown = root_lines(io.BytesIO(cases[0]), "runtime")
    assert unknown.to_dict()["tail"][-1] == {"line": 4, "text": "accuracy: 0.91"}
    block = unrecognised_block(unknown)
    assert block[1] == "  no line of the log looks like an error; its last lines:"
    assert block[-2:] == ["  line 4:", "  > accuracy: 0.91"]
    assert not any("printed by" in line or "search for" in line for line in block)
    # a root-cause line found: no tail; an empty log: nothing to show, and it says so
    assert root_lines(BUILD_LOG, "build").tail == ()
    empty = root_lines(io.BytesIO(b""), "runtime")
    assert empty.tail == () and "read its last lines" in unrecognised_block(empty)[1]


def test_a_build_s_event_carries_the_last_lines(tmp_path):
    from tfwizard.core.diagnosis.build import unrecognised_event

    log = tmp_path / "log.txt"
    log.write_text("INFO: Analyzed 3 targets (0 packages loaded).\nINFO: Found 3 targets...\n")
    event = unrecognised_event(log)
    assert event.lines == () and event.tail == ((1, "INFO: Analyzed 3 targets (0 packages "
                                                    "loaded)."), (2, "INFO: Found 3 targets..."))
    assert "line 2:" in "\n".join(unrecognised_block(event))
    assert json.loads(json.dumps(event.to_dict()))["tail"][1][0] == 2
