"""Installing tfwizard for real: the desktop entry and icons, pipx (from the source tree and
from a built wheel), and the standalone PyInstaller bundle of the CLI.

The pipx and PyInstaller tests download from PyPI (pipx, pyinstaller, tfwizard's
dependencies) into temporary venvs; they are marked slow. Set TFWIZARD_INSTALLER_REPORT to
a file to get their timings and sizes as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from tfwizard import __version__
from tfwizard.cli import capture
from tfwizard.core.desktop import (
    ICON_SIZES,
    MARKER,
    desktop_entry,
    icon_files,
    quote_exec_arg,
)

ROOT = Path(__file__).resolve().parent.parent
RECIPES = sorted((ROOT / "recipes").glob("*.toml"))
VALIDATE = shutil.which("desktop-file-validate")


def _report(key: str, value: object) -> None:
    """Add a figure to $TFWIZARD_INSTALLER_REPORT (JSON) and print it (pytest -s)."""
    print(f"{key}: {value}")
    path = os.environ.get("TFWIZARD_INSTALLER_REPORT")
    if path:
        report_path = Path(path)
        data = json.loads(report_path.read_text()) if report_path.is_file() else {}
        data[key] = value
        report_path.write_text(json.dumps(data, indent=2) + "\n")


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _validate(path: Path) -> None:
    if VALIDATE is None:
        return
    done = subprocess.run([VALIDATE, str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def _run(argv: list[str], *, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


# -- icons and the desktop entry ---------------------------------------------------------------


def test_icons_in_resources_have_their_sizes_and_the_svg_parses():
    import xml.etree.ElementTree as ET

    files = icon_files()
    for size in ICON_SIZES:
        assert _png_size(files[f"{size}x{size}"]) == (size, size)
    root = ET.parse(files["scalable"]).getroot()
    assert root.tag.endswith("svg") and root.get("viewBox") == "0 0 128 128"


def test_the_packagers_desktop_file_is_the_generated_one_and_valid():
    shipped = ROOT / "installer" / "linux" / "tfwizard.desktop"
    assert shipped.read_text() == desktop_entry("tfwizard-gui")
    _validate(shipped)


def test_tfwizard_gui_without_qt_says_what_to_install():
    """A Python without PySide6 (here: without its site-packages, -S) gets a sentence and
    exit 3, in the user's language, not a traceback."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from tfwizard.gui.app import run; run()"
    for lang, expected in (("en", "PySide6 is not installed in"), ("zh_CN", "中没有安装 PySide6")):
        done = subprocess.run([sys.executable, "-S", "-c", code, str(ROOT)], capture_output=True,
                              text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "TFWIZARD_LANG": lang,
                                   "DISPLAY": ":0"})
        assert done.returncode == 3, done.stderr
        assert expected in done.stderr and "Traceback" not in done.stderr
        assert "pip install PySide6-Essentials qasync" in done.stderr


def test_the_desktop_menu_names_tfwizard_in_chinese_too():
    """A Chinese desktop shows the localized keys (Desktop Entry spec, "Localized values")."""
    import configparser

    entry = configparser.ConfigParser(interpolation=None, strict=True)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read_string(desktop_entry("tfwizard-gui"))
    keys = entry["Desktop Entry"]
    assert keys["GenericName[zh_CN]"] == "TensorFlow 构建向导"
    assert "从源码构建 TensorFlow" in keys["Comment[zh_CN]"]


@pytest.mark.skipif(VALIDATE is None, reason="desktop-file-validate (desktop-file-utils) "
                                             "is not installed")
def test_desktop_file_validate_is_really_run(tmp_path):
    bad = tmp_path / "bad.desktop"
    bad.write_text("[Desktop Entry]\nName=x\n")  # no Type, no Exec
    done = subprocess.run([str(VALIDATE), str(bad)], capture_output=True, text=True)
    assert done.returncode != 0


def test_exec_quoting_follows_the_desktop_entry_spec():
    assert quote_exec_arg("/usr/bin/tfwizard-gui") == "/usr/bin/tfwizard-gui"
    assert quote_exec_arg("/home/a b/tfwizard-gui") == '"/home/a b/tfwizard-gui"'
    assert quote_exec_arg('/x/$y/"z"') == '"/x/\\\\$y/\\\\"z\\\\""'
    assert quote_exec_arg("/x/100%") == '"/x/100%%"'
    with pytest.raises(Exception, match="newline"):
        quote_exec_arg("/x\n/y")


