"""docs/guide.md stays true: every command of `tfwizard --help` has a section, every
example parses with the real parser, every wizard page has its screenshot; README and
CONTRIBUTING link the docs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tfwizard.cli import build_parser, capture

ROOT = Path(__file__).resolve().parent.parent
GUIDE = (ROOT / "docs" / "guide.md").read_text()


def _subcommands() -> list[str]:
    status, out, _ = capture(["--help"])
    assert status == 0
    listing = out.split("positional arguments:")[1].split("options:")[0]
    names = re.findall(r"^    ([a-z][a-z-]+)", listing, re.M)
    assert len(names) >= 8, listing
    return names


def _examples() -> list[str]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", GUIDE, re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].split(">", 1)[0].strip()
            if line.startswith("tfwizard "):
                lines.append(line)
    return lines


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_has_a_section_and_an_example(command):
    assert f"\n### {command}\n" in GUIDE, f"docs/guide.md has no section for {command}"
    assert any(e.split()[1] == command for e in _examples()), command


@pytest.mark.parametrize("example", _examples())
def test_every_example_parses(example):
    argv = shlex.split(example)[1:]
    args = build_parser().parse_args(argv)  # raises UsageError on a wrong option
    assert getattr(args, "handler", None) is not None, example


def test_every_wizard_page_has_its_screenshot():
    shots = sorted(p.name for p in (ROOT / "docs" / "screenshots").glob("*.png"))
    assert len(shots) == 12  # eleven pages, the Build page twice: running and finished
    assert "08-build-done.png" in shots
    for name in shots:
        assert f"(screenshots/{name})" in GUIDE, name
    assert len(re.findall(r"^### \d+\. ", GUIDE, re.M)) == 11


def test_links_between_the_docs():
    readme = (ROOT / "README.md").read_text()
    for target in ("docs/guide.md", "docs/recipe-reference.md", "CONTRIBUTING.md"):
        assert f"({target})" in readme, target
        assert (ROOT / target).is_file()
    assert "(recipe-reference.md)" in GUIDE
    assert "(../installer/README.md)" in GUIDE and (ROOT / "installer" / "README.md").is_file()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    for needle in ("releases.toml", "sources.toml", "test_knowledge.py", "tested_configuration",
                   "bench/", "tests/run.sh"):
        assert needle in contributing, needle
