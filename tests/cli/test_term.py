"""`tfwizard check` in a terminal: wrapped to its width, severities coloured unless
NO_COLOR, plain when piped (issue 19, item 11)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from tfwizard.cli import main
from tfwizard.cli.context import Environment

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver520.json"


class Tty(io.StringIO):
    """Standard output that says it is a terminal, as a pty would."""

    def isatty(self) -> bool:
        return True


def check(out: io.StringIO, **env: str) -> str:
    recipe = next(p for p in sorted((ROOT / "recipes").glob("*.toml")) if "cuda" in p.name)
    main(["check", str(recipe), "--host", str(HOST), "-v"],
         Environment(stdout=out, stderr=io.StringIO(), env={"TERM": "xterm", **env}))
    return out.getvalue()


def test_terminal_wraps_with_hanging_indent_and_colours():
    text = check(Tty(), COLUMNS="60")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert "\x1b[" in text  # coloured severities
    assert all(len(line) <= 60 for line in plain.splitlines()), plain
    lines = plain.splitlines()
    heads = [i for i, line in enumerate(lines) if re.match(r"(ERROR|WARNING|INFO) ", line)]
    assert heads
    wrapped = [lines[i + 1] for i in heads if i + 1 < len(lines)
               and not re.match(r"(ERROR|WARNING|INFO) ", lines[i + 1])]
    assert wrapped and all(line.startswith("       ") for line in wrapped)


def test_no_color_and_pipes_stay_plain():
    assert "\x1b[" not in check(Tty(), COLUMNS="60", NO_COLOR="1")
    piped = check(io.StringIO(), COLUMNS="60")
    assert "\x1b[" not in piped
    assert any(len(line) > 60 for line in piped.splitlines())  # not wrapped when piped
