"""Validation of every string that can reach a bazelrc line, an env answer, a container
command or a path. Commands are argv lists (never shell strings); these checks make
sure a value also cannot break out of the file format it lands in.

Each check returns None when the value is fine, else a sentence saying what is wrong.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from .i18n import _

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_SHELLISH = re.compile(r"(\$\(|`|;|\|\||&&|\$\{)")


def check_text(value: str) -> str | None:
    """Any recipe string: no NUL, newlines or other control characters; bounded length."""
    if len(value) > 4096:
        return _("is {count} characters long; at most 4096").format(count=len(value))
    if _CONTROL.search(value):
        return _("contains a newline or control character")
    return None


def check_name(value: str) -> str | None:
    """Why `value` is not a safe name (letters, digits, . _ -), or None."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,127}", value):
        return _('"{value}" is not a valid name: use letters, digits, ".", "_" and "-" '
                 "(starting with a letter or digit, at most 128)").format(value=value[:60])
    return None


def check_flag(value: str, *, bazel: bool) -> str | None:
    """A compiler flag (CC_OPT_FLAGS entry) or a Bazel flag."""
    err = check_text(value)
    if err:
        return err
    if bazel and not value.startswith("--"):
        return _('"{value}" is not a Bazel flag (flags start with "--")').format(value=value)
    if not bazel and not value.startswith("-"):
        return _('"{value}" is not a compiler flag (flags start with "-")').format(value=value)
    if any(c.isspace() for c in value):
        return _('"{value}" contains white space; give each flag as its own list entry').format(
            value=value)
    if _SHELLISH.search(value) or '"' in value or "\\" in value:
        return _('"{value}" contains shell syntax ($(...), backticks, ;, quotes); not allowed'
                 ).format(value=value)
    if bazel:
        name = value[2:].split("=", 1)[0]
        if name in FORBIDDEN_BAZEL_FLAGS:
            return _('"--{name}" would break out of the build container or its record; not '
                     'allowed').format(name=name)
    return None


#: flags a recipe cannot pass: they change where Bazel reads or writes outside the build,
#: or run arbitrary programs on the host side of the record
FORBIDDEN_BAZEL_FLAGS = frozenset({
    "bazelrc", "output_base", "output_user_root", "install_base", "build_event_json_file",
    "build_event_binary_file", "run_under", "script_path",
})


def check_image(value: str) -> str | None:
    """Why `value` is not an image reference, or None."""
    # [registry[:port]/]name[/name...][:tag][@sha256:digest]
    pattern = (r"([a-z0-9.\-]+(:\d+)?/)?[a-z0-9]+([._\-/][a-z0-9]+)*"
               r"(:[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127})?(@sha256:[a-f0-9]{64})?")
    if not re.fullmatch(pattern, value):
        return _('"{value}" is not a Docker image reference like '
                 'tensorflow/build:2.18-python3.11').format(value=value[:80])
    return None


def check_path_text(value: str) -> str | None:
    """Why `value` is not a safe path text, or None."""
    err = check_text(value)
    if err:
        return err
    if value.startswith("-"):
        return _('"{value}" starts with "-" and would be read as an option').format(value=value)
    if '"' in value:
        return _('"{value}" contains a double quote').format(value=value)
    return None


def check_url(value: str) -> str | None:
    """Why `value` is not a safe URL, or None."""
    err = check_text(value)
    if err:
        return err
    if not re.fullmatch(r"(https?|grpcs?|ssh|git|file)://[^\s\"'`$;]+", value):
        return _('"{value}" is not a URL (http://, https://, grpc://, grpcs://, ssh://, git://, '
                 'file://)').format(value=value[:80])
    return None


def check_git_ref(value: str) -> str | None:
    """Why `value` is not a safe git ref (git check-ref-format, simplified), or None."""
    # git check-ref-format rules, simplified, plus no leading "-"
    if (value.startswith("-") or ".." in value or not re.fullmatch(r"[A-Za-z0-9._/\-]{1,200}", value)
            or value.endswith((".lock", "/", "."))):
        return _('"{value}" is not a git branch, tag or commit').format(value=value[:80])
    return None


def check_env_value(value: str) -> str | None:
    """A value that becomes an environment answer for configure.py."""
    return check_text(value)


def safe_relative(path: str) -> PurePosixPath:
    """A relative path that cannot escape the folder it is joined to."""
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts or any(_CONTROL.search(part) for part in p.parts):
        raise ValueError(_("{path!r} escapes its folder").format(path=path))
    return p


#: system folders: tfwizard never writes outputs into them nor mounts them (or a folder that
#: holds one, like / or /var) into a build container: /var/run holds the Docker socket
SYSTEM_DIRS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
               "/run", "/sbin", "/srv", "/sys", "/usr", "/var/lib", "/var/log", "/var/run",
               "/var/spool", "/var/cache", "/var/mail")


