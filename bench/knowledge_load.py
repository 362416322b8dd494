"""Benchmark: loading the knowledge base, and the first use of the official-wheel data
(wheels.toml, read only when something asks for an official wheel).

Prints the median time of `load_knowledge_from` (a fresh load, as each process does once),
of a load followed by the first `official_wheel` question, and of that question on a loaded
knowledge base, all in CPU time. Run: python bench/knowledge_load.py"""

from __future__ import annotations

import statistics
import time

import _common  # noqa: F401  (the repository on sys.path)

from tfwizard.core.knowledge import load_knowledge_from
from tfwizard.core.resources import resource_path


def median_ms(fn, repeat: int = 30) -> float:
    """The median CPU time of `fn` in ms (process time: other work on a shared machine
    does not count)."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append((time.process_time() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    folder = resource_path("knowledge")
    size = (folder / "wheels.toml").stat().st_size

    def load_and_ask() -> None:
        kb = load_knowledge_from(folder)
        kb.official_wheel("2.18.0", "x86_64")

    load = median_ms(lambda: load_knowledge_from(folder))
    both = median_ms(load_and_ask)
    kb = load_knowledge_from(folder)
    kb.official_wheel("2.18.0", "x86_64")
    ask = median_ms(lambda: kb.official_wheel("2.18.0", "x86_64"), repeat=200)
    print(f"wheels.toml: {size / 1024:.0f} KiB")
    print(f"load_knowledge_from:                     {load:7.2f} ms")
    print(f"load + first official_wheel question:    {both:7.2f} ms")
    print(f"official_wheel on a loaded base:         {ask:7.3f} ms")


if __name__ == "__main__":
    main()
