"""The one owner of NVIDIA driver and CUDA compatibility, and of the version helpers the
rules, advise and the runtime diagnosis share.

Three questions, answered once:
- which driver a CUDA toolkit needs: `driver_for_toolkit` (the driver it shipped with,
  which the PTX it writes needs to JIT-compile) and `driver_floor` (the oldest driver its
  major runs on, CUDA's minor-version compatibility);
- whether a machine's driver meets such a need: `driver_meets`. On WSL2 the driver that
  NVML and nvidia-smi report is the Windows one, numbered differently from the Linux table,
  so there the CUDA version the driver supports decides;
- how a toolkit relates to the CUDA a driver supports: `cuda_support` (native, only by
  minor-version compatibility, or not at all).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from packaging.version import InvalidVersion, Version

from .i18n import _

if TYPE_CHECKING:
    from .host import HostProfile
    from .knowledge import KnowledgeBase

#: how a CUDA toolkit runs on a driver: natively (the driver's CUDA is as new), by
#: minor-version compatibility only (same major, newer minor), or not (a newer major)
Support = Literal["native", "minor", "major"]


# -- version helpers -------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def as_version(text: str | None) -> Version | None:
    """The text as a Version, or None when it is empty or not one (cached: rules ask often)."""
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def major_minor(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of a version text ("12" is (12, 0)), or None when it is not one."""
    v = as_version(text)
    if v is None:
        return None
    parts = v.release + (0,)
    return parts[0], parts[1]


def xy(text: str | None) -> str | None:
    """"x.y" of a version text with at least two parts ("3.11.4" -> "3.11"), else None."""
    v = as_version(text)
    return f"{v.major}.{v.minor}" if v is not None and len(v.release) >= 2 else None


def version_number(text: str) -> float:
    """A version as one comparable number (12.4.1 -> 120401.0; not a version: 0)."""
    v = as_version(text)
    if v is None:
        return 0.0
    parts = (list(v.release) + [0, 0, 0])[:3]
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


# -- toolkit -> driver ----------------------------------------------------------------------


def driver_for_toolkit(kb: KnowledgeBase, cuda: str) -> str | None:
    """The Linux driver CUDA `cuda` ("12.5.1", "12.5") shipped with: the PTX it writes
    JIT-compiles only on that driver or newer. A release without its own row takes the
    first of its minor; a minor newer than every row of its major takes that major's
    newest row, a lower bound (drivers only go up with the toolkit). None: unknown."""
    wanted = as_version(cuda)
    if wanted is None:
        return None
    rows = sorted(((Version(k), v) for k, v in kb.toolkit_driver.items()), key=lambda kv: kv[0])
    key = Version(".".join(map(str, (list(wanted.release) + [0, 0])[:3])))
    exact = [v for k, v in rows if k == key]
    same_minor = [v for k, v in rows if k.release[:2] == wanted.release[:2]]
    lower = [v for k, v in rows if k.major == wanted.major and k < key]
    if exact or same_minor:
        return (exact or same_minor)[0]
    return lower[-1] if lower else None


def driver_floor(kb: KnowledgeBase, cuda: str, system: str = "linux") -> str | None:
    """The oldest driver CUDA `cuda`'s major runs on (minor-version compatibility), in the
    numbering of `system` ("windows" has its own where the table gives one); None: unknown."""
    v = as_version(cuda)
    floor = kb.driver_floor(v.major) if v is not None else None
    if floor is None:
        return None
    return floor.windows if system == "windows" and floor.windows else floor.linux


# -- does a driver meet a need ---------------------------------------------------------------


def driver_meets(host: HostProfile, driver: str | None, cuda: str) -> bool | None:
    """Whether `host`'s driver is at least `driver` (a number in its OS's numbering) or, on
    WSL2, supports CUDA `cuda` (x.y): there the driver is the Windows one, whose number says
    nothing against the Linux table. None: unknown (no driver, or no need known)."""
    nv = host.nvidia
    if host.os.wsl2:
        have, need = major_minor(nv.cuda_driver_version), major_minor(cuda)
        return None if have is None or need is None else have >= need
    have_v, need_v = as_version(nv.driver_version), as_version(driver)
    return None if have_v is None or need_v is None else have_v >= need_v


def runs_major(kb: KnowledgeBase, host: HostProfile, cuda: str) -> bool | None:
    """Whether `host`'s driver runs CUDA `cuda` at all: at least the floor of its major
    (minor-version compatibility). None: unknown."""
    v = as_version(cuda)
    if v is None:
        return None
    floor = driver_floor(kb, cuda, host.os.system)
    if floor is None:
        return None
    return driver_meets(host, floor, f"{v.major}.0")


def runs_jit(kb: KnowledgeBase, host: HostProfile, cuda: str) -> bool | None:
    """Whether `host`'s driver is as new as CUDA `cuda`'s own driver, which JIT-compiling
    its PTX needs (and XLA's parallel compilation). None: unknown."""
    return driver_meets(host, driver_for_toolkit(kb, cuda), cuda)


def needed_text(host: HostProfile, driver: str | None, cuda: str) -> str:
    """The driver a need asks for, as the user reads it: the number, or on WSL2 (where the
    number is the Windows driver's) the CUDA version it must support."""
    if host.os.wsl2:
        return _("a driver that supports CUDA {cuda}").format(cuda=cuda)
    return driver or "-"


def cuda_support(driver_cuda: str | None, cuda: str | None) -> Support | None:
    """How CUDA `cuda` runs on a driver that supports CUDA `driver_cuda` (what NVML and
    nvidia-smi report, on WSL2 too). None: either is unknown."""
    have, want = major_minor(driver_cuda), major_minor(cuda)
    if have is None or want is None:
        return None
    if want <= have:
        return "native"
    return "minor" if want[0] == have[0] else "major"
