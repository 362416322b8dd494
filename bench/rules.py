"""Benchmark: median time of a full rules evaluation per example recipe and host profile,
and of loading the knowledge base. Target: < 2 ms per evaluation (the GUI re-checks on
every change). Run: python bench/rules.py"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfwizard.core.host import HostProfile  # noqa: E402
from tfwizard.core.knowledge import load_knowledge, load_knowledge_from  # noqa: E402
from tfwizard.core.recipe import load_recipe  # noqa: E402
from tfwizard.core.resources import resource_path  # noqa: E402
from tfwizard.core.rules import evaluate  # noqa: E402

HOSTS = ["no-gpu-server", "ada-8.9-driver550", "h100-driver560", "small-laptop"]


def median_ms(fn, repeat: int = 300) -> float:
    for _ in range(20):
        fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    kb = load_knowledge()
    build = HostProfile.load(ROOT / "tests/data/hosts/no-gpu-server.json")
    print(f"{'recipe':45} {'target':22} median ms")
    worst = 0.0
    for path in sorted((ROOT / "recipes").glob("*.toml")):
        recipe = load_recipe(path)
        for name in HOSTS:
            target = HostProfile.load(ROOT / f"tests/data/hosts/{name}.json")
            ms = median_ms(lambda r=recipe, t=target: evaluate(r, build, t, kb))
            worst = max(worst, ms)
            print(f"{path.stem:45} {name:22} {ms:8.3f}")
    folder = resource_path("knowledge")
    kb_ms = median_ms(lambda: load_knowledge_from(folder), repeat=30)
    code = "import tfwizard.core.rules as r; r.load_knowledge()"
    cold = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
        cold.append((time.perf_counter() - t) * 1000)
    base = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append((time.perf_counter() - t) * 1000)
    print(f"\nworst median evaluation: {worst:.3f} ms (target < 2 ms) -> "
          f"{'OK' if worst < 2 else 'MISSED'}")
    print(f"knowledge base load (warm process): {kb_ms:.1f} ms")
    print(f"cold interpreter import rules + load KB: {statistics.median(cold):.0f} ms "
          f"(bare interpreter {statistics.median(base):.0f} ms in the same run)")


if __name__ == "__main__":
    main()
