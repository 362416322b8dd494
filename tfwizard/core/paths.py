"""Where tfwizard keeps its data, how it writes a file there, and the label its Docker
objects carry: leaves every layer reads (records, caches, detection, leftovers)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from .errors import UsageError

#: the label on every container, volume and image tfwizard makes (its sub-labels:
#: io.tfwizard.build, .step, .workspace, .volume, ...)
LABEL = "io.tfwizard"

#: the uid of the user whose tfwizard made the object: on an engine several users share,
#: each acts on their own objects only (clean, attach, the running-build question)
OWNER_LABEL = f"{LABEL}.owner"

DATA_DIR_ENV = "TFWIZARD_DATA_DIR"


def owner() -> str:
    """This user's owner label value: the uid ("" where there is none: Windows)."""
    return str(os.getuid()) if hasattr(os, "getuid") else ""


def own_labels(**extra: str) -> dict[str, str]:
    """The labels of an object tfwizard makes: its own label, the owner, `extra`."""
    return {LABEL: "1", OWNER_LABEL: owner(), **extra}


def own_filter(*labels: str) -> dict[str, list[str]]:
    """A docker list filter: objects with all of `labels` (default: tfwizard's) that
    this user's tfwizard made."""
    return {"label": [*(labels or (LABEL,)), f"{OWNER_LABEL}={owner()}"]}


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """tfwizard's data folder: $TFWIZARD_DATA_DIR, else the platform's user data dir."""
    env = os.environ if env is None else env
    override = env.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("tfwizard"))


def private_dir(path: Path) -> Path:
    """`path` made (with its parents) and kept 0700: tfwizard's data, records and config
    hold what another user of the machine must not read (logs, plans, the consent list)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):  # mkdir(parents=True) would give the parents 0755
        folder.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def atomic_write(path: Path, data: bytes | str, mode: int = 0o600) -> None:
    """Write to a temporary name beside `path`, then rename over it; the file gets `mode`
    (0600: what tfwizard writes into its data folder is the user's alone)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)  # the umask must not widen or narrow it
            fh.write(raw)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.filename is None:  # a write or close (a full disk): name the file meant
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def explain_os_error(exc: OSError) -> UsageError:
    """An ordinary failure of the file system (read-only, no permission, a name too long,
    a full disk) as a usage error naming the path and the fix."""
    import errno

    from .i18n import _

    path = exc.filename or _("a file")
    if exc.filename2:
        path = f"{path} -> {exc.filename2}"
    code = exc.errno
    if code == errno.EROFS:
        why, fix = _("the file system is read-only"), _(
            "Choose a writable folder (for tfwizard's data: set {env}).").format(env=DATA_DIR_ENV)
    elif code in (errno.EACCES, errno.EPERM):
        why, fix = _("permission denied"), _(
            "Choose a folder you may write to, or fix its permissions.")
    elif code == errno.ENAMETOOLONG:
        why, fix = _("a name in the path is too long for the file system"), _(
            "Use shorter folder and file names (most file systems allow 255 bytes a name).")
    elif code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        why, fix = _("no space is left on its disk"), _(
            "Free space on that disk, or choose a folder on another one (for tfwizard's "
            "data: set {env}).").format(env=DATA_DIR_ENV)
    else:
        why, fix = exc.strerror or str(exc), _("Check the path and try again.")
    return UsageError(_("cannot use {path}: {why}").format(path=path, why=why), fix)
