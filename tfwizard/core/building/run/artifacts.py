"""What leaves a build container: the wheels and the BEP file, through the engine's API.

`get_archive` streams a folder of the container as a tar, so a remote engine works as a
local one does. Nothing from the container is trusted: a wheel is copied only when it is
a regular file with a wheel's name directly in the wheel folder (`wheel_member_name`),
newer than the build step (a stale wheel is never handed out), to a temporary name first
(a cancel or a full disk leave no partial wheel). The BEP file is masked on disk when the
build had secrets (Bazel repeats its command line in it).
"""

from __future__ import annotations

import io
import os
import re
import secrets
import tarfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from ...docker import client as dockerutil
from ...errors import BuildCancelled
from ...i18n import _
from ...paths import atomic_write
from ...secrets import redact
from .progress import BepSummary, parse_bep
from .record import BuildRecord


def engine_time(text: str) -> float | None:
    """Epoch seconds of the engine's RFC 3339 time with nanoseconds."""
    if not text or text.startswith("0001-"):
        return None
    main, _dot, frac = text.rstrip("Z").partition(".")
    try:
        stamp = datetime.fromisoformat(main + "+00:00").timestamp()
    except ValueError:
        return None
    digits = "".join(ch for ch in frac if ch.isdigit())[:6]
    return stamp + (int(digits) / 10 ** len(digits) if digits else 0.0)


def _archive(container: Any, path: str) -> tarfile.TarFile:
    """A folder or file of the container as a tar read from memory (small files only)."""
    stream, _stat = container.get_archive(path)
    buf = io.BytesIO()
    for chunk in stream:
        buf.write(chunk)
    buf.seek(0)
    return tarfile.open(fileobj=buf, mode="r|*")


def read_archive_file(container: Any, path: str) -> bytes | None:
    """The bytes of one file in the container, None when it is not there."""
    import docker.errors

    try:
        tar = _archive(container, path)
    except docker.errors.NotFound:
        return None
    for member in tar:
        if member.isfile():
            fh = tar.extractfile(member)
            return fh.read() if fh else None
    return None


#: what a wheel file name from the container may look like (PEP 427 characters only)
_WHEEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+\-]{0,250}\.whl")
_COPY_CHUNK = 1 << 20


def wheel_member_name(member: tarfile.TarInfo) -> str | None:
    """The file name to give a tar member of the wheel folder, or None to skip it.

    Only regular files directly in the folder, named like a wheel: no links, devices or
    sub-folders, nothing with "/", "..", a leading "." or a control character, so no name
    from the container can reach outside the output folder.
    """
    if not member.isfile() or member.name.endswith("/"):
        return None
    parts = [p for p in member.name.split("/") if p not in ("", ".")]
    if len(parts) != 1 or not _WHEEL_NAME.fullmatch(parts[0]):
        return None
    return parts[0]


def output_owner(user: str | None) -> tuple[int, int] | None:
    """(uid, gid) to give outputs when tfwizard runs as root for another build uid."""
    if not user or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    uid, _colon, gid = user.partition(":")
    if not (uid.isdigit() and gid.isdigit()) or (uid, gid) == ("0", "0"):
        return None
    return int(uid), int(gid)


def make_out_dir(out_dir: Path, owner: tuple[int, int] | None) -> None:
    """The wheel's folder, made when missing (and given to `owner`, see output_owner)."""
    try:
        if not out_dir.is_dir():
            out_dir.mkdir(parents=True, exist_ok=True)
            if owner is not None:
                os.chown(out_dir, *owner)
    except OSError as exc:
        raise dockerutil.output_error(exc, out_dir / "x.whl") from exc


class _ChunkReader(io.RawIOBase):
    """A read-only file over an iterator of byte chunks (tar streams without buffering)."""

    def __init__(self, chunks: Any) -> None:
        self._chunks = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def extract_wheels(container: Any, wheel_dir: str, out_dir: Path, since: float | None, *,
                    cancelled: Callable[[], bool] = lambda: False,
                    owner: tuple[int, int] | None = None) -> list[Path]:
    """Wheels in wheel_dir written after `since` (engine clock), copied into out_dir.

    Streamed (a GPU wheel is ~600 MB) to a temporary name, then renamed: a cancel, a full
    disk or a lost engine leave no partial wheel behind.
    """
    import docker.errors

    try:
        stream, _stat = container.get_archive(wheel_dir.rstrip("/") + "/.")
    except docker.errors.NotFound:
        return []
    tar = tarfile.open(fileobj=io.BufferedReader(_ChunkReader(stream), _COPY_CHUNK), mode="r|*")
    found: list[tuple[float, Path]] = []
    for member in tar:
        if cancelled():
            break
        name = wheel_member_name(member)
        # a wheel older than this build's Bazel step is stale: never hand it out
        if name is None or (since is not None and member.mtime + 2 < since):
            continue
        fh = tar.extractfile(member)
        if fh is None:
            continue
        target = out_dir / name
        tmp = out_dir / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            with tmp.open("xb") as out:
                while chunk := fh.read(_COPY_CHUNK):
                    if cancelled():
                        break
                    out.write(chunk)
            if cancelled():
                tmp.unlink(missing_ok=True)
                break
            if owner is not None:
                os.chown(tmp, *owner)
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise dockerutil.output_error(exc, target) from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        found.append((member.mtime, target))
    if cancelled():
        for _mtime, path in found:  # all or nothing: a cancelled build hands out no wheel
            path.unlink(missing_ok=True)
        raise BuildCancelled(_("cancelled by the user while copying the wheel; nothing was "
                               "left in {path}").format(path=out_dir))
    return [p for _mtime, p in sorted(found)]


def store_bep(record: BuildRecord, data: bytes | None, *, mask: bool) -> BepSummary | None:
    """Write the BEP file copied out of the container (`data`, None: not copied) into the
    record, masked when the build had secrets, and read its summary (None: no file)."""
    if data is not None:
        atomic_write(record.bep_path, data)
    path = record.bep_path
    if not path.is_file():
        return None
    if mask:
        # BEP repeats the command line (with resolved headers): mask it on disk
        text = path.read_text(encoding="utf-8", errors="replace")
        masked = "\n".join(redact(line, record.secrets) for line in text.split("\n"))
        if masked != text:
            atomic_write(path, masked)
    with path.open(encoding="utf-8", errors="replace") as fh:
        return parse_bep(fh)
