"""Translations without Qt: `_("English text")` looks the text up in a JSON catalog.

A language's catalog is `resources/i18n/<lang>.json` plus the area files beside it,
`<lang>-<area>.json` (rules, knowledge, reports, ...), each one object `{english:
translation}`; the loader merges them. The GUI installs the same catalog into Qt
(`tfwizard.gui.i18n`), so one set of files serves both front ends.
The language: `TFWIZARD_LANG`, else the system locale (`LC_ALL`, `LC_MESSAGES`, `LANG`),
else English; `set_language` changes it at run time. Placeholders stay `{name}` in both
languages and are filled with `.format` after the lookup.

`TFWIZARD_LANG=pseudo` is a test language: every translated text comes back between
⟦ and ⟧, so text on screen outside those marks is text nobody marked for translation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from .resources import find_resources_dir

#: the languages with a catalog, and how each calls itself (for a language menu)
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
DEFAULT = "en"
PSEUDO = "pseudo"  # not in LANGUAGES: for tests, never offered in a menu

_current = DEFAULT


def normalize(code: str) -> str:
    """A locale name ("zh_CN.UTF-8", "zh-Hans", "zh") as one of LANGUAGES, else English."""
    base = code.split(".")[0].split("@")[0].replace("-", "_").strip()
    if base == PSEUDO:
        return PSEUDO
    if base.lower().startswith("zh"):
        return "zh_CN"
    return DEFAULT


def language_from_env(env: Mapping[str, str] | None = None) -> str:
    """TFWIZARD_LANG, else the first locale variable set, else English."""
    env = os.environ if env is None else env
    for name in ("TFWIZARD_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return normalize(value)
    return DEFAULT


def catalog_files(lang: str) -> list[Path]:
    """`<lang>.json` and its area files `<lang>-*.json`, in a fixed order."""
    data = find_resources_dir()  # never raises: its error message is translated itself
    if data is None:
        return []
    folder = data / "i18n"
    main = folder / f"{lang}.json"
    return ([main] if main.is_file() else []) + sorted(folder.glob(f"{lang}-*.json"))


@cache
def catalog(lang: str) -> dict[str, str]:
    """The {english: translation} catalog of a language ({} for English)."""
    if lang == DEFAULT:
        return {}
    if lang == PSEUDO:
        return _PseudoCatalog()
    merged: dict[str, str] = {}
    for path in catalog_files(lang):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # a broken file: its texts stay English
            continue
        if isinstance(data, dict):
            merged.update({str(k): str(v) for k, v in data.items() if v})
    return merged


class _PseudoCatalog(dict[str, str]):
    """Every text "translated" to ⟦text⟧ (see the module's docstring)."""

    def get(self, key: str, default: str | None = None) -> str:  # type: ignore[override]
        return f"⟦{key}⟧"

    def __bool__(self) -> bool:
        return True


def set_language(code: str) -> str:
    """Use this language from now on; returns the one chosen (after normalising)."""
    global _current
    _current = normalize(code)
    return _current


def language() -> str:
    """The language texts are translated to now ("en", "zh_CN")."""
    return _current


def translate(text: str, lang: str | None = None) -> str:
    """The translation of an English source text (the text itself when there is none)."""
    return catalog(lang or _current).get(text, text)


def _(text: str) -> str:
    """Mark a user-visible string and translate it into the current language."""
    return catalog(_current).get(text, text)


def N_(text: str) -> str:
    """Mark a string for the catalog without translating it now (gettext's N_)."""
    return text


set_language(language_from_env())
