"""Translations without Qt: `_("English text")` looks the text up in a gettext catalog.

English is the source language. Another language's catalog is
`resources/locale/<lang>/LC_MESSAGES/tfwizard.mo`, compiled with Babel from the `.po`
beside it (CONTRIBUTING.md, "Translations"); the knowledge base's texts that are shown
translated are in it too. The .mo is committed beside the .po, not compiled at build
time: an editable install reads the checkout's resources/ with no build step to compile
it, the wheel ships what git tracks, and nothing needs Babel at run time;
tests/test_i18n.py checks that it is the .po compiled.
The GUI installs the same catalog into Qt (`tfwizard.gui.i18n`),
so one catalog serves both front ends. A text with a count goes through
`ngettext(singular, plural, n)`, which picks the language's plural form.
The language: `TFWIZARD_LANG`, else the system locale (`LC_ALL`, `LC_MESSAGES`, `LANG`),
else English; `set_language` changes it at run time. Placeholders stay `{name}` in both
languages and are filled with `.format` after the lookup.

`TFWIZARD_LANG=pseudo` is a test language: every translated text comes back between
⟦ and ⟧, so text on screen outside those marks is text nobody marked for translation.
"""

from __future__ import annotations

import gettext
import os
import struct
from collections.abc import Mapping
from functools import cache

from .resources import find_resources_dir

#: the languages with a catalog, and how each calls itself (for a language menu)
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
DEFAULT = "en"
PSEUDO = "pseudo"  # not in LANGUAGES: for tests, never offered in a menu
DOMAIN = "tfwizard"  # the catalog's file name: resources/locale/<lang>/LC_MESSAGES/tfwizard.mo

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


class Catalog(gettext.GNUTranslations):
    """One language's compiled catalog."""

    # GNUTranslations' parsed entries: msgid -> text, (msgid, form) -> text for a plural
    _catalog: dict[str | tuple[str, int], str]

    def lookup(self, text: str) -> str | None:
        """The catalog's own translation of `text`, None where it has none."""
        return self._catalog.get(text) if text else None


class Untranslated(gettext.NullTranslations):
    """English, or a language whose catalog is missing: every text stays as written."""

    def lookup(self, text: str) -> str | None:
        """None: no text has a translation of its own here."""
        return None


class _Pseudo(gettext.NullTranslations):
    """Every text "translated" to ⟦text⟧ (see the module's docstring)."""

    def gettext(self, message: str) -> str:
        return f"⟦{message}⟧"

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return f"⟦{msgid1 if n == 1 else msgid2}⟧"

    def lookup(self, text: str) -> str:
        """Every text, marked (Qt's own buttons too)."""
        return f"⟦{text}⟧"


@cache
def catalog(lang: str) -> Catalog | Untranslated | _Pseudo:
    """A language's translations, loaded once (English: none)."""
    if lang == PSEUDO:
        return _Pseudo()
    data = find_resources_dir()  # never raises: its error message is translated itself
    if lang == DEFAULT or data is None:
        return Untranslated()
    try:
        return gettext.translation(DOMAIN, data / "locale", [lang], class_=Catalog)
    except (OSError, ValueError, struct.error):  # missing or broken: its texts stay English
        return Untranslated()


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
    # gettext's "" is the catalog's header, never a text of ours
    return catalog(lang or _current).gettext(text) if text else text


def _(text: str) -> str:
    """Mark a user-visible string and translate it into the current language."""
    return translate(text)


def ngettext(singular: str, plural: str, n: int) -> str:
    """Mark a text with a count and translate it in the form `n` takes (English: singular
    for 1, else plural; Chinese: one form)."""
    return catalog(_current).ngettext(singular, plural, n)


def N_(text: str) -> str:
    """Mark a string for the catalog without translating it now (gettext's N_)."""
    return text


set_language(language_from_env())
