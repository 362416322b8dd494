"""Screenshots of every wizard page in a real (Xvfb) window: docs/screenshots/NN-page.png.

    python docs/screenshots/make_screenshots.py               # English
    python docs/screenshots/make_screenshots.py --lang zh_CN  # docs/screenshots/zh_CN/

Chinese needs a CJK font (Debian: fonts-noto-cjk).

Starts `Xvfb :99` when DISPLAY is unset and uses Qt's xcb platform, so the pictures show
the real window decorations-free rendering, not the offscreen plugin's. The host is a
saved profile (tests/data/hosts) and the recipe a shipped example; the Build, Install and
Verify pages are fed sample events, nothing runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))


def start_display() -> subprocess.Popen[bytes] | None:
    if os.environ.get("DISPLAY"):
        return None
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        sys.exit("no DISPLAY and no Xvfb: install xvfb (Debian: apt-get install xvfb)")
    proc = subprocess.Popen([xvfb, ":99", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.environ["DISPLAY"] = ":99"
    for _ in range(50):
        if Path("/tmp/.X11-unix/X99").exists():
            break
        time.sleep(0.1)
    return proc


def sample_events() -> list[object]:
    from tfwizard.core.build.events import LogLines, PhaseChanged, Progress

    lines = tuple(
        f"[{1200 + i:,} / 23,456] Compiling tensorflow/core/kernels/"
        f"{['cwise_op_add', 'matmul_op', 'conv_ops', 'reduction_ops'][i % 4]}_{i}.cc; "
        f"{i % 7 + 1}s processwrapper-sandbox ... ({8} actions running)"
        for i in range(60))
    return [PhaseChanged("compile", "build"), LogLines("stdout", lines, 1),
            Progress("compile", done=12_345, total=23_456, eta_s=4_520.0,
                     message="Compiling tensorflow/core/kernels/matmul_op_fused.cc; 41s "
                             "processwrapper-sandbox")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Screenshots of every wizard page.")
    parser.add_argument("--lang", default="en", help="en (default) or zh_CN")
    args = parser.parse_args(argv)
    out_dir = HERE if args.lang == "en" else HERE / args.lang
    out_dir.mkdir(exist_ok=True)
    display = start_display()
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    try:
        from PySide6.QtWidgets import QApplication

        app = QApplication(sys.argv[:1])
        from tfwizard.gui import i18n

        i18n.install(args.lang)
        from tfwizard.core.host import HostProfile
        from tfwizard.core.recipe import load_recipe
        from tfwizard.gui.main_window import MainWindow
        from tfwizard.gui.pages import PAGE_SLUGS, PageId

        host = HostProfile.load(ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver550.json")
        recipe = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")
        window = MainWindow(host=host, recipe=recipe)
        window.resize(1100, 860)
        window.show()
        wizard = window.wizard
        written = []
        for page_id in PageId:
            if page_id <= PageId.REVIEW:
                wizard.setStartId(int(PageId.WELCOME))
                reached = wizard.go_to(page_id)
                if reached != page_id:
                    print(f"stopped at {reached.name} on the way to {page_id.name}")
            else:
                wizard.setStartId(int(page_id))
                wizard.restart()
            if page_id == PageId.BUILD:
                for event in sample_events():
                    wizard.build.show_event(event)  # type: ignore[arg-type]
                wizard.build.log.flush_all()
            if page_id == PageId.TEST:
                wizard.test.targets_edit.setText("//tensorflow/core:all")
            if page_id == PageId.INSTALL:
                wizard.state.wheel = "~/.local/share/tfwizard/builds/20250115-120000-a1b2c3/" \
                    "tensorflow-2.18.0-cp311-cp311-linux_x86_64.whl"
                wizard.install.initializePage()
            for _ in range(20):
                app.processEvents()
                time.sleep(0.02)
            path = out_dir / f"{int(page_id) + 1:02d}-{PAGE_SLUGS[page_id]}.png"
            window.grab().save(str(path))
            written.append(path)
        for path in written:
            print(path.relative_to(ROOT))
        window.close()
        return 0
    finally:
        if display is not None:
            display.terminate()
            display.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
