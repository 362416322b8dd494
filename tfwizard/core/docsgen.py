"""Generate docs/recipe-reference.md from the recipe schema, so the reference cannot drift.

Run: python -m tfwizard.core.docsgen > docs/recipe-reference.md
"""

from __future__ import annotations

import json

from .recipe import HOST_PATH_KEYS, RECIPE_SCHEMA, schema_reference


def recipe_reference_markdown() -> str:
    """docs/recipe-reference.md, generated from the recipe schema."""
    lines = [
        "# Recipe reference",
        "",
        f"Generated from the schema (`schema = {RECIPE_SCHEMA}`) by "
        "`python -m tfwizard.core.docsgen`; a test fails when this file is out of date.",
        "",
        "| key | type | default | choices | meaning |",
        "|---|---|---|---|---|",
    ]
    for row in schema_reference():
        default = json.dumps(row["default"])
        choices = " \\| ".join(row["choices"]) if row["choices"] else ""
        kind = "path" if row["key"] in HOST_PATH_KEYS else row["kind"]
        lines.append(f"| `{row['key']}` | {kind} | `{default}` | {choices} | "
                     f"{row['help'].replace('|', '/')} |")
    lines += [
        "",
        "## Paths",
        "",
        "The keys of type *path* name a file or folder on the machine that runs tfwizard: "
        + ", ".join(f"`{key}`" for key in HOST_PATH_KEYS) + ". One rule holds for all of "
        "them, in `tfwizard` commands and in the wizard alike:",
        "",
        "- `~` is your home folder;",
        "- a relative path is relative to the folder of the recipe file, wherever the command "
        "runs (a recipe the wizard has not saved yet: the folder tfwizard was started in);",
        "- `install.python` without a `/` is a command name, looked up on `PATH`.",
        "",
        "Command-line options that name paths (`--out`, `--venv`, `--python`, `--host`, "
        "`--target`) are relative to the folder the command runs in.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(recipe_reference_markdown(), end="")
