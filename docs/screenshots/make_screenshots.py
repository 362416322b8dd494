"""Screenshots of every wizard page in a real (Xvfb) window, in both languages and at two
screen sizes, in one command:

    python docs/screenshots/make_screenshots.py            # everything (4 sets)
    python docs/screenshots/make_screenshots.py --langs en --sizes 1280x800   # one set

Where they go: docs/screenshots/NN-page.png (English, 1280x800: the guide's and the
README's), docs/screenshots/zh_CN/ (Chinese, 1280x800), and a 1024x700/ folder in each
(the smallest screen the wizard is made for). Each set runs in a process of its own with
an Xvfb screen of its size, so the window is as a user of that screen first sees it
(MainWindow.show_first: within the screen's available area).

Needs what the test world needs (tests/world.py): a Docker engine and the local test image
tfwizard-test/bazel:bookworm (tests/images/build_images.sh), and <repo>/.venv-tf with the
real tensorflow-cpu (made by the tests' `tf_python` fixture, or
`python -m venv .venv-tf && .venv-tf/bin/pip install tensorflow-cpu`), Xvfb, and for
Chinese a CJK font (Debian: fonts-noto-cjk).

Pages 1-7 show the choices for a saved host profile (tests/data/hosts) and a shipped
example recipe. Pages 8-11 show real states, nothing staged: this machine (detected), the
TF-shaped fixture workspace copied to a temporary folder and built for real in Docker
(08-build.png while it runs, with progress and the actions chart; 08-build-done.png when
it has finished, with the wheel's path), the Test page as it opens (09-test.png), that
wheel installed into a new venv (10-install.png), and the verification of the real
tensorflow-cpu in .venv-tf with the closing summary (11-verify.png). The sets share the
build's cache volumes (the first set builds, the others find the actions cached); the
volumes and the temporary folders are removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

TF_PYTHON = ROOT / ".venv-tf" / "bin" / "python"
#: the Install page's interpreter when it exists (Debian's)
SYSTEM_PYTHON = "/usr/bin/python3"
#: how long a real step may take on a loaded 2-core machine
BUILD_TIMEOUT_S = 900
INSTALL_TIMEOUT_S = 300
VERIFY_TIMEOUT_S = 300


LANGS = ("en", "zh_CN")
SIZES = ("1280x800", "1024x700")


def out_dir_for(lang: str, size: str) -> Path:
    """Where a set goes: English 1280x800 at the top (the guide's), Chinese in zh_CN/,
    the small screen in a 1024x700/ folder of each."""
    base = HERE if lang == "en" else HERE / lang
    return base if size == SIZES[0] else base / size


def start_display(size: str) -> tuple[subprocess.Popen[bytes], str]:
    """An Xvfb screen of `size` on a free display number."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        sys.exit("no Xvfb: install xvfb (Debian: apt-get install xvfb)")
    number = next(n for n in range(120, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists()
                  and not Path(f"/tmp/.X{n}-lock").exists())
    proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", f"{size}x24", "-nolisten",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if Path(f"/tmp/.X11-unix/X{number}").exists():
            break
        time.sleep(0.1)
    return proc, f":{number}"


async def settle(seconds: float = 0.4) -> None:
    """Let Qt lay out and paint (the qasync loop runs Qt's events while we sleep)."""
    await asyncio.sleep(seconds)


async def wait_for(what: str, ready: Callable[[], bool], timeout_s: float,
                   status: Callable[[], str] = lambda: "") -> None:
    t0 = last = time.monotonic()
    while not ready():
        now = time.monotonic()
        if now - t0 > timeout_s:
            raise SystemExit(f"timed out after {timeout_s:.0f} s waiting for {what}: {status()}")
        if now - last > 15:
            print(f"  waiting for {what}: {status()}", flush=True)
            last = now
        await asyncio.sleep(0.1)


def type_into(edit: Any, text: str) -> None:
    """As if typed: the field's text and its textEdited signal, which the pages follow."""
    edit.setText(text)
    edit.textEdited.emit(text)


def describe(build: Any) -> str:
    return (f"{build.phase_label.text()} {build.progress.value()}/{build.progress.maximum()} "
            f"{build.result_label.text()}")


def save(window: Any, path: Path, written: list[Path]) -> None:
    window.grab().save(str(path))
    print(path.relative_to(ROOT), flush=True)
    written.append(path)


async def choice_pages(out_dir: Path, written: list[Path]) -> None:
    """Pages 1-7: a saved host profile and a shipped example recipe."""
    from tfwizard.core.host import HostProfile
    from tfwizard.core.recipe import load_recipe
    from tfwizard.gui.main_window import MainWindow
    from tfwizard.gui.pages import PAGE_SLUGS, PageId

    host = HostProfile.load(ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver550.json")
    recipe = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
    if Path(SYSTEM_PYTHON).is_file():  # Source names the venv's interpreter: not this
        recipe = recipe.with_changes({"install.python": SYSTEM_PYTHON})  # machine's own
    window = MainWindow(host=host, recipe=recipe, ask_save=lambda: "discard")
    window.show_first()
    await settle(1.0)
    for page_id in PageId:
        if page_id > PageId.REVIEW:
            break
        reached = window.wizard.go_to(page_id)
        if reached != page_id:
            print(f"stopped at {reached.name} on the way to {page_id.name}")
        await settle()
        save(window, out_dir / f"{int(page_id) + 1:02d}-{PAGE_SLUGS[page_id]}.png", written)
    window.close()


def fixture_recipe(tmp: Path, prefix: str) -> Path:
    """The test world's recipe for the fixture workspace, copied into `tmp`."""
    from tests import world

    world.require_docker()
    world.ensure_images()
    return world.fixture_recipe(tmp / "fixture.toml", workspace=world.copy_workspace(tmp),
                                prefix=prefix, name="fixture")


async def real_pages(out_dir: Path, tmp: Path, prefix: str, written: list[Path]) -> None:
    """Pages 8-11: a real fixture build, the Test page, a real install, the real tensorflow-cpu verified."""
    from tests import world
    from tfwizard.core.detect import detect_host
    from tfwizard.core.recipe import load_recipe
    from tfwizard.gui.main_window import CLOSE_CANCEL, MainWindow
    from tfwizard.gui.pages import PageId

    recipe = load_recipe(fixture_recipe(tmp, prefix))
    window = MainWindow(host=detect_host(), recipe=recipe, ask_close=lambda: CLOSE_CANCEL,
                        ask_save=lambda: "discard")
    window.show_first()
    await settle(1.0)
    wizard = window.wizard
    if wizard.go_to(PageId.BUILD) != PageId.BUILD:
        raise SystemExit("the fixture recipe does not reach the Build page")
    build = wizard.build
    build.start()
    # mid-build: some actions done, more to come, a few points on the chart
    await wait_for("the build's middle", lambda: build.result is not None or (
        build.progress.maximum() > 4
        and build.progress.maximum() * 0.4 <= build.progress.value()
        < build.progress.maximum() * 0.8), BUILD_TIMEOUT_S, lambda: describe(build))
    await settle()
    save(window, out_dir / "08-build.png", written)
    await wait_for("the build's end", lambda: build.result is not None and not build.running,
                   BUILD_TIMEOUT_S)
    if build.result.status != "succeeded":
        raise SystemExit(f"the fixture build {build.result.status}: {build.result.message}")
    await settle()
    save(window, out_dir / "08-build-done.png", written)

    wizard.next()  # the Test page, as it opens: its tests run in the warm container, not here
    type_into(wizard.test.targets_edit, "//tensorflow/core/kernels:all")
    await settle()
    save(window, out_dir / "09-test.png", written)

    wizard.next()
    install = wizard.install
    if Path(SYSTEM_PYTHON).is_file():  # an interpreter path that is the same everywhere
        type_into(install.python_edit, SYSTEM_PYTHON)
    type_into(install.venv_edit, str(tmp / "venv"))
    type_into(install.links_edit, str(world.build_cuda_stub_wheel(tmp / "links").parent))
    install.start()
    await wait_for("the install", lambda: install.result is not None and not install.running,
                   INSTALL_TIMEOUT_S)
    if not install.result.ok:
        raise SystemExit("the install failed: " + install.status.text())
    await settle()
    save(window, out_dir / "10-install.png", written)

    wizard.next()
    verify = wizard.verify
    venv_tf = tmp / "venv-tf"  # .venv-tf under a neutral name: no checkout path shown
    venv_tf.symlink_to(TF_PYTHON.parent.parent, target_is_directory=True)
    type_into(verify.python_edit, str(venv_tf / "bin" / "python"))
    verify.run_verify()
    await wait_for("the verification", lambda: verify.report is not None and not verify.running,
                   VERIFY_TIMEOUT_S)
    await settle()
    save(window, out_dir / "11-verify.png", written)
    window.close()


def remove_volumes(prefix: str) -> None:
    """The sets' cache volumes, and first the warm workspaces that use them (the Build
    page builds warm: its container stays up and holds the volumes)."""
    import docker

    from tests.world import remove_prefixed_volumes

    client = docker.from_env(timeout=120)
    remove_prefixed_volumes(client, prefix)
    client.close()


async def shoot(out_dir: Path, prefix: str) -> list[Path]:
    written: list[Path] = []
    # pages 1-7 show where builds would go: the data folder of the saved profile's user
    # (nothing is written there), not this machine's
    os.environ["TFWIZARD_DATA_DIR"] = "/home/user/.local/share/tfwizard"
    await choice_pages(out_dir, written)
    with tempfile.TemporaryDirectory(prefix="tfwizard-shots-") as tmp:
        os.environ["TFWIZARD_DATA_DIR"] = str(Path(tmp) / "data")
        await real_pages(out_dir, Path(tmp), prefix, written)
    return written


def one_set(lang: str, size: str, prefix: str) -> int:
    """One language at one screen size, on an Xvfb screen of that size (this process)."""
    out_dir = out_dir_for(lang, size)
    out_dir.mkdir(parents=True, exist_ok=True)
    display, name = start_display(size)
    os.environ["DISPLAY"] = name
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    os.environ["TFWIZARD_LANG"] = lang
    for var in [n for n in os.environ if n.startswith("PIP_")]:
        del os.environ[var]  # pip as it comes: no local find-links in the pictures
    os.environ["PIP_CONFIG_FILE"] = os.devnull  # nor from this machine's pip.conf
    # the window's first size, not one a run before left in this machine's settings
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="tfwizard-shots-config-")
    try:
        import qasync
        from PySide6.QtWidgets import QApplication

        app = QApplication(sys.argv[:1])
        from tfwizard.gui import i18n

        i18n.install(lang)
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            written = loop.run_until_complete(shoot(out_dir, prefix))
        print(f"{len(written)} screenshots in {out_dir.relative_to(ROOT)}", flush=True)
        return 0
    finally:
        shutil.rmtree(os.environ["XDG_CONFIG_HOME"], ignore_errors=True)
        display.terminate()
        display.wait(timeout=10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Screenshots of every wizard page.")
    parser.add_argument("--langs", nargs="+", default=list(LANGS), choices=LANGS)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=SIZES)
    parser.add_argument("--one", nargs=3, metavar=("LANG", "SIZE", "PREFIX"),
                        help=argparse.SUPPRESS)  # one set, in the process the others start
    args = parser.parse_args(argv)
    if not TF_PYTHON.exists():
        sys.exit(f"no {TF_PYTHON.relative_to(ROOT)}: see this script's docstring")
    if args.one:
        return one_set(*args.one)
    prefix = f"tfwizard-shots-{uuid.uuid4().hex[:8]}"
    failed = []
    try:
        for lang in args.langs:
            for size in args.sizes:
                print(f"== {lang} {size}", flush=True)
                done = subprocess.run([sys.executable, __file__, "--one", lang, size, prefix],
                                      check=False)
                if done.returncode != 0:
                    failed.append(f"{lang} {size}")
    finally:
        remove_volumes(prefix)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
