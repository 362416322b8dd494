"""The wizard, offscreen: walking the pages, live findings and fixes, recipes in and out."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMessageBox, QPushButton, QWizard

from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import load_recipe
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

from .conftest import HOSTS, host

# the offscreen platform plugin warns that it cannot resize/raise windows
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 5000  # ms: every wait in these tests is bounded


def next_button(wizard):
    return wizard.button(QWizard.WizardButton.NextButton)


def click_next(qtbot, wizard, expect: PageId) -> None:
    button = next_button(wizard)
    assert button.isEnabled(), wizard.currentPage().findings.summary.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wizard.currentId() == int(expect), timeout=WAIT)


def select(qtbot, combo, text_prefix: str) -> None:
    """Choose a combo entry with the keyboard, as a user would."""
    combo.setFocus()
    for _ in range(combo.count()):
        if combo.currentText().startswith(text_prefix):
            break
        qtbot.keyClick(combo, Qt.Key.Key_Down)
    else:
        pytest.fail(f"no {text_prefix!r} in the combo")


def test_walk_every_page_with_keyboard_and_mouse(qtbot, make_window):
    window = make_window()
    wizard = window.wizard
    assert wizard.currentId() == PageId.WELCOME
    assert "RTX 4070" in wizard.welcome.build_label.text()
    assert "CC 8.9" in wizard.welcome.build_label.text()
    assert "Docker" in wizard.welcome.build_label.text()
    click_next(qtbot, wizard, PageId.SOURCE)
    name = wizard.source.name_edit
    name.selectAll()
    qtbot.keyClick(name, Qt.Key.Key_Delete)
    assert wizard.state.recipe.name == ""
    assert not next_button(wizard).isEnabled()  # "name*" is a required field
    qtbot.keyClicks(name, "my-tf")
    assert wizard.state.recipe.name == "my-tf"
    click_next(qtbot, wizard, PageId.BACKEND)
    assert wizard.backend.radios["cuda"].isChecked()
    click_next(qtbot, wizard, PageId.TOOLCHAIN)
    assert wizard.toolchain.cuda_box.isVisibleTo(wizard.toolchain)
    click_next(qtbot, wizard, PageId.COMPUTE)
    assert "8.9" in wizard.compute.ticked()  # the target's GPU, via "auto"
    click_next(qtbot, wizard, PageId.OPTIONS)
    jobs = wizard.options_page.jobs_spin
    jobs.selectAll()
    qtbot.keyClicks(jobs, "6")
    assert wizard.state.recipe.build.jobs == 6
    qtbot.keyClicks(wizard.options_page.flags_edit, "--verbose_failures")
    assert wizard.state.recipe.build.bazel_flags == ["--verbose_failures"]
    click_next(qtbot, wizard, PageId.REVIEW)
    toml = wizard.review.toml_view.toPlainText()
    assert 'name = "my-tf"' in toml and "jobs = 6" in toml
    commands = wizard.review.commands_view.toPlainText()
    assert "docker run" in commands and "--verbose_failures" in commands
    assert "--jobs=6" in commands
    click_next(qtbot, wizard, PageId.BUILD)
    assert not next_button(wizard).isEnabled()  # no wheel yet


def test_cpu_backend_skips_the_compute_page(qtbot, make_window):
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    assert wizard.state.recipe.backend.kind == "cpu"
    click_next(qtbot, wizard, PageId.SOURCE)
    click_next(qtbot, wizard, PageId.BACKEND)
    click_next(qtbot, wizard, PageId.TOOLCHAIN)
    assert not wizard.toolchain.cuda_box.isVisibleTo(wizard.toolchain)
    click_next(qtbot, wizard, PageId.OPTIONS)


def test_python_313_with_tf218_shows_an_error_until_its_fix_is_clicked(qtbot, make_window):
    wizard = make_window().wizard
    click_next(qtbot, wizard, PageId.SOURCE)
    page = wizard.source
    select(qtbot, page.version_combo, "2.18.0")
    assert wizard.state.recipe.tensorflow.version == "2.18.0"
    page.python_combo.setFocus()
    index = page.python_combo.findData("3.13")
    page.python_combo.setCurrentIndex(index)
    assert wizard.state.recipe.python.version == "3.13"
    panel = page.findings
    row = panel.row("PYTHON_RANGE")
    assert row is not None and row.finding.severity == "error"
    assert "3.13" in row.finding.message
    assert not next_button(wizard).isEnabled()
    assert panel.summary.text().startswith("Next is disabled")
    assert row.fix_button is not None
    qtbot.mouseClick(row.fix_button, Qt.MouseButton.LeftButton)
    assert panel.row("PYTHON_RANGE") is None
    assert wizard.state.recipe.python.version == "3.12"
    assert page.python_combo.currentData() == "3.12"  # the widget follows the fix
    assert next_button(wizard).isEnabled()


def test_compute_capabilities_35_70_error_and_fix(qtbot, make_window):
    wizard = make_window().wizard
    assert wizard.go_to(PageId.COMPUTE) == PageId.COMPUTE
    page = wizard.compute
    # untick "auto" with the mouse, then tick 3.5 and 7.0 with the keyboard
    qtbot.mouseClick(page.auto_check, Qt.MouseButton.LeftButton,
                     pos=QPoint(8, page.auto_check.height() // 2))
    assert not page.auto_check.isChecked()
    items = page.items()
    for item in items.values():
        if item.checkState() == Qt.CheckState.Checked:
            page.list.setCurrentItem(item)
            qtbot.keyClick(page.list, Qt.Key.Key_Space)
    for cc in ("3.5", "7.0"):
        page.list.setCurrentItem(items[cc])
        qtbot.keyClick(page.list, Qt.Key.Key_Space)
    assert page.ticked() == ["3.5", "7.0"]
    tokens = wizard.state.recipe.cuda.compute_capabilities
    assert tokens[:2] == ["sm_35", "sm_70"]
    codes = page.findings.codes()
    assert "CC_DROPPED_BY_CUDA" in codes
    assert not next_button(wizard).isEnabled()
    row = page.findings.row("CC_DROPPED_BY_CUDA")
    assert row is not None and row.fix_button is not None
    qtbot.mouseClick(row.fix_button, Qt.MouseButton.LeftButton)
    assert "CC_DROPPED_BY_CUDA" not in page.findings.codes()
    assert "sm_35" not in wizard.state.recipe.cuda.compute_capabilities
    assert items["3.5"].checkState() == Qt.CheckState.Unchecked


def test_compute_presets(qtbot, make_window, kb):
    wizard = make_window().wizard
    wizard.go_to(PageId.COMPUTE)
    page = wizard.compute
    qtbot.mouseClick(page.findChild(QPushButton, "preset-official"), Qt.MouseButton.LeftButton)
    release = kb.release(wizard.state.recipe.tensorflow.version)
    assert wizard.state.recipe.cuda.compute_capabilities == list(
        release.wheel_compute_capabilities)
    page.apply_preset("target")
    # compute_89: the cubin and the PTX of the newest (tf-cuda-rules)
    assert wizard.state.recipe.cuda.compute_capabilities == ["compute_89"]
    assert page.ticked() == ["8.9"] and page.ptx_check.isChecked()
    page.apply_preset("portable")
    portable = wizard.state.recipe.cuda.compute_capabilities
    assert portable[-1].startswith("compute_") and len(portable) >= 3
    assert not wizard.state.errors_for(("cuda.compute_capabilities",))


def test_choices_that_would_fail_are_marked(qtbot, make_window):
    # driver 520 supports CUDA 11.8 only: every CUDA 12 choice carries the reason
    wizard = make_window(host=host("ada-8.9-driver520")).wizard
    wizard.state.update({"tensorflow.version": "2.18.0", "cuda.version": "12.5.1",
                         "cuda.cudnn": "9.3.0"})
    wizard.restart()
    wizard.go_to(PageId.TOOLCHAIN)
    combo = wizard.toolchain.cuda_combo
    texts = [combo.itemText(i) for i in range(combo.count())]
    marked = [t for t in texts if "✖" in t]
    assert marked and all(t.startswith("12.") for t in marked)
    tip = combo.itemData(texts.index(marked[0]), Qt.ItemDataRole.ToolTipRole)
    assert "driver" in tip


def test_backend_that_makes_no_sense_is_disabled_with_the_reason(qtbot, make_window):
    mac = HostProfile.load(HOSTS / "no-gpu-server.json")
    mac.os.system = "darwin"
    wizard = make_window(host=mac).wizard
    wizard.go_to(PageId.BACKEND)
    page = wizard.backend
    assert page.radios["cpu"].isChecked()
    assert not page.radios["cuda"].isEnabled()
    assert "macOS" in page.reasons["cuda"].text()
    assert not page.radios["rocm"].isEnabled()


def test_import_target_profile_and_build_for_it(qtbot, make_window):
    window = make_window(host=host("no-gpu-server"))
    wizard = window.wizard
    path = str(HOSTS / "h100-driver560.json")
    assert wizard.welcome.import_target(path)
    assert wizard.state.target_host is not None
    assert wizard.state.recipe.target.host_profile == path
    assert "Target machine" in wizard.welcome.target_label.text()
    wizard.state.update({"backend.kind": "cuda"})
    for finding in list(wizard.state.findings):
        if finding.severity == "error" and finding.fix is not None:
            wizard.state.apply_fix(finding)
    wizard.state.update({"cuda.compute_capabilities": ["auto"]})
    wizard.go_to(PageId.COMPUTE)
    assert wizard.compute.ticked() == ["9.0"]  # the target's H100, not this machine
    wizard.go_to(PageId.REVIEW)  # a bad profile from any page: a dialog over that page
    assert not wizard.welcome.import_target(str(HOSTS / "README.md"))
    box = window.findChild(QMessageBox, "import-error-box")
    assert box is not None and box.isVisible()
    assert "README.md" in box.text()
    box.close()


def test_refresh_detects_off_the_gui_thread(qtbot, make_window):
    seen: list[str] = []

    def detect():
        seen.append(threading.current_thread().name)
        return host("laptop-rtx3060-550")

    window = make_window(host=host("no-gpu-server"), jobs=Jobs(detect=detect))
    welcome = window.wizard.welcome
    qtbot.mouseClick(welcome.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "3060" in welcome.build_label.text(), timeout=WAIT)
    assert seen and seen[0] != threading.main_thread().name
    # the recipe was untouched, so it now fits the detected GPU
    assert window.wizard.state.recipe.backend.kind == "cuda"


def test_save_and_open_round_trip(qtbot, make_window, tmp_path):
    window = make_window()
    state = window.wizard.state
    state.update({"name": "roundtrip", "build.jobs": 3, "build.bazel_flags": ["--config=mkl"]})
    path = tmp_path / "r.toml"
    assert window.save_to(path)
    saved = load_recipe(path)
    assert saved == state.recipe
    other = make_window()
    assert other.open_recipe(path)
    assert other.wizard.currentId() == PageId.REVIEW  # what it will run, before it runs
    assert other.wizard.state.recipe == saved
    assert 'name = "roundtrip"' in other.wizard.review.toml_view.toPlainText()
    assert "--config=mkl" in other.wizard.review.commands_view.toPlainText()
    assert other.wizard.build.result is None  # nothing ran


def test_open_recipe_with_an_error_stops_on_that_page(qtbot, make_window, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('schema = 1\nname = "x"\n[tensorflow]\nversion = "2.18.0"\n'
                    '[python]\nversion = "3.13"\n')
    window = make_window()
    assert window.open_recipe(path)
    assert window.wizard.currentId() == PageId.SOURCE
    assert "PYTHON_RANGE" in window.wizard.source.findings.codes()


def test_open_invalid_recipe_reports_every_problem(qtbot, make_window, tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('schema = 1\nname = "x"\n[tensorflow]\nversion = "9.9"\n[bakend]\n')
    window = make_window()
    assert not window.open_recipe(path)
    box = window.findChild(QMessageBox, "error-box")
    assert box is not None and box.isVisible()
    assert "9.9" in box.text() and "bakend" in box.text()
    box.close()


def test_drop_a_recipe_on_the_window(qtbot, make_window, tmp_path):
    window = make_window()
    window.wizard.state.update({"name": "dropped"})
    path = tmp_path / "d.toml"
    window.save_to(path)
    other = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPoint(10, 10).toPointF(), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    other.dropEvent(event)
    assert other.wizard.state.recipe.name == "dropped"
    assert other.wizard.currentId() == PageId.REVIEW


def test_apply_all_fixes(qtbot, make_window):
    wizard = make_window().wizard
    wizard.state.update({"tensorflow.version": "2.18.0", "python.version": "3.13",
                         "cuda.version": "", "cuda.cudnn": ""})
    panel = wizard.review.findings
    assert panel.errors() and panel.fix_all.isVisibleTo(panel)
    qtbot.mouseClick(panel.fix_all, Qt.MouseButton.LeftButton)
    assert not wizard.state.errors_for(None)


def test_excepthook_shows_a_dialog(qtbot, qapp):
    from tfwizard.gui.app import show_exception

    try:
        raise ValueError("boom")
    except ValueError as exc:
        show_exception(ValueError, exc, exc.__traceback__)
    boxes = [w for w in qapp.topLevelWidgets() if w.objectName() == "excepthook-box"]
    assert boxes and boxes[-1].isVisible() and "boom" in boxes[-1].text()
    for box in boxes:
        box.close()
        box.deleteLater()


def test_no_display_means_no_gui():
    from tfwizard.gui.app import has_display

    assert not has_display({})
    assert has_display({"DISPLAY": ":0"})


def test_gui_resolves_auto_like_the_cli(qtbot, make_window, tmp_path):
    """Issue 15 item 1: the wizard's plan builds the GPU targets `tfwizard plan` builds, for
    every recipe in recipes/ and what `recipe new --from-host` writes on each host fake."""
    import json
    import shutil

    from tfwizard.cli import ExitStatus, capture
    from tfwizard.core.defaults import commented_recipe_toml, default_recipe
    from tfwizard.core.errors import UsageError
    from tfwizard.gui import jobs

    root = HOSTS.parent.parent.parent
    recipes = []
    for path in sorted((root / "recipes").glob("*.toml")):
        recipes.append(shutil.copy(path, tmp_path / path.name))
    shutil.copy(HOSTS / "h100-driver560.json", tmp_path / "h100.json")
    for profile in sorted(HOSTS.glob("*.json")):
        path = tmp_path / f"from-host-{profile.stem}.toml"
        path.write_text(commented_recipe_toml(default_recipe(host(profile.stem))))
        recipes.append(path)
    window = make_window()
    compared = 0
    # one build host of each kind: NVIDIA, none, AMD (each opening rebuilds every page's
    # findings: PySide6 6.12 on Python 3.11 loses a reference to None per void call, so
    # keep the count sane); the recipes cover every host profile already
    for profile in [HOSTS / f"{name}.json" for name in ("ada-8.9-driver550", "no-gpu-server",
                                                        "rocm-mi210")]:
        window.wizard.state.set_build_host(host(profile.stem))
        for recipe in recipes:
            assert window.open_recipe(recipe)
            state = window.wizard.state
            key = "amdgpu_targets" if state.recipe.backend.kind == "rocm" else \
                "compute_capabilities"
            status, out, err = capture(["plan", str(recipe), "--host", str(profile),
                                        "--format", "json"])
            try:
                # the plan the session makes for Start (past the check: `plan` shows it)
                gui = getattr(jobs.prepare_build(state, preflight=False, force=True).plan,
                              key)
            except UsageError as exc:
                assert status == ExitStatus.USAGE, (recipe.name, profile.stem, out[:300])
                assert "auto" in exc.message and exc.message in err
                continue
            assert status == ExitStatus.OK, (recipe.name, profile.stem, err)
            assert gui == json.loads(out)[key], (recipe.name, profile.stem)
            if state.recipe.backend.kind == "cuda" and "auto" in \
                    state.recipe.cuda.compute_capabilities:
                window.wizard.compute.initializePage()  # shows the recipe as on arrival
                assert ", ".join(gui) in window.wizard.compute.tokens_label.text()
            compared += 1
    assert compared > 30


def test_refresh_keeps_user_edits(qtbot, make_window):
    """The review's Appendix A.3 (issue 15 item 5): an edited recipe survives Refresh;
    only a recipe nobody touched follows the detected machine."""
    laptop = host("laptop-rtx3060-550")
    window = make_window(host=host("ada-8.9-driver550"), jobs=Jobs(detect=lambda: laptop))
    wizard = window.wizard
    wizard.go_to(PageId.SOURCE)
    wizard.source.name_edit.clear()
    qtbot.keyClicks(wizard.source.name_edit, "my-edited-name")
    wizard.restart()
    wizard.welcome.refresh()
    qtbot.waitUntil(lambda: wizard.state.build_host is laptop, timeout=WAIT)
    assert wizard.state.recipe.name == "my-edited-name"
    # a finding's fix applied with its button is an edit too
    from tfwizard.core.findings import Finding, Fix

    other = make_window(host=host("no-gpu-server"), jobs=Jobs(detect=lambda: laptop))
    state = other.wizard.state
    state.apply_fix(Finding("T", "warning", "m", (), "build.jobs", Fix("3", {"build.jobs": 3})))
    other.wizard.welcome.refresh()
    qtbot.waitUntil(lambda: state.build_host is laptop, timeout=WAIT)
    assert state.recipe.build.jobs == 3 and state.recipe.backend.kind == "cpu"
    # and a recipe nobody touched still follows the machine (the GPU laptop: CUDA)
    untouched = make_window(host=host("no-gpu-server"), jobs=Jobs(detect=lambda: laptop))
    untouched.wizard.welcome.refresh()
    qtbot.waitUntil(lambda: untouched.wizard.state.build_host is laptop, timeout=WAIT)
    assert untouched.wizard.state.recipe.backend.kind == "cuda"
