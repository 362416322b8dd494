"""Translations without Qt: `_("English text")` looks the text up in a JSON catalog.

The catalogs are `resources/i18n/<lang>.json`, one object `{english: translation}`. The
GUI installs the same catalog into Qt (`tfwizard.gui.i18n`), so one file serves both.
The language: `TFWIZARD_LANG`, else the system locale (`LC_ALL`, `LC_MESSAGES`, `LANG`),
else English; `set_language` changes it at run time. Placeholders stay `{name}` in both
languages and are filled with `.format` after the lookup.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cache

from .errors import KnowledgeError
from .resources import resource_path

#: the languages with a catalog, and how each calls itself (for a language menu)
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
DEFAULT = "en"

_current = DEFAULT


def normalize(code: str) -> str:
    """A locale name ("zh_CN.UTF-8", "zh-Hans", "zh") as one of LANGUAGES, else English."""
    base = code.split(".")[0].split("@")[0].replace("-", "_").strip()
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


@cache
def catalog(lang: str) -> dict[str, str]:
    """The {english: translation} catalog of a language ({} for English)."""
    if lang == DEFAULT:
        return {}
    path = resource_path("i18n", f"{lang}.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KnowledgeError):  # no catalog: English
        return {}
    return {str(k): str(v) for k, v in data.items() if v}


def set_language(code: str) -> str:
    """Use this language from now on; returns the one chosen (after normalising)."""
    global _current
    _current = normalize(code)
    return _current


def language() -> str:
    return _current


def translate(text: str, lang: str | None = None) -> str:
    """The translation of an English source text (the text itself when there is none)."""
    return catalog(lang or _current).get(text, text)


def _(text: str) -> str:
    """Mark a user-visible string and translate it into the current language."""
    return catalog(_current).get(text, text)


set_language(language_from_env())
