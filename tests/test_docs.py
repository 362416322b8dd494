from __future__ import annotations

from pathlib import Path

from tfwizard.core.docsgen import recipe_reference_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_recipe_reference_is_generated_from_the_schema():
    text = (ROOT / "docs" / "recipe-reference.md").read_text()
    assert text == recipe_reference_markdown(), (
        "docs/recipe-reference.md is stale: run python -m tfwizard.core.docsgen > "
        "docs/recipe-reference.md")


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    blocks = text.split("```sh\n")
    assert "tfwizard-gui" in blocks[1].split("```")[0]
    assert "bash tests/run.sh" in blocks[2].split("```")[0]
    assert "bash tests/run.sh" in (ROOT / ".ci" / "run").read_text()
