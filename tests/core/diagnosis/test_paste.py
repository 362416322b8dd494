"""A pasted log read as its tools printed it (core/diagnosis/paste.py).

The corpus's excerpts were posted as their tools printed them; cut the way a console cuts
them (Windows' console at 80 and 120 columns, padded or not), or quoted as an indented
block, each one the diagnosis gets right must stay right, and a log that was never cut
must not be read as cut.
"""

from __future__ import annotations

import io

import pytest

from tests.core.diagnosis import real_logs
from tfwizard.core.diagnosis import paste
from tfwizard.core.diagnosis.build import diagnose_stream
from tfwizard.core.diagnosis.logscan import SMALL_LOG, split_lines
from tfwizard.core.diagnosis.runtime import diagnose_log


def cut(text: str, size: int, *, pad: bool = False) -> str:
    """`text` as a console `size` columns wide shows it (every line padded to it: `pad`)."""
    out = []
    for line in text.split("\n"):
        while len(line) > size:
            out.append(line[:size])
            line = line[size:]
        out.append(line)
    return "\n".join(x.ljust(size) if pad else x for x in out)


def first_cause(entry: dict, data: bytes) -> str:
    found = (diagnose_stream(io.BytesIO(data)) if entry["kind"] == "build"
             else diagnose_log(io.BytesIO(data)))
    return real_logs.first_cause([d.id for d in found])


def test_lines_cut_at_one_width_are_found_and_joined_back():
    message = ("E0101 12:00:00.000000 loader.cc:55] Could not load dynamic library 'libcudnn.so"
               ".8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or "
               "directory")
    lines = [*cut(message, 76).split("\n"), "short line"]
    assert [len(x) for x in lines] == [76, 76, 13, 10]
    assert paste.width(lines) == (76, False)
    # the first cut falls inside a word: the second piece is no line of its own; the
    # second falls after a full stop, which may be a line's own end
    assert paste.runs(lines, (76, False)) == {1: (message, 3, frozenset({2}))}
    # so may a colon's, or a lower-case word before a capital
    for end, start in ((":", "b"), ("d", "N")):
        lines[0], lines[1] = lines[0][:-1] + end, start + lines[1][1:]
        assert paste.runs(lines, (76, False))[1].inside == frozenset()


def test_one_message_repeated_is_not_a_console_width():
    # the same line at other times is as long each time: that says nothing of a console
    lines = [f"2024-05-01 12:00:0{i}.123456: I cudart_stub.cc:32] Could not find cuda drivers on "
             "your machine, GPU will not be used." for i in range(5)] + ["done"]
    assert paste.width(lines) is None
    # one line cut where consoles are most often set is taken as cut; elsewhere it is not
    assert paste.width(["x" * 80, "rest"]) == (80, False)
    assert paste.width(["x" * 77, "rest"]) is None
    assert paste.width(["x" * 40, "y" * 40]) is None  # narrower than a console
    assert paste.width(["x" * 600, "y" * 600]) is None  # wider than one


def test_lines_that_start_as_a_tool_s_lines_do_are_not_cut_pieces():
    # two of TensorFlow's lines (its older and its 2.16 format) as long as each other: no
    # console cut them, whatever their lengths
    for first, second in (
            ("I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported version",
             "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:193] kernel reported version:"),
            ("I0000 00:00:1714564800.123456  1234 cuda_executor.cc:1015] successful NUMA nodes",
             "W0000 00:00:1714564800.123999  1234 gpu_device.cc:2344] Cannot dlopen some GPU x")):
        assert len(first) == len(second)
        lines = [first, second, "I tensorflow/core/x.cc:1] done", "end"]
        assert paste.width(lines) is None
        # the same lengths, each followed by a piece that starts inside a word: cut
        lines[1:3] = ["libraries" + second[9:], "ries and more"]
        assert paste.width(lines) == (len(first), False)


def test_a_padded_console_is_read_without_its_padding():
    wheel = ("ERROR: tensorflow-2.3.1-cp36-cp36m-linux_aarch64.whl is not a supported wheel on "
             "this platform.")
    lines = cut(wheel + "\n\ndriver's", 80, pad=True).split("\n")
    assert {len(x) for x in lines} == {80}
    assert paste.width(lines) == (80, True)
    got = paste.runs(lines, (80, True))
    # the cut fell before a space: the piece after it could have been a line of its own
    assert got[1] == (wheel, 2, frozenset())
    assert got[3] == ("", 3, frozenset()) and got[4] == ("driver's", 4, frozenset())
    # a piece that ends in one space was cut after a word: it runs on
    cut_after_word = ["x" * 79 + " ", "y" * 10 + " " * 70]
    assert paste.runs(cut_after_word, (80, True)) == {
        1: ("x" * 79 + " " + "y" * 10, 2, frozenset())}


