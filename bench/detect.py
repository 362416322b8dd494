"""Cold wall time of host detection in a fresh interpreter (target: under 500 ms).

Runs, each in a new ``python -c`` subprocess, N times:
  startup    the bare interpreter (``pass``), for scale
  import     ``import tfwizard.core.detect`` (what every CLI command pays)
  detect     ``from tfwizard.core.detect import detect_host; detect_host()``
and prints the median and max in milliseconds.

Usage: python bench/detect.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 500.0

CASES = {
    "startup": "pass",
    "import": "import tfwizard.core.detect",
    "detect": "from tfwizard.core.detect import detect_host; detect_host()",
}


def _time_once(code: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=60,
    )
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args(argv)
    results: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):  # interleaved, so a noisy moment hits every case alike
        for name, code in CASES.items():
            results[name].append(_time_once(code))
    print(f"{'case':<8} {'median ms':>10} {'max ms':>8}   ({args.runs} runs, {sys.executable})")
    for name, times in results.items():
        print(f"{name:<8} {statistics.median(times):>10.1f} {max(times):>8.1f}")
    median = statistics.median(results["detect"])
    verdict = "within" if median < TARGET_MS else "OVER"
    print(f"detect median {median:.0f} ms is {verdict} the {TARGET_MS:.0f} ms target")
    return 0 if median < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
