"""The front end (tfwizard/front/) in the benchmarks: a server in the bench's own run folder,
and a profile of one served command (where its time went: the client, the fork, the child's
setup, and inside `main` the gates, the plan, the warm exec and the record).

The child's figures come from the server's log (childrun writes one line per command); the
functions' cumulative seconds from a cProfile of the child (TFWIZARD_FRONTEND_PROFILE)."""

from __future__ import annotations

import os
import pstats
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__:
    from . import _common  # noqa: F401  (puts the checkout on sys.path)
else:
    import _common  # noqa: F401

from tests.front.front_world import TFWIZARD, wait_for  # noqa: E402
from tests.front.front_world import Front as _TestFront  # noqa: E402

__all__ = ["TFWIZARD", "Front", "PHASES"]

#: (what, module path suffix, function): the phases of a served `tfwizard build`, by the
#: cumulative time of the function that does each
PHASES = (
    ("main", "tfwizard/cli/__init__.py", "_main"),
    ("parse", "tfwizard/cli/__init__.py", "build_parser"),
    ("gates: check", "tfwizard/cli/gates.py", "check_gate"),
    ("gates: preflight", "tfwizard/cli/gates.py", "preflight_gate"),
    ("plan", "tfwizard/core/build/plan.py", "make_plan"),
    ("prepare (all gates and the plan)", "tfwizard/cli/gates.py", "prepare"),
    ("runner", "tfwizard/cli/build.py", "make_runner"),
    ("follow (exec, wheel, record)", "tfwizard/cli/follow.py", "follow"),
)
_FIGURES = re.compile(r"child (\d+) figures: request-to-fork ([\d.]+) s, setup ([\d.]+) s, "
                      r"go-wait ([\d.]+) s, main ([\d.]+) s, exit ([\d.]+) s, "
                      r"gc (\d+) frozen (\d+) full, (\d+) new modules: ?(.*)")


@dataclass
class Front(_TestFront):
    """The bench's front end: started once, stopped at the end."""

    def start(self) -> None:
        """Wait until the server the first command started listens."""
        wait_for(lambda: "listening on" in self.log(), timeout=60)

    def profile(self, recipe: Path, out: Path, data: Path) -> dict[str, Any]:
        """One served no-op `tfwizard build`, profiled: seconds of each phase."""
        prof = self.folder.parent / "front-profile"
        prof.mkdir(exist_ok=True)
        env = {**self.env, "TFWIZARD_DATA_DIR": str(data)}
        t = time.perf_counter()
        subprocess.run([TFWIZARD, "build", str(recipe), "--out", str(out)], env=env,
                       capture_output=True, check=True, timeout=600)
        plain_s = time.perf_counter() - t  # unprofiled: the child's figures below
        figures = [m for m in _FIGURES.finditer(self.log())][-1]
        t = time.perf_counter()
        subprocess.run([TFWIZARD, "build", str(recipe), "--out", str(out)], capture_output=True,
                       env={**env, "TFWIZARD_FRONTEND_PROFILE": str(prof)}, check=True,
                       timeout=600)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import tfwizard.front.client"], check=True,
                       env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        client_start_s = time.perf_counter() - start
        child_prof = sorted(prof.glob("child-*.prof"))[-1]
        kept = Path(__file__).resolve().parent / "out" / "front-child.prof"
        kept.parent.mkdir(exist_ok=True)
        kept.write_bytes(child_prof.read_bytes())  # for pstats after the run
        stats = pstats.Stats(str(child_prof))
        return {
            "command_s": round(plain_s, 4),
            "python_and_client_import_s": round(client_start_s, 4),
            "request_to_fork_s": float(figures.group(2)),
            "child_setup_s": float(figures.group(3)),
            "child_go_wait_s": float(figures.group(4)),
            "child_main_s": float(figures.group(5)),
            "child_exit_s": float(figures.group(6)),
            "gc_frozen_objects": int(figures.group(7)),
            "child_full_collections": int(figures.group(8)),
            "modules_not_preloaded": figures.group(10).split(),
            "phases_profiled_s": _phases(stats),
            "own_time_top_ms": _own_top(stats),
            "profile": str(kept),
        }


def _own_top(stats: pstats.Stats, count: int = 15) -> dict[str, float]:
    """The functions of the child with the most own time (waits on the engine and Bazel's
    output left out), in ms: where the child's CPU goes around the exec."""
    rows = [(row[2], f"{Path(path).name}:{line}({name})")
            for (path, line, name), row in stats.stats.items()  # type: ignore[attr-defined]
            if name not in ("<method 'poll' of 'select.epoll' objects>",
                            "<method 'recv_into' of '_socket.socket' objects>",
                            "<built-in method posix.read>")]
    return {where: round(own * 1000, 2) for own, where in sorted(rows, reverse=True)[:count]}


def _phases(stats: pstats.Stats) -> dict[str, float]:
    """Cumulative seconds of each of PHASES in a profile (profiled: slower than plain)."""
    found: dict[str, float] = {}
    for (path, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        for what, suffix, func in PHASES:
            if name == func and path.endswith(suffix):
                found[what] = round(found.get(what, 0.0) + row[3], 4)
    return found
