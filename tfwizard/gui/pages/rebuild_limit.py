"""Rebuild on save's warning when the source tree has more paths than the watcher takes
(a whole TensorFlow checkout): the status line says how many were left out, its
tooltip what that means and how to narrow the watch."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel

from ..i18n import tr
from ..widgets.source_watch import FIRST_FOLDER, SourceWatcher


def say_watch_limit(status: QLabel, watcher: SourceWatcher, source: Path) -> None:
    """Show on `status` that `watcher` watches only part of `source`."""
    status.setText(tr("Watching {count} of {total} files and folders in {path}: {skipped} "
                      "left out (at most {limit} are watched)").format(
        count=watcher.watched, total=watcher.watched + watcher.skipped, path=source,
        skipped=watcher.skipped, limit=watcher.max_paths))
    status.setToolTip(tr(
        "Every folder is watched, then the files under {first}/, then the others, up to "
        "{limit} paths. A save to one of the {skipped} files left out is seen only when the "
        "editor saves by renaming; a save in place is missed. To watch all you edit, point "
        "the recipe's source folder at a smaller checkout (or a sparse one), or press "
        "Rebuild after saving those files.").format(
        first=FIRST_FOLDER, limit=watcher.max_paths, skipped=watcher.skipped))
