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
    raise KnowledgeError(
        "tfwizard's data folder (resources/) was not found next to the package.",
        "Reinstall tfwizard (pip install --force-reinstall tfwizard).",
    )


def resource_path(*parts: str) -> Path:
    """Path of one file under resources/."""
    return resources_dir().joinpath(*parts)
