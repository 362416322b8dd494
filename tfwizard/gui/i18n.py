"""Qt's translation machinery over the core's gettext catalog.

`CatalogTranslator` is a QTranslator whose `translate` answers from the catalog the CLI
uses (`tfwizard.core.i18n.catalog`, compiled from `resources/locale/<lang>/LC_MESSAGES/
tfwizard.po`), so `self.tr(...)` and `QCoreApplication.translate(...)` work the documented
Qt way. `tr` is the helper for code that is not a QObject method. A text with a count goes
through the core's `ngettext`: Qt's plural lookup has no English plural to fall back on.
Qt's own strings (standard dialog buttons) come from the `qtbase_<lang>.qm` that PySide6
ships.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QSettings, QTranslator

from tfwizard.core import i18n

CONTEXT = "tfwizard"


class CatalogTranslator(QTranslator):
    """A QTranslator answering from one language's gettext catalog (context ignored)."""

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang
        self.catalog = i18n.catalog(lang)

    def isEmpty(self) -> bool:
        return isinstance(self.catalog, i18n.Untranslated)

    def language(self) -> str:
        """The catalog's language."""
        return self.lang

    def translate(self, context: str, source_text: str, disambiguation: str | None = None,
                  n: int = -1) -> str:
        """Qt's look-up: the catalog's text, or None for Qt's source text."""
        # None is a null QString: "not translated here", so Qt asks the next translator
        # (qtbase's, for its own buttons) and then falls back to the source text; an
        # empty str or the source text itself would be taken as the translation
        return self.catalog.lookup(source_text)  # type: ignore[return-value]


_installed: list[QTranslator] = []
SETTINGS_KEY = "language"


def _settings() -> QSettings:
    return QSettings("tfwizard", "tfwizard")


def settings() -> QSettings:
    """The app's saved settings (the language, the recent recipes)."""
    return _settings()


def initial_language() -> str:
    """TFWIZARD_LANG, else the language chosen in the menu earlier, else the system's."""
    if os.environ.get("TFWIZARD_LANG"):
        return i18n.language_from_env()
    saved = _settings().value(SETTINGS_KEY, "")
    return i18n.normalize(str(saved)) if saved else i18n.language_from_env()


def save_language(code: str) -> None:
    """Remember the language chosen in the menu for the next start."""
    _settings().setValue(SETTINGS_KEY, i18n.normalize(code))


def install(lang: str) -> str:
    """Switch the application (and the core's `_`) to `lang`; returns the language used."""
    lang = i18n.set_language(lang)
    app = QCoreApplication.instance()
    if app is None:
        return lang
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    if lang != i18n.DEFAULT:
        qt_base = QTranslator()
        if qt_base.load(QLocale(lang), "qtbase", "_",
                        QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            _installed.append(qt_base)
        _installed.append(CatalogTranslator(lang))
    for translator in _installed:
        app.installTranslator(translator)
    return lang


def tr(text: str) -> str:
    """Translate a GUI string outside a QObject method (same catalog as `self.tr`)."""
    return QCoreApplication.translate(CONTEXT, text)
