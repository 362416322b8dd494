"""Find the data in resources/, installed (inside the wheel) or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .errors import KnowledgeError


@cache
def resources_dir() -> Path:
    """Return the folder holding tfwizard's data files."""
    here = Path(__file__).resolve().parent.parent  # .../tfwizard
    candidates = [
        here / "resources",  # installed wheel: tfwizard/resources
        here.parent / "resources",  # source checkout or editable install
    ]
    for candidate in candidates:
        if (candidate / "knowledge").is_dir():
            return candidate
    raise _not_found()


_reporting = False


def _not_found() -> KnowledgeError:
    """The error for a missing data folder, in the current language where that can be had.

    Translating looks for the catalog in the very folder that is missing, which comes back
    here: that inner call gets a bare error (the catalog stays empty, the text English)."""
    global _reporting
    if _reporting:
        return KnowledgeError("")
    _reporting = True
    try:
        from .i18n import _

        return KnowledgeError(
            _("tfwizard's data folder (resources/) was not found next to the package."),
            _("Reinstall tfwizard (pip install --force-reinstall tfwizard)."),
        )
    finally:
        _reporting = False


def resource_path(*parts: str) -> Path:
    """Path of one file under resources/."""
    return resources_dir().joinpath(*parts)