def _real(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(os.fspath(path))))


def _system_dir(real: str) -> str | None:
    """The system folder `real` (a resolved path) is, is inside of, or holds."""
    if os.name != "posix":
        return None
    if real == "/":
        return "/"
    for sysdir in SYSTEM_DIRS:
        if real == sysdir or real.startswith(sysdir + "/") or sysdir.startswith(real + "/"):
            return sysdir
    return None


def check_output_dir(path: str | os.PathLike[str]) -> str | None:
    """Where a wheel may be written: a folder (or one to create) of the user's own.

    Returns what is wrong (a file, not writable, a system folder) or None. Symlinks and
    ".." are resolved first, so neither can smuggle the path into a system folder.
    """
    real = _real(path)
    sysdir = _system_dir(real)
    if sysdir is not None:
        if real == sysdir:
            problem = _("is the system folder {folder} (resolved: {real}); tfwizard writes "
                        "wheels only into folders of your own")
        elif real.startswith(sysdir):
            problem = _("is inside the system folder {folder} (resolved: {real}); tfwizard "
                        "writes wheels only into folders of your own")
        else:
            problem = _("holds the system folder {folder} (resolved: {real}); tfwizard writes "
                        "wheels only into folders of your own")
        return problem.format(folder=sysdir, real=real)
    probe = Path(real)
    if probe.exists() and not probe.is_dir():
        return _("is a file, not a folder")
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return _("cannot be created: {path} is a file, not a folder").format(path=probe)
    if not os.access(probe, os.W_OK | os.X_OK):
        return _("is not writable ({path} does not let you create files)").format(path=probe)
    return None


#: how deep and how many entries the socket scan of a mount source looks (the folder's
#: first levels: a home folder's ~/.gnupg/S.gpg-agent is at depth 2)
SOCKET_SCAN_DEPTH = 3
SOCKET_SCAN_ENTRIES = 20000


def find_socket(real: str, depth: int = SOCKET_SCAN_DEPTH,
                budget: int = SOCKET_SCAN_ENTRIES) -> str | None:
    """A Unix socket in the folder `real` or its first `depth` levels (symlinks not
    followed; at most `budget` entries looked at), or None."""
    import stat

    level = [real]
    for _depth in range(depth + 1):
        deeper: list[str] = []
        for folder in level:
            try:
                entries = os.scandir(folder)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    budget -= 1
                    if budget < 0:
                        return None
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        continue
                    if stat.S_ISSOCK(mode):
                        return entry.path
                    if stat.S_ISDIR(mode):
                        deeper.append(entry.path)
        level = deeper
    return None


def _runtime_dir(real: str, env: Mapping[str, str]) -> str | None:
    """The user's runtime folder ($XDG_RUNTIME_DIR) when `real` is, is in or holds it."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if not runtime or not os.path.isabs(runtime):
        return None
    runtime = os.path.realpath(runtime)
    if real == runtime or real.startswith(runtime + "/") or runtime.startswith(
            real.rstrip("/") + "/"):
        return runtime
    return None


def check_mount_source(path: str | os.PathLike[str],
                       env: Mapping[str, str] | None = None) -> str | None:
    """A host folder bind-mounted into a build container: an existing folder, not a
    system folder nor one holding one (that would hand the build the Docker socket), not
    the user's runtime folder, and holding no socket in its first levels (a build could
    talk to the service behind it: an agent, a session bus, a server of the user's)."""
    real = _real(path)
    sysdir = _system_dir(real)
    if sysdir is not None:
        return _("is or holds the system folder {folder} (resolved: {real}); tfwizard never "
                 "mounts system folders into a build container").format(folder=sysdir, real=real)
    if not os.path.isdir(real):
        return _("is not a folder")
    runtime = _runtime_dir(real, os.environ if env is None else env)
    if runtime is not None:
        return _("is or holds your runtime folder {folder} ($XDG_RUNTIME_DIR, the sockets of "
                 "your session's services); tfwizard never mounts it into a build "
                 "container").format(folder=runtime)
    socket = find_socket(real)
    if socket is not None:
        return _("holds the socket {socket}: a program of the build could talk to the service "
                 "behind it; mount a folder without sockets (e.g. a subfolder that holds "
                 "only the sources)").format(socket=socket)
    return None


def check_mount_file(path: str | os.PathLike[str]) -> str | None:
    """A host file bind-mounted read-only into a build container (a TLS certificate or
    key): an existing regular file (a socket, a device or a folder is refused)."""
    real = _real(path)
    if not os.path.isfile(real):
        return _("is not a regular file (resolved: {real})").format(real=real)
    return None
