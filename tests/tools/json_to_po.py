"""Merge JSON translation files into the gettext catalog, then delete them.

Branches begun before the catalogs moved to gettext add their new translations as
`resources/i18n/<lang>-<branch>.json`, one object `{english text: translation}`. After
merging such a branch, run (CONTRIBUTING.md, "Translations")

    python -m tests.tools.json_to_po              # every resources/i18n/*.json
    python -m tests.tools.json_to_po FILE ...

It first extracts the texts and updates the .po (so the merged code's new texts are
entries), then fills in each file's translations, compiles the .mo, and deletes every file
whose entries all went in (and resources/i18n/ once it is empty). An entry that cannot go in
is listed and stays in its file, and the exit status is 1:
- a text no code marks (the code changed it since: translate the new text in the .po);
- a text the .po already translates differently (the .po keeps its own: choose, then edit
  the .po and delete the entry);
- a text that is now a plural (`ngettext`): translate its forms in the .po.
A translation that fills an empty or fuzzy entry clears the fuzzy mark.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po, write_po

from tests.tools import catalog

JSON_DIR = catalog.ROOT / "resources" / "i18n"


def language_of(path: Path) -> str:
    """`zh_CN-remote.json` and `zh_CN.json` hold zh_CN."""
    return path.stem.split("-", 1)[0]


def merge(po: Any, entries: dict[str, str]) -> dict[str, str]:
    """Put `entries` into the babel Catalog `po`; returns {text: why} for those left out."""
    left: dict[str, str] = {}
    for text, translation in entries.items():
        if not translation.strip():
            continue  # an empty translation is no translation
        message = po.get(text)
        if message is None:
            left[text] = "no code marks this text"
        elif message.pluralizable:
            left[text] = "the text is now a plural (ngettext): translate its forms in the .po"
        elif message.string and message.string != translation and not message.fuzzy:
            left[text] = f"the .po translates it differently: {message.string!r}"
        else:
            message.string = translation
            message.flags.discard("fuzzy")
    return left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("files", nargs="*", type=Path,
                        help="JSON files (default: every resources/i18n/*.json)")
    args = parser.parse_args(argv)
    files = args.files or sorted(JSON_DIR.glob("*.json"))
    if not files:
        print("no JSON translation files to merge")
        return 0
    catalog.refresh()  # the merged code's texts first, so its translations have entries
    leftovers: dict[Path, dict[str, str]] = {}
    for lang in sorted({language_of(f) for f in files}):
        po_file = catalog.po_path(lang)
        if not po_file.is_file():
            raise SystemExit(f"{po_file} is missing: create it with `pybabel init -l {lang}` "
                             "(CONTRIBUTING.md, Translations)")
        with po_file.open("rb") as f:
            po = read_po(f, locale=lang)
        for path in (f for f in files if language_of(f) == lang):
            entries = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(entries, dict):
                raise SystemExit(f"{path}: not a JSON object of {{english: translation}}")
            left = merge(po, {str(k): str(v) for k, v in entries.items()})
            print(f"{path.name}: {len(entries) - len(left)} of {len(entries)} entries merged")
            if left:
                leftovers[path] = left
                path.write_text(json.dumps({k: entries[k] for k in left}, ensure_ascii=False,
                                           indent=2) + "\n", encoding="utf-8")
            else:
                path.unlink()
        out = io.BytesIO()
        # as `pybabel update --no-wrap --ignore-obsolete` writes it (catalog.update)
        write_po(out, po, width=None, ignore_obsolete=True)
        po_file.write_bytes(out.getvalue())
    if JSON_DIR.is_dir() and not any(JSON_DIR.iterdir()):
        JSON_DIR.rmdir()
    catalog.refresh()  # the same formatting as every update, and the .mo
    for path, left in leftovers.items():
        print(f"\n{path} keeps {len(left)} entries:")
        for text, why in left.items():
            print(f"  {text!r}: {why}")
    return 1 if leftovers else 0


if __name__ == "__main__":
    sys.exit(main())
