"""The Verify page's panel: the real tensorflow-cpu venv reaches a passing panel (verdict,
one row per check); a failing interpreter gives failed rows and diagnosis cards; a real
program's output pasted into the page is diagnosed as cards."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from tests.gui.clipping_probe import clipped_texts
from tests.gui.pages.test_verify_page import fake_python, open_verify_page
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")
REAL_LOGS = Path(__file__).resolve().parents[2] / "data" / "real-logs" / "runtime"


def rows(page) -> dict[str, str]:
    return {row.key: row.status for row in page.panel.rows}


@pytest.mark.slow
def test_the_real_tensorflow_cpu_reaches_a_passing_panel(qtbot, make_window, tf_python):
    window, page = open_verify_page(make_window, host=None)
    page.python_edit.setText(str(tf_python))
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.report is not None and not page.running, timeout=240000)
    report = page.report
    assert report.ok, page.report_view.toPlainText()[-3000:]
    version = report.probe.data["tensorflow"]["version"]
    assert page.panel.verdict.text() == (
        f"TensorFlow {version} works here: every check passed (cpu).")
    got = rows(page)
    assert got["import"] == "pass" and got["version"] == "pass"
    assert [v for k, v in got.items() if k.startswith("op:") and k.endswith("CPU:0")] == \
        ["pass"], got
    assert any(k.startswith("matmul:") and v == "pass" for k, v in got.items()), got
    assert got["built-with"] == "info" and got["gpus"] == "info" and got["libraries"] == "info"
    assert "fail" not in got.values()
    detail = {r.key: r.detail for r in page.panel.rows}
    assert detail["version"] == version and "GFLOP/s" in next(
        r.detail for r in page.panel.rows if r.key.startswith("matmul:"))
    assert page.panel.cards.cards == []  # nothing to diagnose on a passing CPU install
    window.wizard.setStartId(int(PageId.WELCOME))


def test_an_interpreter_without_tensorflow_gives_a_failed_row_and_a_card(qtbot, make_window,
                                                                         tmp_path):
    # the probe runs for real in the test's own interpreter, which has no TensorFlow
    no_tf = fake_python(tmp_path, "notf", "import runpy, sys\nsys.argv = sys.argv[1:]\n"
                                          "runpy.run_path(sys.argv[0], run_name='__main__')")
    window, page = open_verify_page(make_window)
    page.python_edit.setText(str(no_tf))
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.report is not None and not page.running, timeout=60000)
    assert page.report.status == "failed"
    # one row per check: the import failed, every check after it says it did not run
    assert rows(page) == {"import": "fail", "version": "skip", "built-with": "skip",
                          "gpus": "skip", "op": "skip", "matmul": "skip"}
    assert all(r.detail == "not checked: TensorFlow did not import"
               for r in page.panel.rows if r.status == "skip")
    assert page.panel.verdict.text().startswith("TensorFlow does not work as expected here")
    ids = [card.diagnosis.id for card in page.panel.cards.cards]
    assert ids and ids[0] == "import-failed", ids
    assert "tensorflow" in page.panel.cards.cards[0].text.text()
    # the panel is the page (the text report is folded under it), and no card is clipped,
    # its cause and next step included, at 1024x700
    assert not page.details.is_open
    window.resize(1024, 700)
    qtbot.wait(50)
    assert clipped_texts(page.panel) == [], clipped_texts(page.panel)
    card = page.panel.cards.cards[0]
    assert "cause:" in card.text.text() and "next:" in card.text.text()
    # the closing summary says what was verified
    assert "checks passed; failed: tensorflow imports" in page.done.values["verified"].text()
    # the build's wheel is summed up beside the interpreter it went into, never beside
    # another one as if it were installed there
    state = window.wizard.state
    state.wheel, state.installed_python = "/builds/x/tensorflow_cpu-2.18.0-cp311.whl", "/v/py"
    page._show_summary()
    assert "wheel" not in page.done.values
    state.installed_python = str(no_tf)
    page._show_summary()
    assert "tensorflow_cpu-2.18.0" in page.done.values["wheel"].text()
    window.wizard.setStartId(int(PageId.WELCOME))


def test_pasted_output_is_judged_for_the_machine_it_ran_on(qtbot, make_window):
    """The severities are the CLI's: `diagnose --runtime` judges for this machine (a
    GPU-less one here: notes), --target for the target (its GPU makes them errors)."""
    from tests.gui.conftest import host

    window, page = open_verify_page(make_window, host=host("no-gpu-server"))
    page.state.set_target(host("rtx4090-driver550-py311"), "laptop.json")
    page.sync()
    box = page.output_diagnosis
    box.edit.setPlainText(
        "W0000 cuda_executor.cc:1040] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
        "CUDA-capable device is detected\nI tensorflow/tsl/cuda/cudart_stub.cc:28] Could "
        "not find cuda drivers on your machine, GPU will not be used.\n")
    assert box.machine.isVisibleTo(page)
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert {c.diagnosis.severity for c in box.cards.cards} == {"info"}
    assert "cuda_executor.cc" in box.cards.cards[0].text.text()  # underscores kept, as code
    box.machine.setCurrentIndex(box.machine.findData("target"))
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert {c.diagnosis.severity for c in box.cards.cards} == {"error"}
    window.wizard.setStartId(int(PageId.WELCOME))


def test_a_pasted_program_output_is_diagnosed_as_cards(qtbot, make_window):
    """A real excerpt (tests/data/real-logs, a public issue thread): cudart 11.0 missing."""
    window, page = open_verify_page(make_window)
    box = page.output_diagnosis
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert box.status.text() == "Paste a program's output first."
    box.edit.setPlainText((REAL_LOGS / "cudart110-dso-loader-stub-ignore.log").read_text())
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    ids = [card.diagnosis.id for card in box.cards.cards]
    assert ids and ids[0] == "cudart-not-found", ids
    assert "libcudart.so.11.0" in box.cards.cards[0].text.text()
    box.edit.setPlainText("Epoch 1/10\nloss: 0.31 - accuracy: 0.91\n")
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.cards.cards)
    assert box.status.text() == "No known problem in this output."
    window.wizard.setStartId(int(PageId.WELCOME))


def test_pasted_output_nothing_known_explains_shows_the_lines_to_read(qtbot, make_window):
    """No known runtime message: no diagnosis card, but the output's own root-cause line
    (the last exception), labelled as not recognised; a known one replaces it again."""
    from tests.core.diagnosis.test_unrecognised import RUNTIME_LOG

    window, page = open_verify_page(make_window)
    box = page.output_diagnosis
    box.edit.setPlainText("\n".join(RUNTIME_LOG))
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert box.cards.cards == [] and box.unknown is not None
    assert box.status.text() == "No known problem in this output."
    assert box.unknown.objectName() == "unrecognised"
    assert box.unknown.heading.text().startswith("NOT RECOGNISED")
    text = box.unknown.text.text()
    assert "line 7, printed by TensorFlow:" in text and "Graph execution error" in text
    assert "Unable to register cuDNN factory" not in text
    assert box.unknown.copy_button is not None
    # output that stops without any error line: its last lines, said as such, no query
    box.edit.setPlainText("Epoch 1/10\n\nEpoch 2/10\nstep 300, loss 0.28\n")
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    text = box.unknown.text.text()
    assert "no line of the log looks like an error; its last lines:" in text
    assert "line 4:\n> step 300, loss 0.28" in text and "printed by" not in text
    assert box.unknown.copy_button is None
    box.edit.setPlainText((REAL_LOGS / "cudart110-dso-loader-stub-ignore.log").read_text())
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert box.unknown is None and box.cards.cards
    window.wizard.setStartId(int(PageId.WELCOME))


def test_a_pasted_build_log_is_read_as_one(qtbot, make_window):
    """A build's log pasted into the box (a real excerpt: cc1plus killed for memory) has no
    runtime message, so it is read as a build's log: the build signature's card, its fix
    resolved against the recipe's jobs (halved), and a status that says how it was read."""
    window, page = open_verify_page(make_window)
    box = page.output_diagnosis
    window.state.update({"build.jobs": 8})
    box.edit.setPlainText((REAL_LOGS.parent / "build" / "gcc-killed-signal-cc1plus-tf-seal.log"
                           ).read_text())
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert [card.diagnosis.id for card in box.cards.cards] == ["oom-compiler-killed"]
    assert box.read_as_build and box.unknown is None
    assert box.status.text() == ("No known runtime message; read as a build's log, known "
                                 "problems found: 1.")
    assert dict(box.cards.cards[0].diagnosis.recipe_fix) == {"build.jobs": 4}
    assert "build.jobs" in box.cards.cards[0].text.text()
    # a program's output again is read as one
    box.edit.setPlainText((REAL_LOGS / "cudart110-dso-loader-stub-ignore.log").read_text())
    qtbot.mouseClick(box.button, Qt.MouseButton.LeftButton)
    assert not box.read_as_build
    assert box.cards.cards[0].diagnosis.id == "cudart-not-found"
    window.wizard.setStartId(int(PageId.WELCOME))
