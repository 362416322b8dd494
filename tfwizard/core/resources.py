"""Find the data in resources/, installed (inside the wheel) or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from .errors import KnowledgeError


@cache
def find_resources_dir() -> Path | None:
    """The folder holding tfwizard's data files, or None when it is missing."""
    here = Path(__file__).resolve().parent.parent  # .../tfwizard
    candidates = [
        here / "resources",  # installed wheel: tfwizard/resources
        here.parent / "resources",  # source checkout or editable install
    ]
    for candidate in candidates:
        if (candidate / "knowledge").is_dir():
            return candidate
    return None


def resources_dir() -> Path:
    """Return the folder holding tfwizard's data files."""
    found = find_resources_dir()
    if found is None:
        raise _not_found()
    return found


def _not_found() -> KnowledgeError:
    """The error for a missing data folder. English on purpose, not `_()`: the catalogs
    live in that folder, so without it there is no other language to translate into."""
    return KnowledgeError(
        "tfwizard's data folder (resources/) was not found next to the package.",
        "Reinstall tfwizard (pip install --force-reinstall tfwizard).",
    )


def resource_path(*parts: str) -> Path:
    """Path of one file under resources/."""
    return resources_dir().joinpath(*parts)


def guide_path() -> Path | None:
    """The user guide (guide.md): shipped in the wheel as resources/docs/, read from the
    checkout's docs/ in a source tree or an editable install; None when neither has it."""
    data = find_resources_dir()
    if data is None:
        return None
    for candidate in (data / "docs" / "guide.md", data.parent / "docs" / "guide.md"):
        if candidate.is_file():
            return candidate
    return None


def shell_script(*names: str, **values: str) -> str:
    """The shell of resources/scripts/NAMES joined, for `sh -c`: each file without its
    opening comment block (the shebang and what it says), every `__KEY__` replaced by its
    value. The files are what shellcheck checks (tests/core/building/test_scripts.py)."""
    parts = []
    for name in names:
        lines = resource_path("scripts", name).read_text("utf-8").splitlines()
        while lines and lines[0].startswith("#"):
            lines.pop(0)
        parts.append("\n".join(lines) + "\n")
    text = "".join(parts)
    for key, value in values.items():
        text = text.replace(f"__{key}__", value)
    return text
