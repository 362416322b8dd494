"""Shared by the benchmarks: the repository on sys.path and a fixture recipe writer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import world  # noqa: E402


def fixture_recipe(path: Path, *, workspace: Path, prefix: str,
                   bazel_flags: tuple[str, ...] = ()) -> Path:
    """A recipe for the TF-shaped fixture in the offline test image."""
    flags = ", ".join(json.dumps(f) for f in bazel_flags)
    path.write_text(f"""schema = 1
name = "bench"
[tensorflow]
version = "2.21.0"
source_dir = "{workspace}"
[backend]
kind = "cpu"
[toolchain]
gcc = "12"
clang = ""
[build]
image = "{world.IMAGE}"
network = "none"
jobs = 2
bazel_flags = [{flags}]
[cache]
volume_prefix = "{prefix}"
""", encoding="utf-8")
    return path


def remove_volumes(client, prefix: str) -> None:
    for vol in client.volumes.list():
        if vol.name.startswith(prefix + "-"):
            vol.remove(force=True)