def test_a_line_is_joined_from_at_most_max_pieces():
    lines = ["x" * 60] * (paste.MAX_PIECES + 5) + ["end"]
    lines[1] = "y" * 60
    found = paste.runs(lines, (60, False))
    assert found[1][1] == paste.MAX_PIECES
    assert found[paste.MAX_PIECES + 1][1] == len(lines)


def test_only_a_small_log_is_read_as_cut():
    lines = ["x" * 80, "y" * 80, "z"]
    assert paste.split(lines, SMALL_LOG)[2] == {
        1: ("x" * 80 + "y" * 80 + "z", 3, frozenset({2, 3}))}
    head, rest, found = paste.split(lines * 1000, 200)
    assert found == {} and len(head) + len(list(rest)) == 3000


def test_a_cut_line_keeps_the_words_it_was_cut_in():
    # TensorFlow's dlerror cut inside the library's name, at 80 columns, in a file on disk
    text = ("2021-04-09 19:52:41.024315: W tensorflow/stream_executor/platform/default/dso_"
            "loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcuda"
            "rt.so.11.0: cannot open shared object file: No such file or directory\n"
            "2021-04-09 19:52:41.024341: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] "
            "Ignore above cudart dlerror if you do not have a GPU set up on your machine.\n")
    found = diagnose_log(io.BytesIO(cut(text, 80).encode()))
    assert [d.id for d in found] == ["cudart-not-found"]
    assert found[0].evidence[0].splitlines() == [x.strip() for x in cut(text, 80).split("\n")[:3]]


@pytest.mark.parametrize(("size", "pad"), [(80, False), (120, False), (80, True)])
def test_every_excerpt_cut_by_a_console_keeps_its_first_cause(size, pad):
    changed = []
    for entry in real_logs.entries(holdout=False):
        text = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8")
        # an excerpt posted cut already (its file name says so, or its lines show a width)
        # is cut twice over here, which no console does
        if "wrapped" in entry["file"] or paste.width(split_lines(text.encode())) is not None:
            continue
        want = first_cause(entry, text.encode())
        if want != entry["cause"] or want == real_logs.NONE:
            continue
        got = first_cause(entry, cut(text, size, pad=pad).encode())
        if got != want:
            changed.append(f"{entry['file']}: {want} -> {got}")
    assert changed == []


def test_no_negative_cut_by_a_console_gets_a_diagnosis():
    fired = []
    for entry in real_logs.entries(holdout=False):
        if entry["cause"] != real_logs.NONE:
            continue
        text = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8")
        for size in (80, 120):
            if first_cause(entry, text.encode()) == real_logs.NONE \
                    and first_cause(entry, cut(text, size).encode()) != real_logs.NONE:
                fired.append(f"{entry['file']} at {size}")
    assert fired == []


def test_a_common_indentation_is_found():
    assert paste.indent(["    ERROR: x", "", "      at y", "    done"]) == "    "
    assert paste.indent(["\tERROR: x", "\t\tat y"]) == "\t"
    assert paste.indent([" ERROR: x", " on this platform."]) == ""  # a console's cut
    assert paste.indent(["    ERROR: x", "Traceback (most recent call last):"]) == ""
    assert paste.indent(["", "  "]) == ""


@pytest.mark.parametrize("indentation", ["    ", "\t", "  "])
def test_every_excerpt_quoted_as_an_indented_block_keeps_its_first_cause(indentation):
    """Markdown's code block of four spaces, a YAML file's or a reply's quote."""
    changed = []
    for entry in real_logs.entries(holdout=False):
        text = (real_logs.CORPUS / entry["file"]).read_text(encoding="utf-8")
        want = first_cause(entry, text.encode())
        if want != entry["cause"]:
            continue
        quoted = "".join(indentation + line + "\n" if line else "\n"
                         for line in text.splitlines())
        got = first_cause(entry, quoted.encode())
        if got != want:
            changed.append(f"{entry['file']}: {want} -> {got}")
    assert changed == []
