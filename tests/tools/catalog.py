"""Extract, update and compile tfwizard's gettext catalogs with Babel.

A maintenance tool (CONTRIBUTING.md, "Translations"); nothing in the package imports it.

    python -m tests.tools.catalog            # extract the texts, update every .po, compile
    python -m tests.tools.catalog compile    # only compile (after editing a .po by hand)

It runs pybabel, in the repository root, with the options below: babel.cfg maps the
Python code to Babel's own extractor and the knowledge base's TOML files to
`extract_knowledge`; the keywords are `_`, `N_`, `tr` and `ngettext`. Locations name the
file without a line number and entries are sorted by text, so moving code does not churn
the .po and branches adding texts rarely touch the same lines. The template (.pot) is not
kept: it is made again from the code each time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from tfwizard import __version__

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "resources" / "locale"
DOMAIN = "tfwizard"
MAPPING = "babel.cfg"
SOURCES = ("tfwizard", "resources/knowledge")
KEYWORDS = ("_", "N_", "tr", "ngettext:1,2")


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(lang: str) -> Path:
    return po_path(lang).with_suffix(".mo")


def languages() -> list[str]:
    """The languages with a .po, by folder name ("zh_CN")."""
    return sorted(p.parents[1].name for p in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def pybabel(*args: str) -> str:
    """Run `pybabel ARGS` in the repository root (where babel.cfg's extractor imports from)."""
    out = subprocess.run([sys.executable, "-m", "babel.messages.frontend", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"pybabel {' '.join(args)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout + out.stderr


def extract(pot: Path) -> None:
    """Write the template of every text the code and the knowledge base mark."""
    pybabel("extract", "-F", MAPPING, "--no-default-keywords",
            *(f"--keyword={k}" for k in KEYWORDS), "--add-comments=TRANSLATORS:",
            "--add-location=file", "--sort-output", "--no-wrap", "--project=tfwizard",
            f"--version={__version__}",
            "-o", str(pot), *SOURCES)


def update(pot: Path) -> None:
    """Bring every .po to the template: new texts added, texts no code uses dropped."""
    pybabel("update", "-i", str(pot), "-d", str(LOCALE), "-D", DOMAIN, "--no-wrap",
            "--ignore-obsolete", "--ignore-pot-creation-date")


def compile_all() -> str:
    """Compile every .po into the .mo beside it (fuzzy entries are left out, as gettext's)."""
    out = pybabel("compile", "-d", str(LOCALE), "-D", DOMAIN, "--statistics")
    if "error:" in out:  # a translation breaks its placeholders: pybabel still exits 0
        raise SystemExit(out)
    return out


def refresh() -> None:
    """Extract, update and compile: what a changed text needs before it is committed."""
    with tempfile.TemporaryDirectory() as tmp:
        pot = Path(tmp) / f"{DOMAIN}.pot"
        extract(pot)
        update(pot)
    print(compile_all(), end="")


def template() -> Any:
    """The template as a babel Catalog, extracted now (for the tests)."""
    from babel.messages.pofile import read_po

    with tempfile.TemporaryDirectory() as tmp:
        pot = Path(tmp) / f"{DOMAIN}.pot"
        extract(pot)
        with pot.open("rb") as f:
            return read_po(f)


# -- the knowledge base's texts -----------------------------------------------------------


@cache
def _shown() -> frozenset[str]:
    from tfwizard.core.knowledge import display_texts

    return frozenset(display_texts())


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def extract_knowledge(fileobj: Any, keywords: Any, comment_tags: Any,
                      options: Any) -> Iterator[tuple[int, str | None, str, list[str]]]:
    """Babel extractor: the strings of one knowledge TOML file that people read translated.

    Which texts those are is `knowledge.display_texts()`'s to say (the code shows them
    through `_()`); this only finds which file holds each, and on which line.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    raw = fileobj.read().decode("utf-8")
    shown = _shown()
    for text in dict.fromkeys(_strings(tomllib.loads(raw))):
        if text in shown:
            at = raw.find(text.split("\n", 1)[0][:60])  # escapes aside, the text's own line
            yield (raw.count("\n", 0, at) + 1 if at >= 0 else 1), None, text, []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("step", nargs="?", choices=("refresh", "compile"), default="refresh")
    args = parser.parse_args(argv)
    if args.step == "compile":
        print(compile_all(), end="")
    else:
        refresh()
    return 0


if __name__ == "__main__":
    sys.exit(main())
