from __future__ import annotations

import json
from pathlib import Path

from tfwizard import __version__
from tfwizard.cli import ExitStatus, capture

ROOT = Path(__file__).resolve().parents[2]


def test_version():
    status, out, _ = capture(["--version"])
    assert status == ExitStatus.OK and out.strip() == f"tfwizard {__version__}"


def test_help_lists_commands():
    status, out, _ = capture(["--help"])
    assert status == ExitStatus.OK
    for command in ("detect", "recipe"):
        assert command in out


def test_unknown_command_is_usage_error():
    status, _, err = capture(["frobnicate"])
    assert status == ExitStatus.USAGE and "invalid choice" in err


def test_recipe_validate_examples_exit_0():
    files = [str(p) for p in sorted((ROOT / "recipes").glob("*.toml"))]
    status, out, _ = capture(["recipe", "validate", *files])
    assert status == ExitStatus.OK, out
    assert out.count(": valid") == len(files)


def test_recipe_validate_three_mistakes(tmp_path):
    text = (ROOT / "recipes" / "tf218-cuda-laptop.toml").read_text()
    text = text.replace('"12.5.1"', '"12.5"').replace("jobs = 0 ", 'jobs = "8"')
    text = text.replace('kind = "cuda"', 'kind = "gpu"')
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    status, out, _ = capture(["recipe", "validate", str(bad)])
    assert status == ExitStatus.USAGE
    assert "3 problems" in out
    assert out.count("line ") == 3
    status, out, _ = capture(["recipe", "validate", "--json", str(bad)])
    data = json.loads(out)
    assert not data["valid"] and {p["key"] for p in data["problems"]} == {
        "cuda.version", "build.jobs", "backend.kind"}
    assert all(isinstance(p["line"], int) for p in data["problems"])


def test_recipe_validate_missing_file_and_garbage(tmp_path):
    status, _, err = capture(["recipe", "validate", str(tmp_path / "none.toml")])
    assert status == ExitStatus.USAGE and "no such recipe" in err
    garbage = tmp_path / "g.toml"
    garbage.write_bytes(b"\x00\xff[[[[")
    status, out, err = capture(["recipe", "validate", str(garbage)])
    assert status == ExitStatus.USAGE and "Traceback" not in out + err


def test_recipe_new_writes_a_valid_commented_recipe(tmp_path):
    out_file = tmp_path / "new.toml"
    status, out, _ = capture(["recipe", "new", str(out_file)])
    assert status == ExitStatus.OK, out
    text = out_file.read_text()
    assert text.count("#") > 20
    status, _, _ = capture(["recipe", "validate", str(out_file)])
    assert status == ExitStatus.OK
    status, _, err = capture(["recipe", "new", str(out_file)])
    assert status == ExitStatus.USAGE and "--force" in err


def test_debug_shows_traceback_only_when_asked(tmp_path):
    status, _, err = capture(["recipe", "validate", str(tmp_path / "x.toml")])
    assert "Traceback" not in err
    status, _, err = capture(["--debug", "recipe", "validate", str(tmp_path / "x.toml")])
    assert "Traceback" in err