def test_install_desktop_entry_into_xdg_data_home_and_uninstall(tmp_path):
    data = tmp_path / "xdg-data"
    gui = tmp_path / "my apps" / "tfwizard-gui"  # a space: Exec must be quoted
    env = {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    status, out, err = capture(["install-desktop-entry", "--exec", str(gui), "--json"], env)
    assert status == 0, err
    info = json.loads(out)
    entry = data / "applications" / "tfwizard.desktop"
    assert info["entry"] == str(entry) and info["exec"] == str(gui)
    text = entry.read_text()
    assert f'Exec="{gui}"' in text and "Icon=tfwizard" in text and MARKER in text
    _validate(entry)
    for size in ICON_SIZES:
        icon = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "tfwizard.png"
        assert icon.read_bytes() == icon_files()[f"{size}x{size}"].read_bytes()
    svg = data / "icons" / "hicolor" / "scalable" / "apps" / "tfwizard.svg"
    assert svg.is_file() and len(info["icons"]) == len(ICON_SIZES) + 1
    assert not (tmp_path / "home").exists()  # XDG_DATA_HOME wins over ~/.local/share

    status, out, err = capture(["install-desktop-entry", "--uninstall"], env)
    assert status == 0, err
    assert "Removed 5 files" in out and not entry.exists() and not svg.exists()
    status, out, _ = capture(["install-desktop-entry", "--uninstall"], env)
    assert status == 0 and "Nothing to remove" in out


def test_prefix_and_the_default_exec_beside_this_interpreter(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin"}
    status, out, err = capture(["install-desktop-entry", "--prefix", str(tmp_path / "pfx")],
                               env)
    beside = Path(sys.executable).parent / "tfwizard-gui"
    if not beside.is_file():
        assert status == 2 and "tfwizard-gui was not found" in err
        return
    assert status == 0, err
    entry = tmp_path / "pfx" / "share" / "applications" / "tfwizard.desktop"
    assert f"Exec={beside.absolute()}" in entry.read_text()
    _validate(entry)


def test_uninstall_leaves_an_entry_tfwizard_did_not_write(tmp_path):
    apps = tmp_path / "share" / "applications"
    apps.mkdir(parents=True)
    (apps / "tfwizard.desktop").write_text(desktop_entry("/opt/other/tfwizard-gui"))
    status, _, err = capture(["install-desktop-entry", "--prefix", str(tmp_path),
                              "--uninstall"], {"PATH": "/usr/bin"})
    assert status == 2 and "not written by" in err
    assert (apps / "tfwizard.desktop").is_file()


# -- pipx --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pipx(tmp_path_factory) -> Path:
    """pipx from PyPI in a venv of its own."""
    folder = tmp_path_factory.mktemp("pipx") / "venv"
    venv.EnvBuilder(with_pip=True).create(folder)
    _run([str(folder / "bin" / "python"), "-m", "pip", "install", "-q",
          "--disable-pip-version-check", "pipx"])
    return folder / "bin" / "pipx"


def _pipx_env(base: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(base / "home"), "LANG": "C.UTF-8",
            "PIPX_HOME": str(base / "pipx-home"), "PIPX_BIN_DIR": str(base / "bin"),
            "PIPX_MAN_DIR": str(base / "man"), "XDG_DATA_HOME": str(base / "xdg")}


def _check_pipx_install(base: Path, env: dict[str, str]) -> None:
    bindir = base / "bin"
    tfw, gui = bindir / "tfwizard", bindir / "tfwizard-gui"
    assert tfw.exists() and gui.exists()
    done = _run([str(tfw), "--version"], env=env, cwd=base, timeout=60)
    assert done.stdout.strip() == f"tfwizard {__version__}"
    _run([str(tfw), "recipe", "validate", *map(str, RECIPES)], env=env, cwd=base, timeout=60)
    # the data came with it: the knowledge base and the icons, from the pipx venv
    python = base / "pipx-home" / "venvs" / "tfwizard" / "bin" / "python"
    done = _run([str(python), "-c", "import tfwizard.core.resources as r; "
                 "print(r.resources_dir())"], env=env, cwd=base, timeout=60)
    resources = Path(done.stdout.strip())
    assert str(resources).startswith(str(base / "pipx-home"))
    for rel in ("knowledge/releases.toml", "knowledge/failures.toml", "icons/tfwizard.svg",
                "icons/tfwizard-256.png"):
        assert (resources / rel).is_file(), rel
    # tfwizard-gui without a display falls back to the CLI's help and detection
    gui_env = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    done = _run([str(gui)], env=gui_env, cwd=base, timeout=120)
    assert "no display found" in done.stdout and "usage: tfwizard" in done.stdout
    # the desktop entry points at this installation's tfwizard-gui
    _run([str(tfw), "install-desktop-entry"], env=env, cwd=base, timeout=60)
    entry = Path(env["XDG_DATA_HOME"]) / "applications" / "tfwizard.desktop"
    exec_line = next(line for line in entry.read_text().splitlines()
                     if line.startswith("Exec="))
    assert exec_line == f"Exec={base / 'pipx-home' / 'venvs' / 'tfwizard' / 'bin'}/tfwizard-gui"
    _validate(entry)
    # ... and the menu's command opens the wizard (offscreen here), in Chinese too
    _open_from_the_menu(exec_line.removeprefix("Exec="), env, base)


def _open_from_the_menu(command: str, env: dict[str, str], base: Path) -> None:
    """Start what the desktop entry starts; the window must come up and stay up."""
    gui_env = dict(env, QT_QPA_PLATFORM="offscreen", TFWIZARD_LANG="zh_CN",
                   TFWIZARD_DATA_DIR=str(base / "data"))
    with subprocess.Popen([command], env=gui_env, cwd=base, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        try:
            proc.wait(timeout=15)  # a start-up error ends it early
        except subprocess.TimeoutExpired:
            pass
        alive = proc.poll() is None
        proc.terminate()
        try:
            _out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _out, err = proc.communicate()
    assert alive, f"tfwizard-gui exited with {proc.returncode}:\n{err}"
    assert "Traceback" not in err, err


def _pipx_install_and_check(pipx: Path, tmp_path: Path, source: Path, figure: str) -> None:
    """`pipx install SOURCE` into folders under tmp_path (timed), then the checks."""
    env = _pipx_env(tmp_path)
    started = time.monotonic()
    _run([str(pipx), "install", "--pip-args=--disable-pip-version-check", str(source)],
         env=env, cwd=tmp_path)
    _report(figure, round(time.monotonic() - started, 1))
    _check_pipx_install(tmp_path, env)


@pytest.mark.slow
def test_pipx_install_from_the_source_tree(pipx, tmp_path):
    _pipx_install_and_check(pipx, tmp_path, ROOT, "pipx_install_source_s")


# -- PyInstaller -------------------------------------------------------------------------------


def _tree_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def bundler(tmp_path_factory) -> Path:
    """A venv with PyInstaller and tfwizard (from this tree) installed: its python."""
    builder = tmp_path_factory.mktemp("bundler") / "venv"
    venv.EnvBuilder(with_pip=True).create(builder)
    py = builder / "bin" / "python"
    started = time.monotonic()
    _run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "pyinstaller",
          str(ROOT)], cwd=builder)
    _report("pyinstaller_setup_s", round(time.monotonic() - started, 1))
    return py


def _bundle(py: Path, kind: str, tmp_path: Path) -> Path:
    """Build installer/tfwizard.spec for `kind` (cli | gui); the bundle's folder."""
    started = time.monotonic()
    _run([str(py), "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
          "--distpath", str(tmp_path / "dist"), "--workpath", str(tmp_path / "work"),
          str(ROOT / "installer" / "tfwizard.spec")], cwd=tmp_path, timeout=900,
         env={**os.environ, "TFWIZARD_BUNDLE": kind})
    _report(f"pyinstaller_{kind}_build_s", round(time.monotonic() - started, 1))
    bundle = tmp_path / "dist" / ("tfwizard" if kind == "cli" else "tfwizard-gui")
    _report(f"pyinstaller_{kind}_bundle_bytes", _tree_size(bundle))
    return bundle


@pytest.mark.slow
def test_pyinstaller_gui_bundle_opens_the_wizard(bundler, tmp_path):
    """The standalone wizard starts (offscreen, in Chinese) and stays up, with no Python
    around; without a display it falls back to the CLI's help, from the bundle's data."""
    bundle = _bundle(bundler, "gui", tmp_path)
    exe = bundle / "tfwizard-gui"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    done = _run([str(exe)], env=dict(env, TFWIZARD_LANG="zh_CN"), cwd=tmp_path, timeout=120)
    assert "用法" in done.stdout and "tfwizard" in done.stdout  # the catalogs came along
    started = time.monotonic()
    _open_from_the_menu(str(exe), env, tmp_path)
    _report("pyinstaller_gui_checked_s", round(time.monotonic() - started, 1))


@pytest.mark.slow
def test_pyinstaller_cli_bundle_runs_standalone(bundler, tmp_path):
    """Build installer/tfwizard.spec (the CLI bundle) and run it without any Python around."""
    bundle = _bundle(bundler, "cli", tmp_path)
    exe = bundle / "tfwizard"
    assert not list(bundle.rglob("*PySide6*")), "the CLI bundle must not carry Qt"
    # no Python, no source tree: a bare environment in another folder
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    started = time.monotonic()
    done = _run([str(exe), "--version"], env=env, cwd=tmp_path / "work", timeout=60)
    _report("pyinstaller_cli_start_s", round(time.monotonic() - started, 2))
    assert done.stdout.strip() == f"tfwizard {__version__}"
    recipe = ROOT / "recipes" / "tf221-aarch64-cpu.toml"
    done = _run([str(exe), "recipe", "validate", str(recipe)], env=env, cwd=tmp_path,
                timeout=60)
    assert "valid" in done.stdout
    host = ROOT / "tests" / "data" / "hosts" / "aarch64-server.json"
    done = _run([str(exe), "plan", str(recipe), "--host", str(host), "--format", "command"],
                env=env, cwd=tmp_path, timeout=60)
    assert "ml-build-arm64" in done.stdout and "//tensorflow/tools/pip_package:wheel" in done.stdout
    done = _run([str(exe), "--help"], env=env, cwd=tmp_path, timeout=60)
    for command in ("check", "build", "bundle", "install-desktop-entry"):
        assert command in done.stdout
    assert (bundle / "_internal" / "tfwizard" / "core" / "verify" / "probe_tf.py").is_file()
