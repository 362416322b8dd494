"""tfwizard's closed vocabularies, typed, and the one way each is said to a person.

Data (events, JSON, records, findings) keeps the identifiers below, in English; front
ends show the words made here, in the current language. A value outside a vocabulary is a
type error for mypy (a "WARN" where a Severity belongs), so the CLI, the GUI and the
reports cannot drift apart in what they call the same thing.
"""

from __future__ import annotations

from typing import Literal, get_args

from .i18n import N_, _, translate

#: how bad a finding or a diagnosis is
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)

#: how a build (or a fetch) ended; "running" until it has
BuildStatus = Literal["running", "succeeded", "failed", "cancelled", "error"]
BUILD_STATUSES: tuple[BuildStatus, ...] = get_args(BuildStatus)

#: how an install ended
InstallStatus = Literal["installed", "failed", "cancelled"]

#: the order a build goes through; `ProgressParser` never moves backwards in it
Phase = Literal["prepare", "fetch", "configure", "analyse", "compile", "link", "package",
                "done"]
PHASES: tuple[Phase, ...] = get_args(Phase)

#: what a plan step is for: the runner decides by role, never by a step's name
#: (prepare: the root container that hands the volumes to the build uid; list: a step
#: that only lists files, e.g. the repository cache before and after a fetch)
StepRole = Literal["prepare", "fetch", "configure", "build", "package", "list"]
STEP_ROLES: tuple[StepRole, ...] = get_args(StepRole)


#: the tool that printed a log line a diagnosis rests on (failures.toml's and runtime.toml's
#: `speaker`, the corpus's, and the lines of an unrecognised failure): who speaks says
#: where to look and what to search for
Speaker = Literal["compiler", "linker", "bazel-analysis", "bazel", "fetch", "configure",
                  "python-import", "python", "pip", "cuda-runtime", "xla", "tf-runtime",
                  "docker", "git", "system", "other"]
SPEAKERS: tuple[Speaker, ...] = get_args(Speaker)


_SEVERITY_ORDER: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}


def severity_order(severity: str) -> int:
    """Errors first, then warnings, then notes (for sorting findings and diagnoses)."""
    return _SEVERITY_ORDER.get(severity, len(SEVERITIES))


def severity_word(severity: str, lang: str | None = None) -> str:
    """ERROR, WARNING, INFO: a severity as every front end and report prints it (in
    `lang`, None: the current language)."""
    words = {"error": N_("ERROR"), "warning": N_("WARNING"), "info": N_("INFO")}
    word = words.get(severity)
    return translate(word, lang) if word else severity.upper()


def phase_name(phase: str) -> str:
    """A phase as a person reads it, in the current language ("compile" -> "编译")."""
    names = {"prepare": _("prepare"), "fetch": _("fetch"), "configure": _("configure"),
             "analyse": _("analyse"), "compile": _("compile"), "link": _("link"),
             "package": _("package"), "done": _("done")}
    return names.get(phase, phase)


def status_word(status: str) -> str:
    """A build's, fetch's or install's status (succeeded, failed, ...) as a word; an
    unknown status as it is."""
    words = {"succeeded": _("succeeded"), "failed": _("failed"), "cancelled": _("cancelled"),
             "error": _("error"), "installed": _("installed")}
    return words.get(status, status)


def build_title(status: str) -> str:
    """"Build succeeded" and the like: how a build ended, as a heading."""
    known = {"succeeded": _("Build succeeded"), "failed": _("Build failed"),
             "cancelled": _("Build cancelled"), "error": _("Build error")}
    return known.get(status) or _("Build {status}").format(status=status)


def build_outcome(status: str, message: str) -> str:
    """"Build failed: <message>": how a build ended and why (the CLI, the build's log)."""
    texts = {"succeeded": _("Build succeeded: {message}"),
             "failed": _("Build failed: {message}"),
             "cancelled": _("Build cancelled: {message}"),
             "error": _("Build error: {message}")}
    text = texts.get(status) or _("Build {status}: {message}")
    return text.format(status=status, message=message)


def install_outcome(status: str, message: str) -> str:
    """"Install failed: <message>" for an install that did not install."""
    texts = {"failed": _("Install failed: {message}"),
             "cancelled": _("Install cancelled: {message}")}
    text = texts.get(status) or _("Install {status}: {message}")
    return text.format(status=status, message=message)


def duration_text(seconds: float) -> str:
    """A duration as a person reads it: "1 h 05 min", "2 min 05 s", "5 s"."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return _("{hours} h {minutes} min").format(hours=hours, minutes=f"{minutes:02d}")
    if minutes:
        return _("{minutes} min {seconds} s").format(minutes=minutes, seconds=f"{secs:02d}")
    return _("{seconds} s").format(seconds=secs)


def eta_text(seconds: float | None) -> str:
    """The time left: "ETA: 1 h 05 min", or "ETA: estimating…" before there is one."""
    if seconds is None:
        return _("ETA: estimating…")
    return _("ETA: {time}").format(time=duration_text(seconds))


#: each speaker as a person reads it (translated when shown)
SPEAKER_WORDS: dict[str, str] = {
    "compiler": N_("the compiler"), "linker": N_("the linker"),
    "bazel-analysis": N_("Bazel (analysis)"), "bazel": N_("Bazel"),
    "fetch": N_("Bazel's downloader"), "configure": N_("configure"),
    "python-import": N_("Python (import)"), "python": N_("Python"), "pip": N_("pip"),
    "cuda-runtime": N_("the CUDA driver or runtime"), "xla": N_("XLA"),
    "tf-runtime": N_("TensorFlow"), "docker": N_("Docker"), "git": N_("git"),
    "system": N_("the system (a signal)"), "other": N_("another tool"),
}


def speaker_word(speaker: str, lang: str | None = None) -> str:
    """The tool behind a log line as a person reads it ("compiler" -> "the compiler"), in
    `lang` (None: the current language); an unknown id as it is."""
    word = SPEAKER_WORDS.get(speaker)
    return translate(word, lang) if word else speaker
