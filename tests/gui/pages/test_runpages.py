"""Build, Install and Verify pages driven by fake event sources (no Docker, no pip)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPushButton, QWizard

from tfwizard.core.building.run.events import (
    Artifact,
    BuildResult,
    Finished,
    LogLines,
    PhaseChanged,
    Progress,
)
from tfwizard.core.diagnosis.types import DiagnosisEvent
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.main_window import CLOSE_CANCEL, CLOSE_DETACH
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 5000


class FakeBuild:
    """A build job: yields scripted events; optionally waits for cancel() before finishing."""

    def __init__(self, state, *, wait_for_cancel=False, fail=False, fix=None, fix_problem=""):
        self.state = state
        self.wait_for_cancel = wait_for_cancel
        self.fail = fail
        self.fix = {"build.jobs": 2} if fix is None else fix
        self.fix_problem = fix_problem
        self.cancelled = asyncio.Event()

    def cancel(self):
        self.cancelled.set()

    async def events(self):
        yield Artifact("record", "/tmp/fake-record")
        yield PhaseChanged("fetch", "fetch")
        yield LogLines("stdout", tuple(f"line {i}" for i in range(1, 501)), 1)
        yield PhaseChanged("compile", "build")
        yield Progress("compile", done=5, total=10, eta_s=125.0,
                       message="Compiling tensorflow/core/ops.cc")
        if self.wait_for_cancel:
            await self.cancelled.wait()
            result = BuildResult("b1", "cancelled", "/tmp/fake-record", message="cancelled")
            yield Finished(result)
            return
        if self.fail:
            yield DiagnosisEvent("OOM", "The compiler ran out of memory", "too many jobs",
                               "use fewer jobs", (42,), self.fix, self.fix_problem)
            yield Finished(BuildResult("b1", "failed", "/tmp/fake-record", message="failed"))
            return
        yield Artifact("wheel", "/tmp/fake-record/tensorflow-2.21.0-cp311-linux_x86_64.whl")
        yield Finished(BuildResult("b1", "succeeded", "/tmp/fake-record",
                                   wheel="/tmp/fake-record/tensorflow-2.21.0-cp311-linux_x86_64"
                                         ".whl", message="wheel: ok", elapsed_s=12, actions=10))


def build_window(make_window, **fake):
    made: list[FakeBuild] = []

    def factory(state):
        job = FakeBuild(state, **fake)
        made.append(job)
        return job

    window = make_window(jobs=Jobs(build=factory))
    window.wizard.go_to(PageId.BUILD)
    assert window.wizard.currentId() == PageId.BUILD
    return window, made


def test_build_page_shows_the_events_of_a_fake_build(qtbot, make_window):
    window, made = build_window(make_window)
    page = window.wizard.build
    next_button = window.wizard.button(QWizard.WizardButton.NextButton)
    assert not next_button.isEnabled()
    with qtbot.waitSignal(page.buildFinished, timeout=WAIT):
        qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running, timeout=WAIT)
    assert page.phase_label.text() == "Build succeeded"
    assert page.progress.value() == 10 and page.progress.maximum() == 10
    assert "line 500" in page.log.text.toPlainText()
    assert page.log.full_log is not None and page.log.full_log.name == "log.txt"
    assert window.wizard.state.wheel.endswith(".whl")
    assert next_button.isEnabled()  # a wheel: on to Install


def test_progress_and_eta_while_running(qtbot, make_window):
    window, made = build_window(make_window, wait_for_cancel=True)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.progress.value() == 5, timeout=WAIT)
    assert page.progress.maximum() == 10
    assert page.eta_label.text() == "ETA: 2 min 05 s"
    assert "Compiling" in page.action_label.text()
    assert page.phase_label.text().startswith("Phase: compile")
    assert page.running and page.cancel_button.isEnabled()
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not page.running, timeout=WAIT)
    assert made[0].cancelled.is_set()
    assert page.phase_label.text() == "Build cancelled"


def test_diagnosis_fix_and_rebuild(qtbot, make_window):
    window, made = build_window(make_window, fail=True)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(page.diagnoses) == 1 and not page.running, timeout=WAIT)
    row = page.diagnoses[0]
    assert row.fix_button is not None and "out of memory" in row.finding.title
    qtbot.mouseClick(row.fix_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(made) == 2 and not page.running, timeout=WAIT)
    assert window.wizard.state.recipe.build.jobs == 2


def test_a_fix_that_cannot_apply_leaves_the_recipe_and_says_why(qtbot, make_window):
    """Issue 15 item 2: a symbolic fix reaching the page ("halve", as failures.toml words
    it) used to go into build.jobs as is and raise TypeError; now nothing changes and the
    page says why. A fix the core could not resolve has no button, only the reason."""
    window, made = build_window(make_window, fail=True, fix={"build.jobs": "halve"})
    page, state = window.wizard.build, window.wizard.state
    before = state.recipe
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(page.diagnoses) == 1 and not page.running, timeout=WAIT)
    qtbot.mouseClick(page.diagnoses[0].fix_button, Qt.MouseButton.LeftButton)
    assert state.recipe == before and len(made) == 1  # untouched, no rebuild
    assert "The fix was not applied" in page.result_label.text()
    assert "build.jobs" in page.result_label.text()

    window, made = build_window(make_window, fail=True, fix={},
                                fix_problem="the build already ran one job at a time")
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(page.diagnoses) == 1 and not page.running, timeout=WAIT)
    row = page.diagnoses[0]
    assert row.fix_button is None
    assert any("one job at a time" in label.text() for label in row.findChildren(QLabel))


def test_closing_during_a_build_cancels_it_cleanly(qtbot, make_window):
    made: list[FakeBuild] = []

    def factory(state):
        made.append(FakeBuild(state, wait_for_cancel=True))
        return made[-1]

    window = make_window(jobs=Jobs(build=factory), ask_close=lambda: CLOSE_CANCEL)
    window.wizard.go_to(PageId.BUILD)
    window.wizard.build.start()
    qtbot.waitUntil(lambda: window.wizard.build.progress.value() == 5, timeout=WAIT)
    with qtbot.waitSignal(window.closed, timeout=WAIT):
        window.close()
    assert made[0].cancelled.is_set()
    assert not window.wizard.build.running


def test_closing_during_a_build_can_detach(qtbot, make_window):
    made: list[FakeBuild] = []

    def factory(state):
        made.append(FakeBuild(state, wait_for_cancel=True))
        return made[-1]

    window = make_window(jobs=Jobs(build=factory), ask_close=lambda: CLOSE_DETACH)
    window.wizard.go_to(PageId.BUILD)
    window.wizard.build.start()
    qtbot.waitUntil(lambda: window.wizard.build.running, timeout=WAIT)
    window.close()
    assert window.detached and not window.isVisible()
    assert window.wizard.build.running  # the build goes on without the window
    with qtbot.waitSignal(window.closed, timeout=WAIT):
        made[0].cancel()  # stands for the build ending on its own
    QGuiApplication.instance().setQuitOnLastWindowClosed(True)


def test_install_page_adapts_the_installers_events(qtbot, make_window):
    from tfwizard.core.install.job import (
        InstallFinished,
        InstallProgress,
        InstallResult,
        InstallStarted,
        PipLine,
    )

    seen = {}

    class FakeInstall:  # the core.jobs protocol, as core.install.Installation has it
        def __init__(self, state, wheel):
            seen["wheel"], seen["extras"] = wheel, state.recipe.install.extras
            self.wheel, self.result = wheel, None

        async def events(self):
            wheel = self.wheel
            yield InstallStarted("/v/bin/python", wheel, wheel + "[and-cuda]", ("pip",))
            yield PipLine("stdout", "Processing ./tf.whl")
            yield InstallProgress("download", collected=3, downloaded=2)
            self.result = InstallResult("installed", "/v/bin/python", wheel,
                                        wheel + "[and-cuda]", message="installed it")
            yield InstallFinished(self.result)

        def cancel(self):
            raise AssertionError("nobody cancels this install")

    window = make_window(jobs=Jobs(install=FakeInstall))
    wizard = window.wizard
    wizard.state.wheel = "/w/tensorflow-2.21.0-cp311-cp311-linux_x86_64.whl"
    wizard.restart()
    wizard.setStartId(int(PageId.INSTALL))
    wizard.restart()
    page = wizard.install
    assert page.wheel_edit.text() == wizard.state.wheel
    assert page.and_cuda.isChecked() and page.and_cuda.isEnabled()
    qtbot.mouseClick(page.and_cuda, Qt.MouseButton.LeftButton,
                     pos=QPoint(8, page.and_cuda.height() // 2))
    assert "and-cuda" not in wizard.state.recipe.install.extras
    page.venv_edit.clear()
    qtbot.keyClicks(page.venv_edit, "/tmp/venv-x")
    assert wizard.state.recipe.install.venv == "/tmp/venv-x"
    qtbot.mouseClick(page.install_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None and not page.running, timeout=WAIT)
    assert seen["wheel"] == wizard.state.wheel and seen["extras"] == []
    assert page.status.text() == "installed it"
    assert "Processing ./tf.whl" in page.log.text.toPlainText()
    assert wizard.state.installed_python == "/v/bin/python"
    wizard.setStartId(int(PageId.WELCOME))


class CacheWarningBuild(FakeBuild):
    """A build that succeeds past a remote cache Bazel could not use (issue 15 item 10)."""

    async def events(self):
        yield Artifact("record", "/tmp/fake-record")
        yield DiagnosisEvent("remote-cache-unusable", "The remote cache could not be used",
                           "Bazel went on without it", "Serve the cache over HTTP/1.1",
                           (28,), {}, "", "warning",
                           ("WARNING: Reading from Remote Cache:",
                            "HTTP version 1.1 is required, was: HTTP/1.0"))
        cache = {"processes": 30, "ran_here": 28, "cache_hits": 0, "disk_cache_hits": 0,
                 "remote_cache_hits": 0, "remote_executions": 0, "internal": 2}
        yield Finished(BuildResult("b1", "succeeded", "/tmp/fake-record", wheel="/tmp/w.whl",
                                   message="wheel: ok", findings=("remote-cache-unusable",),
                                   cache=cache))


def finished_build_page(qtbot, make_window, job):
    """The Build page after a fake build job (a class taking the state) has finished."""
    window = make_window(jobs=Jobs(build=job))
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None, timeout=WAIT)
    return page


def test_build_page_shows_the_cache_summary_and_a_cache_warning(qtbot, make_window):
    page = finished_build_page(qtbot, make_window, CacheWarningBuild)
    assert page.cache_label.text().startswith("Actions: 30 in all; 28 ran here")
    assert "0 from the remote cache" in page.cache_label.text()
    row = page.diagnoses[0]
    text = " ".join(label.text() for label in row.findChildren(QLabel))
    assert "HTTP version 1.1 is required, was: HTTP/1.0" in text and row.fix_button is None


class UnknownFailureBuild(FakeBuild):
    """A build that fails with a cause no signature knows: the core's own fallback event,
    made from a real log (tests/data/real-logs, a tuning excerpt only Bazel's generic
    failure fits)."""

    async def events(self):
        from tests.core.diagnosis import real_logs
        from tfwizard.core.diagnosis.build import unrecognised_event

        yield Artifact("record", "/tmp/fake-record")
        yield unrecognised_event(real_logs.CORPUS / "build"
                                 / "no-such-package-wrong-workspace-windows.log")
        yield Finished(BuildResult("b1", "failed", "/tmp/fake-record", message="failed"))


def test_build_page_shows_an_unknown_failure_as_not_recognised(qtbot, make_window):
    page = finished_build_page(qtbot, make_window, UnknownFailureBuild)
    card = page.unrecognised
    assert card is not None and card.objectName() == "unrecognised"
    assert page.diagnoses == [] and page.diagnosis_layout.indexOf(card) >= 0  # no diagnosis
    assert card.heading.text().startswith("NOT RECOGNISED") and "not a diagnosis" in \
        card.heading.text()
    text = card.text.text()
    assert "line 7, printed by Bazel (analysis):" in text
    assert "> ERROR: Skipping '//tensorflow/tools/pip_package:build_pip_package'" in text
    assert "search for: " in text
    # no fix to apply: no "Apply fix and rebuild", only the query to copy
    assert not any(b.objectName().startswith("rebuild-") for b in card.findChildren(QPushButton))
    qtbot.mouseClick(card.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == card.unknown.query
    assert card.unknown.query.startswith("ERROR Skipping no such")
