"""The XDG desktop entry and icons for `tfwizard-gui` (no Qt).

`install_desktop_entry()` writes `applications/tfwizard.desktop` and the icons
(`icons/hicolor/<size>/apps/tfwizard.png`, `scalable/apps/tfwizard.svg`) into the XDG
data folder, with an `Exec=` that names the `tfwizard-gui` of this installation by its
absolute path (a pipx or venv install is not on the desktop session's PATH).
The icons come from resources/icons/, the same files the wizard uses for its window.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .i18n import _
from .resources import resource_path

APP_ID = "tfwizard"
ICON_SIZES = (48, 128, 256)
#: written into the entry so that --uninstall only removes what tfwizard wrote
MARKER = "X-tfwizard-Installed=true"
#: characters that make the Desktop Entry spec require quoting an Exec argument
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def icon_files() -> dict[str, Path]:
    """The shipped icons: hicolor size folder ("48x48", ..., "scalable") -> file."""
    files = {f"{s}x{s}": resource_path("icons", f"tfwizard-{s}.png") for s in ICON_SIZES}
    files["scalable"] = resource_path("icons", "tfwizard.svg")
    return files


def quote_exec_arg(arg: str) -> str:
    """One Exec= argument, quoted as the Desktop Entry spec says (then escaped as a string)."""
    if any(c in arg for c in "\n\r"):
        raise UsageError(_("{arg!r}: a command path for a desktop entry cannot hold a "
                           "newline").format(arg=arg))
    if arg and not (set(arg) & _RESERVED) and "=" not in arg and "%" not in arg:
        return arg
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg).replace("%", "%%")
    quoted = f'"{inner}"'
    return quoted.replace("\\", "\\\\")  # the value is a "string": backslashes doubled again


def desktop_entry(exec_path: str, icon: str = APP_ID, *, marker: bool = False) -> str:
    """The text of tfwizard.desktop for this `tfwizard-gui` command."""
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",
        "Name=tfwizard",
        "GenericName=TensorFlow Build Wizard",
        "GenericName[zh_CN]=TensorFlow 构建向导",
        "Comment=Build TensorFlow from source in Docker: detect, check, build, install, verify",
        "Comment[zh_CN]=在 Docker 中从源码构建 TensorFlow：检测、检查、构建、安装、验证",
        f"Exec={quote_exec_arg(exec_path)}",
        f"TryExec={exec_path.replace(chr(92), chr(92) * 2)}",
        f"Icon={icon}",
        "Terminal=false",
        "Categories=Development;Building;",
        "Keywords=TensorFlow;CUDA;ROCm;Bazel;Docker;wheel;",
        "StartupNotify=true",
        f"StartupWMClass={APP_ID}",
    ]
    if marker:
        lines.append(MARKER)
    return "\n".join(lines) + "\n"


def find_gui_command(env: Mapping[str, str] | None = None) -> str:
    """The absolute path of this installation's `tfwizard-gui`.

    Beside the interpreter first (a venv, a pipx venv), beside a frozen bundle's
    executable, then on PATH.
    """
    env = os.environ if env is None else env
    here = Path(sys.executable).parent
    candidates = [here / "tfwizard-gui"]
    if getattr(sys, "frozen", False):
        candidates += [here.parent / "tfwizard-gui" / "tfwizard-gui"]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.absolute())
    found = shutil.which("tfwizard-gui", path=env.get("PATH"))
    if found:
        return str(Path(found).absolute())
    raise UsageError(_("tfwizard-gui was not found beside this tfwizard nor on PATH"),
                     _("Install the GUI (pipx install 'tfwizard[gui]'), or pass --exec PATH."))


def data_home(prefix: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """Where user applications and icons go: PREFIX/share, $XDG_DATA_HOME, ~/.local/share."""
    env = os.environ if env is None else env
    if prefix is not None:
        return prefix.expanduser() / "share"
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():  # the spec says to ignore a relative value
        return Path(xdg)
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "share"


@dataclass(frozen=True)
class DesktopInstall:
    """What installing the desktop entry wrote: the .desktop file and the icons."""

    entry: Path
    icons: tuple[Path, ...]
    exec_path: str


def planned_paths(data: Path) -> tuple[Path, dict[str, Path]]:
    """(the .desktop path, hicolor folder -> icon path) under an XDG data folder."""
    icons = {}
    for size, src in icon_files().items():
        icons[size] = data / "icons" / "hicolor" / size / "apps" / f"{APP_ID}{src.suffix}"
    return data / "applications" / f"{APP_ID}.desktop", icons


def install_desktop_entry(data: Path, exec_path: str) -> DesktopInstall:
    """Write the entry and the icons under `data` (an XDG data folder)."""
    entry, icons = planned_paths(data)
    sources = icon_files()
    written = []
    for size, dest in icons.items():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources[size], dest)
        written.append(dest)
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_name(f".{entry.name}.tmp")
    tmp.write_text(desktop_entry(exec_path, marker=True), encoding="utf-8")
    os.replace(tmp, entry)
    return DesktopInstall(entry, tuple(written), exec_path)


def uninstall_desktop_entry(data: Path) -> list[Path]:
    """Remove what install_desktop_entry wrote; an entry tfwizard did not write is kept."""
    entry, icons = planned_paths(data)
    removed: list[Path] = []
    if entry.is_file():
        if MARKER not in entry.read_text(encoding="utf-8", errors="replace").splitlines():
            raise UsageError(_("{path} was not written by `tfwizard install-desktop-entry`; "
                               "leaving it alone").format(path=entry),
                             _("Remove it yourself if you want it gone."))
        entry.unlink()
        removed.append(entry)
    for dest in icons.values():
        if dest.is_file():
            dest.unlink()
            removed.append(dest)
    return removed
