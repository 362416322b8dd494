"""Saving a recipe: atomic, keeping the user's comments, the previous file kept as a
backup, a symlink followed to the file it names."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from pathlib import Path

from .load import parse_recipe
from .schema import Recipe


def save_recipe(recipe: Recipe, path: str | Path, *, backup: bool = True) -> Path:
    """Write the recipe atomically; the previous content is kept as NAME.toml.bak.

    A symlink is followed: the file it points to is edited (and keeps its mode); a file
    with hard links is rewritten in place, so it stays one file."""
    path = Path(path).expanduser()
    text = recipe.to_toml()
    parse_recipe(text, str(path))  # never write a recipe we could not load again
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = target.stat()
    except FileNotFoundError:
        old = None
    if backup and old is not None:
        bak = path.with_name(path.name + ".bak")
        bak.unlink(missing_ok=True)  # a .bak that is a symlink is replaced, not followed
        shutil.copy2(target, bak, follow_symlinks=True)
    if old is not None and old.st_nlink > 1:
        with target.open("r+", encoding="utf-8") as fh:
            fh.write(text)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
        recipe.path = path
        return path
    tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
    try:
        # 0666 less the umask for a new recipe, as any file the user writes
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if old is not None:
                os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode))
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:  # named by the recipe, not by the temporary file beside it
        with contextlib.suppress(OSError):  # a read-only folder refuses even this
            tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    recipe.path = path
    return path
