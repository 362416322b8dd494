"""The Install page's words: what will be downloaded before Install is pressed, and the
core's refusals said in the wizard's terms (fields, not command-line flags)."""

from __future__ import annotations

from pathlib import Path

from tfwizard.core.errors import TfWizardError, WheelIncompatible

from ..i18n import tr


def _size_text(size: int) -> str:
    mib = size / 2**20
    if mib >= 1024:
        return tr("{size} GiB").format(size=f"{mib / 1024:.1f}")
    if mib >= 1:
        return tr("{size} MiB").format(size=f"{mib:.0f}")
    return tr("{size} KiB").format(size=f"{max(1.0, size / 1024):.0f}")


def download_note(wheel: str, and_cuda: bool, offline: bool = False) -> str:
    """One line: the wheel's own size when it is a file here, and what pip fetches (nothing
    from an offline package folder)."""
    path = Path(wheel).expanduser() if wheel else None
    size = _size_text(path.stat().st_size) if path is not None and path.suffix == ".whl" \
        and path.is_file() else ""
    if size and offline:
        return tr("The wheel is here ({size}); its dependencies come from the offline "
                  "package folder: nothing is downloaded.").format(size=size)
    if size:
        first = tr("The wheel is here ({size}); pip downloads its dependencies").format(
            size=size)
    elif wheel:
        first = tr("pip downloads {wheel} and its dependencies").format(wheel=wheel)
    else:
        return tr("Choose a wheel: its size and what pip downloads are shown here.")
    if and_cuda:
        return first + tr(", and with [and-cuda] NVIDIA's CUDA libraries: several GiB, the "
                          "largest part of the download.")
    return first + tr(" (tens to hundreds of MiB; nothing is downloaded from an offline "
                      "package folder).")


def error_text(exc: TfWizardError) -> str:
    """The core's error with a hint for this page: the CLI's hint names flags the wizard
    does not have."""
    if isinstance(exc, WheelIncompatible):
        return "\n".join((exc.message, tr(
            "Build the wheel for this interpreter (Python of the wheel, on the Source page), "
            "or choose a matching interpreter in the Interpreter field above.")))
    if "--" in exc.hint:  # a command-line hint (--python, --venv, --create)
        return "\n".join((exc.message, tr("Choose the interpreter or the virtualenv folder "
                                          "above; a missing virtualenv is created.")))
    return str(exc)
