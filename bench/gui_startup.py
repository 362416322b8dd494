"""Time to the first wizard frame: fresh interpreter, offscreen, median of 5 (target < 1.5 s).

    python bench/gui_startup.py

Each run starts a new Python that imports Qt and tfwizard, builds the main window with a
saved host profile (detection is a separate thread in the real app), shows it and waits
until the first frame is painted.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
TARGET_S = 1.5

CHILD = r"""
import time
t0 = time.perf_counter()
import sys
ROOT = sys.argv[1]
sys.path.insert(0, ROOT)
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from tfwizard.core.host import HostProfile
from tfwizard.gui.main_window import MainWindow
host = HostProfile.load(ROOT + "/tests/data/hosts/ada-8.9-driver550.json")
window = MainWindow(host=host)

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            print(time.perf_counter() - t0, flush=True)
            QTimer.singleShot(0, app.quit)
            app.removeEventFilter(self)
        return False

spy = FirstPaint()
app.installEventFilter(spy)
window.show()
app.exec()
"""


def main() -> int:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    times, in_process = [], []
    for _ in range(RUNS):
        # from spawning the interpreter to the first painted frame (the child reports the
        # part after its own interpreter start-up too)
        start = time.perf_counter()
        with subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=env) as proc:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            times.append(time.perf_counter() - start)
            in_process.append(float(line))
            proc.wait(timeout=60)
    median = statistics.median(times)
    print(json.dumps({"runs_s": [round(t, 3) for t in times], "median_s": round(median, 3),
                      "median_after_interpreter_start_s": round(statistics.median(in_process), 3),
                      "target_s": TARGET_S, "ok": median < TARGET_S}))
    return 0 if median < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
