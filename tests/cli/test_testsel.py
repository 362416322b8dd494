"""`tfwizard test`'s selection and summary options without an engine: the option errors
that stop before a recipe is read (a bare --summary in front of the recipe, --json with the
summary on standard output)."""

from __future__ import annotations

from tfwizard.cli import capture
from tfwizard.cli.context import ExitStatus


def test_a_bare_summary_before_the_recipe_is_refused():
    status, out, err = capture(["test", "--summary", "my.toml", "//t:all"])
    assert status == ExitStatus.USAGE and out == ""
    assert "my.toml looks like the recipe" in err


def test_json_and_the_summary_on_stdout_exclude_each_other(tmp_path):
    status, _out, err = capture(["test", str(tmp_path / "missing.toml"), "--json",
                                 "--summary"])
    assert status == ExitStatus.USAGE and "--json and --summary" in err
    assert "--list" in capture(["test", "--help"])[1]


def test_the_cli_cap_is_the_core_cap():
    from tfwizard.cli.testsel import DEFAULT_MAX as cli_max
    from tfwizard.core.testloop.select import DEFAULT_MAX as core_max

    assert cli_max == core_max
