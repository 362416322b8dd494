"""Generate docs/recipe-reference.md from the recipe schema, so the reference cannot drift.

Run: python -m tfwizard.core.docsgen > docs/recipe-reference.md
"""

from __future__ import annotations

import json

from .recipe import RECIPE_SCHEMA, schema_reference


def recipe_reference_markdown() -> str:
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
        lines.append(f"| `{row['key']}` | {row['kind']} | `{default}` | {choices} | "
                     f"{row['help'].replace('|', '/')} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(recipe_reference_markdown(), end="")
