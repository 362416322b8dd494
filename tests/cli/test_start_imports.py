"""What a command imports before its first line of work: every `tfwizard` command is a new
process, so a heavy module a command does not use costs each one its import (the docker SDK
and requests ~0.1 s, asyncio ~20 ms, packaging.requirements ~15 ms). Each case runs in a
fresh interpreter and lists the heavy modules it loaded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: loaded by no command that only reads a recipe or prints help
HEAVY = ("docker", "requests", "urllib3", "asyncio", "grpc", "ssl", "pynvml", "rich",
         "PySide6", "packaging.requirements", "tfwizard.core.remote.reapi", "tfwizard.core.detect",
         "tfwizard.core.advise", "tfwizard.gui")
#: more that `--help` needs none of: it builds every command's parser and nothing else
HELP_ALSO = ("tomlkit", "packaging", "traceback", "tfwizard.core.recipe",
             "tfwizard.core.knowledge", "tfwizard.core.host", "tfwizard.core.building")

RECIPE = str(ROOT / "recipes" / "tf221-cpu-portable.toml")
HOST = str(ROOT / "tests" / "data" / "hosts" / "no-gpu-server.json")


def _loaded(argv: list[str], watched: tuple[str, ...]) -> list[str]:
    """The WATCHED modules (or their submodules) a fresh interpreter has loaded after
    `tfwizard ARGV` ran in it."""
    code = (
        "import contextlib, io, json, sys\n"
        "from tfwizard.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main({argv!r})\n"
        f"watched = {watched!r}\n"
        "print(json.dumps([status, sorted({w for w in watched for m in sys.modules\n"
        "                                  if m == w or m.startswith(w + '.')})]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True, cwd=ROOT)
    status, loaded = json.loads(done.stdout.splitlines()[-1])
    assert status in (0, 1), done.stderr  # advise and check say 1 for what they found
    return loaded


def test_help_loads_only_the_parsers():
    assert _loaded(["--help"], HEAVY + HELP_ALSO) == []


@pytest.mark.parametrize("argv", [
    ["plan", RECIPE, "--host", HOST],
    ["plan", RECIPE, "--host", HOST, "--format", "json"],
    ["check", RECIPE, "--host", HOST],
    ["recipe", "validate", RECIPE],
])
def test_reading_a_recipe_loads_no_engine_client_event_loop_or_detection(argv):
    assert _loaded(argv, HEAVY) == []


def test_the_watch_sees_a_heavy_import():
    # a command that does use one shows it: the check above can fail
    assert "tfwizard.core.advise" in _loaded(["advise", "--host", HOST], HEAVY)
