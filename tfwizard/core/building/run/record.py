"""The build record: everything about one build, on disk, written as it happens.

    <data dir>/builds/<build-id>/
        recipe.toml   the recipe as it was
        plan.json     the resolved plan
        log.txt       every log line, tagged with its channel ("out | ", "err | ", "tfw | ")
        bep.json      Bazel's Build Event Protocol file (the container writes it at /record)
        result.json   how it ended (written last; "running" until then)

The log is flushed after every batch, so a front end that dies loses nothing; replaying
log.txt gives the whole history to a window opened late. The front end that follows a
build holds an advisory lock on its folder (`.lock`), released by the kernel when that
process dies however it dies, so `tfwizard build --attach` can tell a build whose front
end is gone from one that is still being watched.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from ...errors import UsageError
from ...i18n import _
from ...paths import atomic_write, data_dir, private_dir
from ...secrets import redact
from ...streams import STDERR, STDOUT, TAGS, TFWIZARD, untag

_BUILD_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")


def builds_dir(root: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The folder holding every build record: <data dir>/builds (`root` instead of the
    data dir when given)."""
    return (root if root is not None else data_dir(env)) / "builds"


def record_path(build_id: str, *, root: Path | None = None,
                env: Mapping[str, str] | None = None) -> Path:
    """Where the record of build `build_id` is (whether or not it exists)."""
    return builds_dir(root, env) / build_id


def find_record(text: str | None, *, env: Mapping[str, str] | None = None,
                cwd: Path | None = None, root: Path | None = None) -> Path:
    """A build record folder named by a user: a folder (relative to `cwd`), a build id,
    or (None) the latest build. UsageError saying where builds are kept when none fits.

    A folder counts when it holds a result.json or is named like a build id.
    """
    if text:
        path = Path(text).expanduser()
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        if path.is_dir() and ((path / "result.json").is_file() or is_build_id(path.name)):
            return path
        if is_build_id(text) and record_path(text, root=root, env=env).is_dir():
            return record_path(text, root=root, env=env)
        raise UsageError(_("{build}: no such build id or build record folder").format(
                             build=text),
                         _("Builds are kept in {path}.").format(path=builds_dir(root, env)))
    records = list_records(root, env)
    if not records:
        raise UsageError(_("no build records in {path}").format(path=builds_dir(root, env)),
                         _("Run `tfwizard build RECIPE` first, or name a record folder."))
    return records[-1].path


