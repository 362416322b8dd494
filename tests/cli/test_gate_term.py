"""The build and preflight gates in a terminal as `check` is (issue 19, item 11): their
findings on standard error wrapped to its width with a hanging indent, severities
coloured unless NO_COLOR, and plain, one line per finding, when piped. The build gate
runs for real in a pseudo-terminal 60 columns wide; the preflight in-process."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tfwizard.cli import main
from tfwizard.cli.context import Environment

ROOT = Path(__file__).resolve().parents[2]
OLD_DRIVER = ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver520.json"
HOST = ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver550.json"
SGR = re.compile(r"\x1b\[[0-9;]*m")
HEAD = re.compile(r"(ERROR|WARNING|INFO) [A-Z0-9_]+: ")


def cuda_recipe() -> Path:
    return next(p for p in sorted((ROOT / "recipes").glob("*.toml")) if "cuda" in p.name)


def build_in_pty(columns: int, **extra: str) -> tuple[int, str]:
    """`tfwizard build` with standard error on a pty `columns` wide (stdout piped)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    env.update({"TERM": "xterm", "PYTHONPATH": str(ROOT), **extra})
    # the recipe by its path from ROOT (the cwd): the closing note quotes it, and a path
    # longer than the width cannot be wrapped (a deep checkout would fail the width check)
    recipe = cuda_recipe().relative_to(ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "tfwizard", "build", str(recipe),
                             "--host", str(OLD_DRIVER)], stdout=subprocess.PIPE,
                            stderr=follower, stdin=subprocess.DEVNULL, env=env, cwd=ROOT)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    status = proc.wait(timeout=120)
    proc.stdout.close()
    return status, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def assert_wrapped(plain: str, width: int) -> None:
    lines = [line for line in plain.splitlines() if line]
    assert all(len(line) <= width for line in lines), plain
    heads = [i for i, line in enumerate(lines) if HEAD.match(line)]
    assert heads, plain
    follow = [lines[i + 1] for i in heads if i + 1 < len(lines) and not HEAD.match(lines[i + 1])
              and not lines[i + 1].startswith("tfwizard: ")]
    assert follow and all(line.startswith("       ") for line in follow), plain


def test_build_gate_in_a_terminal_wraps_and_colours():
    status, text = build_in_pty(60)
    assert status == 1, text  # the recipe has errors on a driver-520 host: refused
    assert "\x1b[31;1mERROR\x1b[0m" in text  # the severity, coloured
    plain = SGR.sub("", text)
    assert_wrapped(plain, 60)
    assert "tfwizard: " in plain and "--force" in plain  # the closing note, wrapped too


def test_build_gate_honours_no_color():
    status, text = build_in_pty(60, NO_COLOR="1")
    assert status == 1 and "\x1b[" not in text
    assert_wrapped(text, 60)


class Tty(io.StringIO):
    """A standard error that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def preflight(stderr: io.StringIO, tmp_path: Path, **env: str) -> str:
    recipe = tmp_path / "proxy.toml"
    text = (ROOT / "recipes" / "tf221-cpu-portable.toml").read_text()
    recipe.write_text(text + '\n[network]\nhttps_proxy = "${TFWIZARD_TEST_NO_SUCH_PROXY}"\n'
                      if "[network]" not in text else
                      text.replace("[network]", '[network]\nhttps_proxy = '
                                   '"${TFWIZARD_TEST_NO_SUCH_PROXY}"', 1))
    status = main(["build", str(recipe), "--host", str(HOST), "--out", str(tmp_path)],
                  Environment(stdout=io.StringIO(), stderr=stderr,
                              env={"TERM": "xterm", **env}))
    assert status == 1
    return stderr.getvalue()


def test_preflight_gate_wraps_in_a_terminal_and_is_plain_when_piped(tmp_path):
    text = preflight(Tty(), tmp_path, COLUMNS="50")
    assert "PROXY_UNSET" in text and "\x1b[31;1mERROR\x1b[0m" in text
    assert_wrapped(SGR.sub("", text), 50)
    piped = preflight(io.StringIO(), tmp_path, COLUMNS="50")
    assert "\x1b[" not in piped
    line = next(line for line in piped.splitlines() if "PROXY_UNSET" in line)
    assert len(line) > 50 and "TFWIZARD_TEST_NO_SUCH_PROXY" in line  # one line, unwrapped


@pytest.mark.parametrize("columns", ["50"])
def test_preflight_gate_no_color(tmp_path, columns):
    text = preflight(Tty(), tmp_path, COLUMNS=columns, NO_COLOR="1")
    assert "\x1b[" not in text and "PROXY_UNSET" in text
