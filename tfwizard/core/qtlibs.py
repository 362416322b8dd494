"""Can Qt open a window here? The system libraries a Qt platform plugin needs, checked
before Qt loads it.

Qt's own message for a missing library names the wrong one (it blames xcb-cursor0 for
any library the xcb plugin fails to load) and then aborts the process. So the wizard asks
first: the libraries are read from the plugin's ELF dynamic section (its DT_NEEDED, and
that of the Qt libraries it pulls in from PySide6's own `Qt/lib`), never from a list that
would age with each PySide6 release; each one outside PySide6 is then loaded, and the
plugin itself last, in a child process, as the dynamic loader would (LD_LIBRARY_PATH, the
ldconfig cache, a library that is there but broken). The child is what crashes if a
library is broken badly enough to crash; this process only reads its report.

Which package holds a library is data: resources/knowledge/system_libs.toml.
No Qt is imported here (the CLI's `detect` runs the same check).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import struct
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .i18n import _

#: a Qt platform -> the plugin file's name under PySide6/Qt/plugins/platforms
PLUGINS = {"xcb": "libqxcb.so", "wayland": "libqwayland.so", "offscreen": "libqoffscreen.so",
           "minimal": "libqminimal.so", "vnc": "libqvnc.so", "eglfs": "libqeglfs.so",
           "linuxfb": "libqlinuxfb.so"}
#: the C and C++ runtime every Python process already has loaded: never missing
_BASE = ("libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libpthread.so",
         "libdl.so", "librt.so")
#: the exit status of `tfwizard-gui` when Qt cannot open a window (3: a missing Python
#: package, app.py)
EXIT_MISSING_LIBRARY = 4
#: what the child process runs: load each library by name, then the plugin by its path,
#: printing one line for each that fails (the loader's own message)
_PROBE = (
    "import ctypes, sys\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        ctypes.CDLL(name)\n"
    "    except OSError as exc:\n"
    "        print(name + '\\t' + str(exc).replace('\\n', ' '), flush=True)\n"
)


@dataclass(frozen=True)
class Missing:
    """A library a platform plugin needs that cannot be loaded, and where it comes from."""

    library: str  # the soname ("libxcb-icccm.so.4") or the plugin's path
    reason: str  # the dynamic loader's message
    debian: str = ""  # the Debian/Ubuntu package that holds it ("" when unknown)
    fedora: str = ""

    def text(self) -> str:
        """"libxcb-icccm.so.4 (Debian/Ubuntu: libxcb-icccm4; Fedora: xcb-util-wm)"."""
        where = "; ".join(f"{name}: {pkg}" for name, pkg in
                          (("Debian/Ubuntu", self.debian), ("Fedora", self.fedora)) if pkg)
        return f"{self.library} ({where})" if where else self.library


@dataclass(frozen=True)
class PlatformCheck:
    """One Qt platform: its plugin, the system libraries it needs, and those that fail."""

    platform: str
    plugin: Path | None
    libraries: tuple[str, ...]
    missing: tuple[Missing, ...]

    @property
    def ok(self) -> bool:
        """The plugin and every library it needs load."""
        return self.plugin is not None and not self.missing


def qt_platforms(env: Mapping[str, str] | None = None) -> list[str]:
    """The platforms Qt will try, in order: QT_QPA_PLATFORM's list ("wayland;xcb"), else
    Wayland first in a Wayland session, then xcb (Qt 6's choice on Linux)."""
    env = os.environ if env is None else env
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return [p.split(":", 1)[0].strip() for p in chosen.split(";") if p.strip()]
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return ["wayland", "xcb"]
    return ["xcb"]


def pyside_qt_dir() -> Path | None:
    """PySide6's bundled Qt (its `Qt/` folder), found without importing PySide6."""
    try:
        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        if (Path(location) / "Qt").is_dir():
            return Path(location) / "Qt"
    return None


def plugin_path(platform: str, qt_dir: Path | None = None) -> Path | None:
    """The platform plugin's file, or None when this PySide6 has none for it."""
    qt_dir = qt_dir or pyside_qt_dir()
    name = PLUGINS.get(platform, f"libq{platform}.so")
    if qt_dir is None:
        return None
    path = qt_dir / "plugins" / "platforms" / name
    return path if path.is_file() else None


def elf_needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of an ELF file (the libraries it links), in order.

    Reads the section headers for .dynamic and its string table; raises ValueError for a
    file that is not a readable ELF shared object.
    """
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise ValueError(f"{path}: not an ELF file")
    wide = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if wide:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x3A)
        sh_fmt, dyn_fmt = end + "IIQQQQIIQQ", end + "qQ"
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", data, 0x2E)
        sh_fmt, dyn_fmt = end + "IIIIIIIIII", end + "iI"
    sections = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize) for i in range(shnum)]
    dynamic = next((s for s in sections if s[1] == 6), None)  # SHT_DYNAMIC
    if dynamic is None:
        return []
    offset, size, link = dynamic[4], dynamic[5], dynamic[6]
    strtab = sections[link][4]
    step = struct.calcsize(dyn_fmt)
    needed = []
    for at in range(offset, offset + size, step):
        tag, value = struct.unpack_from(dyn_fmt, data, at)
        if tag == 0:  # DT_NULL
            break
        if tag == 1:  # DT_NEEDED
            stop = data.index(b"\0", strtab + value)
            needed.append(data[strtab + value:stop].decode())
    return needed


def system_libraries(plugin: Path, qt_dir: Path) -> list[str]:
    """The libraries outside PySide6 that `plugin` needs, directly or through the Qt
    libraries PySide6 bundles (Qt/lib), in the order they are first needed."""
    bundled = qt_dir / "lib"
    found: list[str] = []
    seen: set[str] = set()
    todo = [plugin]
    while todo:
        for name in elf_needed(todo.pop(0)):
            if name in seen:
                continue
            seen.add(name)
            if (bundled / name).is_file():
                todo.append(bundled / name)
            elif not name.startswith(_BASE):
                found.append(name)
    return found


@cache
def _packages() -> dict[str, dict[str, str]]:
    from .resources import find_resources_dir

    data = find_resources_dir()
    if data is None:
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with (data / "knowledge" / "system_libs.toml").open("rb") as f:
        table = tomllib.load(f)
    return {str(k): dict(v) for k, v in table.get("library", {}).items()}


def packages_of(library: str) -> tuple[str, str]:
    """The (Debian/Ubuntu, Fedora) packages that hold a library ("" where unknown)."""
    entry = _packages().get(library, {})
    return str(entry.get("debian", "")), str(entry.get("fedora", ""))


#: set in the probe's environment: a program started with it never probes again (a frozen
#: bundle's executable is the program itself, which ignores -c and would start the wizard,
#: whose start would probe, and so on without end)
PROBE_ENV = "TFWIZARD_QT_PROBE"


def _load(names: list[str], env: Mapping[str, str] | None) -> dict[str, str]:
    """Load each library in a child process; {name: the loader's message} for each that
    fails (a child that dies names the signal). In a frozen bundle, whose executable cannot
    run -c, in this process (a missing library is an OSError; only a broken one could end
    the process, as Qt's own load would)."""
    if getattr(sys, "frozen", False):
        failed: dict[str, str] = {}
        for name in names:
            try:
                ctypes.CDLL(name)
            except OSError as exc:
                failed[name] = str(exc).replace("\n", " ")
        return failed
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", _PROBE, *names],
                          capture_output=True, text=True, timeout=60,
                          env={**(os.environ if env is None else env), PROBE_ENV: "1"},
                          check=False)
    failed = {}
    for line in proc.stdout.splitlines():
        name, _tab, reason = line.partition("\t")
        failed[name] = reason
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [""]
        done = set(failed)
        last = next((n for n in names if n not in done), names[-1] if names else "")
        failed[last] = _("loading it ended the process (exit status {status}) {detail}").format(
            status=proc.returncode, detail=tail[0]).strip()
    return failed


def check_platform(platform: str, env: Mapping[str, str] | None = None,
                   qt_dir: Path | None = None) -> PlatformCheck:
    """Whether Qt's `platform` plugin and every system library it needs load here."""
    qt_dir = qt_dir or pyside_qt_dir()
    plugin = plugin_path(platform, qt_dir)
    if plugin is None or qt_dir is None:
        return PlatformCheck(platform, None, (), ())
    try:
        libraries = system_libraries(plugin, qt_dir)
    except (OSError, ValueError, struct.error, IndexError) as exc:
        return PlatformCheck(platform, plugin, (), (Missing(str(plugin), str(exc)),))
    failed = _load([*libraries, str(plugin)], env)
    missing = [Missing(name, failed[name], *packages_of(name))
               for name in libraries if name in failed]
    if not missing and str(plugin) in failed:  # a broken Qt library of PySide6's own
        missing.append(Missing(str(plugin), failed[str(plugin)]))
    return PlatformCheck(platform, plugin, tuple(libraries), tuple(missing))


def check_qt(env: Mapping[str, str] | None = None) -> list[PlatformCheck]:
    """Check the platforms Qt will try, in order, up to the first that works."""
    checks = []
    for platform in qt_platforms(env):
        check = check_platform(platform, env)
        checks.append(check)
        if check.ok:
            break
    return checks


def usable(checks: list[PlatformCheck]) -> bool:
    """One of the checked platforms can open a window."""
    return any(c.ok for c in checks)


def report(checks: list[PlatformCheck]) -> str:
    """What is missing, by platform, with the packages that hold it and what to run."""
    lines = []
    for check in checks:
        if check.plugin is None:
            lines.append(_("Qt platform {platform}: this PySide6 has no plugin for it.").format(
                platform=check.platform))
            continue
        if check.ok:
            continue
        lines.append(_("Qt platform {platform} needs libraries this system cannot load:")
                     .format(platform=check.platform))
        lines += [f"  {m.text()}: {m.reason}" for m in check.missing]
    debian = sorted({m.debian for c in checks for m in c.missing if m.debian})
    fedora = sorted({m.fedora for c in checks for m in c.missing if m.fedora})
    if debian:
        lines.append(_("Debian/Ubuntu: sudo apt-get install {packages}").format(
            packages=" ".join(debian)))
    if fedora:
        lines.append(_("Fedora: sudo dnf install {packages}").format(packages=" ".join(fedora)))
    return "\n".join(lines)


def summary(checks: list[PlatformCheck]) -> str:
    """One line for a readiness report: which platform works, or what is missing."""
    for check in checks:
        if check.ok:
            return _("the wizard can open a window (Qt platform {platform}: {count} system "
                     "libraries found)").format(platform=check.platform,
                                                count=len(check.libraries))
    if not checks or all(c.plugin is None for c in checks):
        return _("the wizard cannot open here: PySide6 (Qt) is not installed or has no "
                 "platform plugin")
    return _("the wizard cannot open a window: {missing}").format(
        missing=", ".join(m.text() for c in checks for m in c.missing))


if __name__ == "__main__":  # `python -m tfwizard.core.qtlibs`: the same report as the GUI's
    found = check_qt()
    print(summary(found))
    if not usable(found):
        print(report(found))
    sys.exit(0 if usable(found) else EXIT_MISSING_LIBRARY)
