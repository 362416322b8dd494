"""The CLI's own phrasing, shared by its commands.

The vocabulary itself (severity, status and phase words, a build's outcome, durations)
has one owner in the core, `core.vocab`, which the GUI and the reports use too; here are
only the ways the terminal puts those words together.
"""

from __future__ import annotations

from typing import Any

from ..core.i18n import _
from ..core.vocab import eta_text, phase_name

#: what starts a line tfwizard itself says among a build's output or on standard error
NOTE = "tfwizard: "


def progress_text(event: Any) -> str:
    """"progress compile 10/20 actions, ETA: 1 min 05 s - Compiling x.cc" (plain output)."""
    counts = dict(phase=phase_name(event.phase), done=event.done, total=event.total)
    if event.eta_s is not None:
        text = _("progress {phase} {done}/{total} actions, {eta}").format(
            **counts, eta=eta_text(event.eta_s))
    else:
        text = _("progress {phase} {done}/{total} actions").format(**counts)
    return text + (f" - {event.message}" if event.message else "")