def new_build_id() -> str:
    """Sortable and unique: 20250102-130405-a1b2c3."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def is_build_id(text: str) -> bool:
    """Whether a text looks like a build id (20250102-130405-a1b2c3)."""
    return bool(_BUILD_ID.match(text))


class BuildRecord:
    """One build's folder. Create with `BuildRecord.create`, reopen with `BuildRecord(path)`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.build_id = path.name
        self._log: IO[str] | None = None
        self._lock: IO[bytes] | None = None
        self.lines = 0  # lines written to log.txt so far
        #: resolved secret values to mask (proxy credentials, header tokens): never on disk
        self.secrets: tuple[str, ...] = ()

    @classmethod
    def reopen(cls, path: Path) -> BuildRecord:
        """An existing record, to go on appending to its log (`tfwizard build --attach`).

        A line cut short by a crash mid-write is dropped: it is read again from the
        container, whose log the engine keeps.
        """
        record = cls(path)
        if record.log_path.is_file():
            data = record.log_path.read_bytes()
            keep = data.rfind(b"\n") + 1
            if keep != len(data):
                with record.log_path.open("r+b") as fh:
                    fh.truncate(keep)
            record.lines = data.count(b"\n")
        return record

    def lock(self) -> bool:
        """Take the record's front-end lock; False when another live process holds it."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks, no check
            return True
        fh = (self.path / ".lock").open("a+b")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._lock = fh
        return True

    def unlock(self) -> None:
        """Release the lock `lock()` took."""
        if self._lock is not None:
            self._lock.close()  # closing the descriptor releases the flock
            self._lock = None

    def step_line_counts(self, step: str) -> dict[str, int]:
        """How many stdout/stderr lines the log holds for the last run of `step`.

        Counted from the last `step NAME:` line tfwizard wrote when it started that step.
        """
        counts = {STDOUT: 0, STDERR: 0}
        if not self.log_path.is_file():
            return counts
        marker = f"step {step}: "
        for channel, text in self.replay():
            if channel == TFWIZARD and text.startswith(marker):
                counts = {STDOUT: 0, STDERR: 0}
            elif channel in counts:
                counts[channel] += 1
        return counts

    @classmethod
    def create(cls, build_id: str, *, root: Path | None = None,
               env: Mapping[str, str] | None = None,
               files: Mapping[str, str] | None = None) -> BuildRecord:
        """A new record folder for `build_id` with a "running" result.json; `files`: its
        first files by name instead (result.json among them), written into a hidden
        folder that is then renamed into place: one rename, and nobody sees a record
        that lacks one of them."""
        base = builds_dir(root, env)
        if not base.parent.exists():
            private_dir(base.parent)  # a new data folder is the user's alone
        private_dir(base)
        path = base / build_id
        if files is None:
            path.mkdir(mode=0o700)
            record = cls(path)
            record.write_result({"build_id": build_id, "status": "running"})
            return record
        if path.exists():
            raise FileExistsError(str(path))
        tmp = base / f".{build_id}.{secrets.token_hex(4)}.tmp"
        tmp.mkdir(mode=0o700)
        try:
            for name, text in files.items():
                atomic_write(tmp / name, text)
            os.rename(tmp, path)
        except BaseException:
            for child in tmp.iterdir() if tmp.is_dir() else ():
                child.unlink(missing_ok=True)
            if tmp.is_dir():
                tmp.rmdir()
            raise
        return cls(path)

    # -- files -------------------------------------------------------------------------
    @property
    def log_path(self) -> Path:
        """log.txt: every line, tagged with its channel."""
        return self.path / "log.txt"

    @property
    def bep_path(self) -> Path:
        """bep.json: the Build Event Protocol file Bazel wrote."""
        return self.path / "bep.json"

    @property
    def result_path(self) -> Path:
        """result.json: how the build ended ("running" until then)."""
        return self.path / "result.json"

    def write_recipe(self, text: str) -> None:
        """Keep the recipe the build ran (recipe.toml)."""
        atomic_write(self.path / "recipe.toml", text)

    def write_plan(self, plan_json: str) -> None:
        """Keep the plan the build runs (plan.json)."""
        atomic_write(self.path / "plan.json", plan_json)

    def write_result(self, result: Mapping[str, Any]) -> None:
        """Write result.json (atomically)."""
        atomic_write(self.result_path, json.dumps(dict(result), indent=2) + "\n")

    def read_result(self) -> dict[str, Any]:
        """result.json's data."""
        return json.loads(self.result_path.read_text(encoding="utf-8"))

    # -- log -----------------------------------------------------------------------------
    def append(self, channel: str, lines: Iterable[str]) -> int:
        """Append lines of one channel and flush; returns the number of the first one."""
        if self._log is None:
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._log = os.fdopen(fd, "a", encoding="utf-8", errors="replace")
        first = self.lines + 1
        tag = TAGS[channel]
        secrets = self.secrets
        batch = [f"{tag}{redact(line, secrets)}\n" for line in lines]
        self._log.write("".join(batch))
        self._log.flush()
        self.lines += len(batch)
        return first

    def close(self) -> None:
        """Close log.txt (appending opens it again)."""
        if self._log is not None:
            self._log.close()
            self._log = None

    def replay(self) -> Iterator[tuple[str, str]]:
        """(channel, line) for every line logged so far."""
        yield from read_log(self.log_path)


def read_log(path: Path) -> Iterator[tuple[str, str]]:
    """(channel, text) per line of a record's log.txt; untagged lines count as stdout."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            channel, text = untag(raw.rstrip("\n"))
            yield channel or STDOUT, text


def list_records(root: Path | None = None,
                 env: Mapping[str, str] | None = None) -> list[BuildRecord]:
    """Every build record, oldest first."""
    base = builds_dir(root, env)
    if not base.is_dir():
        return []
    return [BuildRecord(p) for p in sorted(base.iterdir()) if p.is_dir() and is_build_id(p.name)]


def stopped_message(result: Any) -> str:
    """The message of a build tfwizard stopped itself with its own explanation (failed,
    and no step gave an exit code: no Docker, an image it cannot get, a path it cannot
    use), from its result.json's data; "" for any other build. Such a build needs no
    diagnosis of its log: the message is the explanation."""
    if not isinstance(result, Mapping) or result.get("status") != "error" or \
            result.get("exit_code") is not None:
        return ""
    return str(result.get("message") or "")


def record_stopped_message(folder: Path) -> str:
    """stopped_message of a record folder's result.json ("" when it has none readable)."""
    try:
        return stopped_message(json.loads((folder / "result.json").read_text("utf-8")))
    except (OSError, ValueError):
        return ""
