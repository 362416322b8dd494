"""A watcher over a source folder for "Rebuild on save": one `saved` signal a
short while after the last change to a source file, none for what builds and editors
write on their own (Bazel's bazel-* symlinks, configure's .tf_configure.bazelrc, .git,
editor swap and backup files).

    watch = SourceWatcher(parent, debounce_ms=1500)
    watch.saved.connect(rebuild)
    watch.start(Path("~/src/tensorflow").expanduser())

Files are watched one by one (an in-place write changes no folder), folders for files
that appear, vanish or are replaced by a rename (how many editors save). A tree larger
than `max_paths` (a whole TensorFlow checkout: about 30,000 files) is watched in part:
every folder first (so a save by rename is seen anywhere), then the files under
`tensorflow/` (where kernels and ops live), then the others; `watched` says how many
paths are watched and `skipped` how many were left out.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

#: names never watched, at any depth: what Bazel, configure, git and Python write
IGNORED_NAMES = frozenset({".git", ".tf_configure.bazelrc", "__pycache__", ".cache",
                           ".idea", ".vscode", "4913"})  # 4913: vim's write probe
#: name endings of editor temp and backup files
IGNORED_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".tmp", ".bak", ".orig", ".pyc")
#: at most this many paths (inotify watches are a per-user resource)
MAX_PATHS = 8000
#: the top folder whose files are watched before the others' when not all fit
FIRST_FOLDER = "tensorflow"


def ignored(name: str) -> bool:
    """True for a file or folder name whose changes never start a rebuild."""
    return (name in IGNORED_NAMES or name.startswith(("bazel-", ".#"))
            or (name.startswith("#") and name.endswith("#")) or name.endswith(IGNORED_SUFFIXES))


def _listing(folder: str) -> dict[str, int]:
    """The folder's entries that count (name -> inode, so that a file replaced by a rename
    shows; an in-place write is the file watch's to see). Symlinks are not followed."""
    seen: dict[str, int] = {}
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if not ignored(entry.name):
                    try:
                        seen[entry.name] = entry.inode()
                    except OSError:
                        continue
    except OSError:
        pass
    return seen


class SourceWatcher(QObject):
    """Watches a source tree; `saved(path)` once the changes have settled."""

    saved = Signal(str)

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = 1500,
                 max_paths: int = MAX_PATHS) -> None:
        super().__init__(parent)
        self.root: Path | None = None
        self.max_paths = max_paths
        self.watched = 0
        self.skipped = 0  # paths left out at the max_paths cap
        self.last_changed = ""
        self._fs: QFileSystemWatcher | None = None
        self._listings: dict[str, dict[str, int]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(lambda: self.saved.emit(self.last_changed))

    @property
    def active(self) -> bool:
        """A folder is being watched."""
        return self._fs is not None

    def start(self, root: Path) -> int:
        """Watch `root` (again from scratch); the number of paths watched."""
        self.stop()
        self.root = root
        self._fs = QFileSystemWatcher(self)
        self._fs.fileChanged.connect(self._file_changed)
        self._fs.directoryChanged.connect(self._dir_changed)
        self.watched = self.skipped = 0
        self._add_tree(str(root), first=os.path.join(str(root), FIRST_FOLDER))
        return self.watched

    def stop(self) -> None:
        """Watch nothing; a pending `saved` is dropped."""
        self._timer.stop()
        if self._fs is not None:
            self._fs.deleteLater()
        self._fs = None
        self._listings = {}
        self.watched = self.skipped = 0

    def _add(self, path: str) -> None:
        if self._fs is None:
            return
        if self.watched >= self.max_paths:
            self.skipped += 1
        elif self._fs.addPath(path):
            self.watched += 1

    def _add_tree(self, top: str, first: str = "") -> None:
        """Every folder under `top`, then its files: those under `first` before the rest."""
        files: list[str] = []
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not ignored(d)
                             and not os.path.islink(os.path.join(folder, d)))
            self._add(folder)
            self._listings[folder] = _listing(folder)
            files.extend(os.path.join(folder, n) for n in sorted(names) if not ignored(n))
        if first:
            inside = first + os.sep
            files.sort(key=lambda path: not path.startswith(inside))  # stable: tree order
        for path in files:
            self._add(path)

    def _changed(self, path: str) -> None:
        self.last_changed = path
        self._timer.start()  # restarted by every change: one signal once they settle

    def _file_changed(self, path: str) -> None:
        if self._fs is None or ignored(os.path.basename(path)):
            return
        if os.path.exists(path) and path not in self._fs.files():
            self._add(path)  # saved by a rename: the new file under the old name
        self._changed(path)

    def _dir_changed(self, folder: str) -> None:
        if self._fs is None:
            return
        before = self._listings.get(folder, {})
        now = _listing(folder)
        self._listings[folder] = now
        changed = sorted(n for n in now.keys() | before.keys() if now.get(n) != before.get(n))
        if not changed:
            return  # only ignored names came or went (bazel-out, an editor's swap file)
        watching = set(self._fs.files()) | set(self._fs.directories())
        for name in changed:
            path = os.path.join(folder, name)
            if name in now and path not in watching:
                if os.path.isdir(path) and not os.path.islink(path):
                    self._add_tree(path)
                else:
                    self._add(path)
        self._changed(os.path.join(folder, changed[0]))
