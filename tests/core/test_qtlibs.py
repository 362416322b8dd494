"""The system libraries Qt's platform plugins need, read from the installed PySide6 and
loaded as the dynamic loader would: a real missing or broken library is made by putting an
empty file of its name first on LD_LIBRARY_PATH (the loader takes it and fails on it, as
it would on a truncated package file), for a child process only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tfwizard.cli import ExitStatus, capture
from tfwizard.core import qtlibs

ROOT = Path(__file__).resolve().parents[2]
QT = qtlibs.pyside_qt_dir()
pytestmark = [
    pytest.mark.skipif(QT is None, reason="PySide6 is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF plugins: Linux only"),
]


def shadow(tmp_path: Path, *names: str) -> dict[str, str]:
    """An environment whose loader finds an empty (broken) file for each name first."""
    folder = tmp_path / "shadow"
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [str(folder), *filter(None, [os.environ.get("LD_LIBRARY_PATH")])])
    return env


def test_elf_needed_reads_the_plugin_as_readelf_does():
    plugin = qtlibs.plugin_path("xcb")
    needed = qtlibs.elf_needed(plugin)
    assert "libxcb.so.1" in needed and "libQt6XcbQpa.so.6" in needed
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf to compare with")
    out = subprocess.run([readelf, "-d", str(plugin)], capture_output=True, text=True,
                         check=True).stdout
    assert needed == [line.split("[", 1)[1].rstrip("]") for line in out.splitlines()
                      if "(NEEDED)" in line]


def test_xcb_needs_the_libraries_the_review_found_missing():
    libraries = qtlibs.system_libraries(qtlibs.plugin_path("xcb"), QT)
    # the first launch aborted for these two, and Qt's message blamed the third
    assert {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"} <= set(libraries)
    assert not any(name.startswith("libQt6") for name in libraries)  # PySide6 ships those


def test_every_needed_library_has_its_packages():
    table = tomllib.loads((ROOT / "resources/knowledge/system_libs.toml").read_text())
    known = table["library"]
    for platform in ("xcb", "offscreen", "wayland"):
        plugin = qtlibs.plugin_path(platform)
        if plugin is None:
            continue
        for name in qtlibs.system_libraries(plugin, QT):
            assert known.get(name, {}).get("debian"), f"{platform}: {name} has no package"
            assert known[name].get("fedora"), f"{platform}: {name} has no Fedora package"
    sources = tomllib.loads((ROOT / "resources/knowledge/sources.toml").read_text())["sources"]
    assert set(table["sources"]) <= set(sources)


def test_offscreen_does_not_need_the_xcb_libraries():
    offscreen = qtlibs.system_libraries(qtlibs.plugin_path("offscreen"), QT)
    assert "libxcb-icccm.so.4" not in offscreen and "libxcb.so.1" not in offscreen


def test_platform_order_follows_qt():
    assert qtlibs.qt_platforms({"QT_QPA_PLATFORM": "wayland;xcb"}) == ["wayland", "xcb"]
    assert qtlibs.qt_platforms({"QT_QPA_PLATFORM": "offscreen:size=1x1"}) == ["offscreen"]
    assert qtlibs.qt_platforms({}) == ["xcb"]
    assert qtlibs.qt_platforms({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "w-0"}) == [
        "wayland", "xcb"]


def test_missing_libraries_are_named_with_their_packages(tmp_path):
    if not qtlibs.check_platform("xcb").ok:
        pytest.skip("this machine lacks the xcb libraries already (tests/run.sh installs them)")
    env = shadow(tmp_path, "libxcb-icccm.so.4", "libxcb-keysyms.so.1")
    check = qtlibs.check_platform("xcb", env)
    assert not check.ok
    assert [m.library for m in check.missing] == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]
    assert check.missing[0].debian == "libxcb-icccm4" and check.missing[0].fedora == "xcb-util-wm"
    text = qtlibs.report([check])
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in text
    assert "libxcb-cursor0" not in text  # Qt's own message blames this one
    # offscreen does not need them: the same environment can still run offscreen
    assert qtlibs.check_platform("offscreen", env).ok


def test_a_broken_qt_library_is_named(tmp_path):
    if not qtlibs.check_platform("xcb").ok:
        pytest.skip("this machine lacks the xcb libraries already")
    check = qtlibs.check_platform("xcb", shadow(tmp_path, "libQt6XcbQpa.so.6"))
    assert not check.ok
    assert check.missing[0].library.endswith("libqxcb.so")
    assert "libQt6XcbQpa.so.6" in check.missing[0].reason


def test_gui_start_says_what_is_missing_instead_of_aborting(tmp_path):
    """The wizard's entry point in a process of its own: Qt itself aborts in this
    environment (the control), tfwizard-gui exits 4 with its own message."""
    if not qtlibs.check_platform("xcb").ok:
        pytest.skip("this machine lacks the xcb libraries already")
    env = shadow(tmp_path, "libxcb-icccm.so.4")
    env.update(QT_QPA_PLATFORM="xcb", DISPLAY=":987")  # the check comes before any display
    control = subprocess.run(
        [sys.executable, "-c", "from PySide6.QtWidgets import QApplication; QApplication([])"],
        env=env, capture_output=True, text=True, timeout=60, check=False)
    assert control.returncode != 0 and "xcb" in control.stderr  # Qt's abort, as reviewed
    started = subprocess.run(
        [sys.executable, "-c", "from tfwizard.gui.app import run; run()"],
        env=env, capture_output=True, text=True, timeout=60, check=False)
    assert started.returncode == qtlibs.EXIT_MISSING_LIBRARY, started.stderr
    assert "libxcb-icccm.so.4" in started.stderr and "libxcb-icccm4" in started.stderr
    assert "xcb-util-wm" in started.stderr
    assert "qt.qpa.plugin" not in started.stderr  # Qt never got to load the plugin


def test_detect_reports_whether_the_wizard_can_open(tmp_path):
    if not qtlibs.check_platform("xcb").ok:
        pytest.skip("this machine lacks the xcb libraries already")
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.pop("XDG_SESSION_TYPE", None)
    status, out, _ = capture(["detect"], env)
    assert status == ExitStatus.OK
    assert "Wizard (tfwizard-gui)" in out and "can open a window (Qt platform xcb" in out
    broken = shadow(tmp_path, "libxcb-icccm.so.4")
    broken.pop("QT_QPA_PLATFORM", None)
    broken.pop("XDG_SESSION_TYPE", None)
    status, out, _ = capture(["detect"], broken)
    assert status == ExitStatus.OK  # a report, not a failure of the command
    assert "cannot open a window" in out and "libxcb-icccm4" in out


def test_a_frozen_bundle_loads_in_process_and_never_runs_itself(monkeypatch):
    """A PyInstaller bundle's executable is tfwizard-gui itself: started with -c it opened
    the wizard, whose start probed again, without end (a chain of processes the bundle
    test left running). Frozen, the libraries load in this process, nothing is spawned."""
    import subprocess
    import sys

    from tfwizard.core import qtlibs

    def no_child(*_a, **_k):
        raise AssertionError("a frozen bundle must not run its own executable")

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(subprocess, "run", no_child)
    failed = qtlibs._load(["libtfwizard-surely-absent.so.9", "libc.so.6"], None)
    assert list(failed) == ["libtfwizard-surely-absent.so.9"]


def test_a_program_started_as_the_probe_never_probes_again(monkeypatch):
    """The probe's child carries PROBE_ENV: a wizard started with it (an interpreter that
    ignores -c) asks nothing of Qt's libraries, so it cannot start another probe."""
    from tfwizard.core import qtlibs
    from tfwizard.gui import app

    def probe(*_a, **_k):
        raise AssertionError("probed again")

    monkeypatch.setattr(qtlibs, "check_qt", probe)
    assert app.qt_cannot_start({qtlibs.PROBE_ENV: "1"}) == ""
