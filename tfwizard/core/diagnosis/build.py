"""Diagnosis: known failure signatures (resources/knowledge/failures.toml) found in a log.

The catalogue is data; this module only loads it and matches it (with logscan: per-line
semantics, streaming for files). `diagnose(lines)` gives one Diagnosis per signature found,
with the 1-based numbers of the lines that matched and the first lines as evidence.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import KnowledgeError
from ..fixes import record_context, resolve_diagnoses
from ..i18n import _
from ..resources import resource_path
from ..vocab import SPEAKERS, Severity
from .literals import line_pattern
from .logscan import LineHit, LineMatcher, ScanResult
from .types import UnrecognisedEvent

if TYPE_CHECKING:
    from ..recipe import Recipe

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


@dataclass(frozen=True)
class FailureSignature:
    """One entry of failures.toml: how a known failure shows in a log, and what to do."""

    id: str
    title: str
    patterns: tuple[re.Pattern[str], ...]
    cause: str
    next_step: str
    recipe_fix: Mapping[str, Any]
    sources: tuple[str, ...]
    exit_codes: tuple[int, ...] = ()
    generic: bool = False  # reported only when no specific signature matched
    #: ids of deeper causes: when one of them is found too, this one is reported after it
    secondary_to: tuple[str, ...] = ()
    #: more patterns, one of which must match somewhere in the log too (the failure that
    #: makes a message matter, not a harmless occurrence of it)
    requires: tuple[re.Pattern[str], ...] = ()
    severity: Severity = "error"  # warning: the build may succeed (and is checked then too)
    context_lines: int = 0  # lines after a match that belong to it (the server's words)
    #: the tool that prints the lines it matches (vocab.SPEAKERS)
    speaker: str = "other"
    #: ids of causes that explain everything this one says: when one of them is found
    #: too, this one is not reported (a download that failed its checksum check is not a
    #: network problem)
    superseded_by: tuple[str, ...] = ()
    #: lines that say the tool got past every earlier match (Bazel's analysis finished
    #: after a mirror it could not reach): a signature whose last hit comes before the
    #: last of these lines is not reported
    cleared_by: tuple[re.Pattern[str], ...] = ()


@dataclass(frozen=True)
class Diagnosis:
    """A failure signature found in a log: where it matched, what it means, the fix."""

    id: str
    title: str
    cause: str
    next_step: str
    recipe_fix: Mapping[str, Any]
    sources: tuple[str, ...]
    lines: tuple[int, ...]  # 1-based line numbers that matched
    #: the first few matching lines (distinct), each with its context lines after it
    excerpt: tuple[str, ...] = field(default=())
    fix_problem: str = ""  # why recipe_fix is empty once resolved (fixes.resolve_diagnoses)
    severity: Severity = "error"  # or "warning": a problem the build went past
    speaker: str = "other"  # the tool that printed the lines (vocab.SPEAKERS)

    def to_dict(self) -> dict[str, Any]:
        """The diagnosis as JSON-ready data."""
        data = asdict(self)
        data["recipe_fix"] = dict(self.recipe_fix)
        return data


def load_failures_from(path: Path, known_sources: Iterable[str] | None = None
                       ) -> tuple[FailureSignature, ...]:
    """Load and check a failures.toml (bad regexes and unknown sources are errors)."""
    from ..tomlcache import load_toml

    try:
        raw = load_toml(path)  # parsed once per content (tomlcache.py)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KnowledgeError(_("{file}: cannot load failure signatures: {error}").format(
            file=path.name, error=exc)) from None
    known = set(known_sources) if known_sources is not None else None
    out: list[FailureSignature] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw.get("failure", [])):
        where = f"{path.name} failure[{i}] {entry.get('id', '?')}"
        try:
            sig = FailureSignature(
                id=entry["id"],
                title=entry["title"],
                patterns=tuple(re.compile(p) for p in entry["patterns"]),
                cause=entry["cause"],
                next_step=entry["next_step"],
                recipe_fix=dict(entry.get("recipe_fix", {})),
                sources=tuple(entry["sources"]),
                exit_codes=tuple(int(c) for c in entry.get("exit_codes", [])),
                generic=bool(entry.get("generic", False)),
                secondary_to=tuple(entry.get("secondary_to", [])),
                requires=tuple(re.compile(p) for p in entry.get("requires", [])),
                severity=entry.get("severity", "error"),  # checked below
                context_lines=int(entry.get("context_lines", 0)),
                speaker=entry["speaker"],
                superseded_by=tuple(entry.get("superseded_by", [])),
                cleared_by=tuple(re.compile(p) for p in entry.get("cleared_by", [])),
            )
        except KeyError as exc:
            raise KnowledgeError(_("{where}: missing key {key}").format(
                where=where, key=exc)) from None
        except re.error as exc:
            raise KnowledgeError(_("{where}: bad pattern: {error}").format(
                where=where, error=exc)) from None
        if sig.id in seen:
            raise KnowledgeError(_("{where}: duplicate id").format(where=where))
        if sig.severity not in ("error", "warning") or not 0 <= sig.context_lines <= 5:
            raise KnowledgeError(_("{where}: severity must be error or warning, "
                                   "context_lines 0 to 5").format(where=where))
        if sig.speaker not in SPEAKERS:
            raise KnowledgeError(_("{where}: speaker must be one of {speakers}").format(
                where=where, speakers=", ".join(SPEAKERS)))
        if not sig.patterns and not sig.exit_codes:
            raise KnowledgeError(_("{where}: needs patterns or exit_codes").format(where=where))
        if known is not None and (not sig.sources or not set(sig.sources) <= known):
            raise KnowledgeError(_("{where}: sources must be keys of sources.toml").format(
                where=where))
        seen.add(sig.id)
        out.append(sig)
    for sig in out:
        unknown = set(sig.secondary_to) | set(sig.superseded_by)
        if not unknown <= seen:
            raise KnowledgeError(_("{where}: secondary_to and superseded_by must name "
                                   "known ids ({ids})").format(
                where=f"{path.name} {sig.id}", ids=", ".join(sorted(unknown - seen))))
    return tuple(out)


@cache
def load_failures() -> tuple[FailureSignature, ...]:
    """The shipped catalogue."""
    from ..knowledge import load_knowledge

    return load_failures_from(resource_path("knowledge", "failures.toml"),
                              load_knowledge().sources)


def matcher_for(sigs: tuple[FailureSignature, ...]) -> LineMatcher:
    """The line matcher of a catalogue (tags stripped, Bazel's progress lines skipped, each
    signature's context lines kept with its hits)."""
    patterns = [line_pattern(s.id, p) for s in sigs for p in s.patterns]
    patterns += [line_pattern(_required_key(s.id), p) for s in sigs for p in s.requires]
    patterns += [line_pattern(_cleared_key(s.id), p) for s in sigs for p in s.cleared_by]
    return LineMatcher(patterns, untag_lines=True, skip_progress=True,
                       context={s.id: s.context_lines for s in sigs},
                       keep_last=[_cleared_key(s.id) for s in sigs if s.cleared_by])


def _required_key(sig_id: str) -> str:
    """The scan key of a signature's `requires` patterns."""
    return sig_id + "#requires"


def _cleared_key(sig_id: str) -> str:
    """The scan key of a signature's `cleared_by` patterns (their last hits are kept)."""
    return sig_id + "#cleared"


def _cleared(scan: ScanResult, sig_id: str, found: list[LineHit]) -> bool:
    """Whether every hit of `sig_id` comes before the last line that clears it."""
    after = scan.hits.get(_cleared_key(sig_id)) or []
    return bool(found and after) and found[-1].line < after[-1].line


@cache
def _shipped_matcher() -> LineMatcher:
    return matcher_for(load_failures())


def warning_signatures(sigs: tuple[FailureSignature, ...]) -> tuple[FailureSignature, ...]:
    """The signatures a build that succeeded is scanned for: the warnings, and the
    signatures they are secondary to (their order among the warnings depends on those)."""
    warned = [s for s in sigs if s.severity == "warning"]
    above = {other for s in warned for other in s.secondary_to}
    return tuple(s for s in sigs if s.severity == "warning" or s.id in above)


@cache
def _warning_matcher() -> LineMatcher:
    """The matcher of the shipped warnings only: a build that succeeded shows only those,
    and a few patterns compile and scan in a fraction of the whole catalogue's time."""
    return matcher_for(warning_signatures(load_failures()))


def diagnose(lines: Iterable[str], *, exit_code: int | None = None,
             signatures: Iterable[FailureSignature] | None = None) -> list[Diagnosis]:
    """Every known failure signature in `lines` (log.txt channel tags are stripped).

    A signature with `requires` counts only when one of those patterns matched too.
    Ordered by the first matching line, a signature whose deeper cause (`secondary_to`)
    was found too after it; a signature that names the exit code matches on it too (e.g.
    137: killed, most often for memory). Generic signatures (a compile error, say) are
    reported only when no more specific error was found (a warning does not hide them).
    The lines a signature's `context_lines` take after a match join its excerpt. Fixes
    stay as the catalogue words them: `fixes.resolve_diagnoses` makes them values.
    """
    sigs = tuple(signatures) if signatures is not None else load_failures()
    matcher = _shipped_matcher() if signatures is None else matcher_for(sigs)
    return diagnoses_from(matcher.scan_lines(lines), sigs, exit_code=exit_code)


def diagnose_stream(stream: BinaryIO, *, exit_code: int | None = None) -> list[Diagnosis]:
    """diagnose() over a binary stream of any size, in constant memory (logscan's fast path)."""
    return diagnoses_from(_shipped_matcher().scan_stream(stream), load_failures(),
                          exit_code=exit_code)


def diagnose_warnings(stream: BinaryIO) -> list[Diagnosis]:
    """The warnings a log shows, matched with only the warnings' patterns (after a build
    that succeeded: the success path stays cheap)."""
    sigs = warning_signatures(load_failures())
    return [d for d in diagnoses_from(_warning_matcher().scan_stream(stream), sigs)
            if d.severity == "warning"]


def diagnoses_from(scan: ScanResult, sigs: tuple[FailureSignature, ...], *,
                   exit_code: int | None = None) -> list[Diagnosis]:
    """The diagnoses of a scan's hits, ordered and with generic ones dropped (see diagnose)."""
    by_id = {s.id: s for s in sigs}
    hits = {sig_id: found for sig_id, found in scan.hits.items()
            if sig_id in by_id and (not by_id[sig_id].requires
                                    or _required_key(sig_id) in scan.hits)
            and not _cleared(scan, sig_id, found)}
    if exit_code is not None:
        for sig in sigs:
            if exit_code in sig.exit_codes and sig.id not in hits:
                hits[sig.id] = []
    # a specific error explains the failure better than a generic one (a warning does not)
    if any(not by_id[i].generic and by_id[i].severity == "error" for i in hits):
        hits = {i: n for i, n in hits.items() if not by_id[i].generic}
    # a deeper cause that says all this one would is reported alone
    hits = {i: n for i, n in hits.items() if not set(by_id[i].superseded_by) & set(hits)}

    def rank(sig_id: str) -> tuple[bool, int, str]:
        secondary = any(other in hits for other in by_id[sig_id].secondary_to)
        found = hits[sig_id]
        return secondary, found[0].line if found else sys.maxsize, sig_id

    out = []
    for sig_id in sorted(hits, key=rank):
        sig = by_id[sig_id]
        found = hits[sig_id]
        texts: list[str] = []  # distinct, in line order: each match, then its context lines
        for hit in found:
            texts += [t for t in (hit.text, *hit.context) if t not in texts]
        # the catalogue's words in the current language (display_texts() lists them)
        out.append(Diagnosis(sig.id, _(sig.title), _(sig.cause), _(sig.next_step),
                             dict(sig.recipe_fix), sig.sources,
                             tuple(h.line for h in found),
                             tuple(texts[:3 + sig.context_lines]), severity=sig.severity,
                             speaker=sig.speaker))
    return out


def recognised(found: Iterable[Diagnosis],
               signatures: Iterable[FailureSignature] | None = None) -> bool:
    """Whether a failed build's diagnoses name its cause: an error of a specific signature
    (a generic one, "a C++ file failed to compile", or a warning the build went past does
    not; `unrecognised.py` then shows the log's own root-cause lines)."""
    sigs = {s.id: s for s in (signatures if signatures is not None else load_failures())}
    return any(d.severity == "error" and not (d.id in sigs and sigs[d.id].generic)
               for d in found)


def diagnose_file(path: Path, *, exit_code: int | None = None, recipe: Recipe | None = None,
                  plan: Any = None) -> list[Diagnosis]:
    """Diagnose a log file, or a build record folder (its log.txt; exit code from result.json),
    streamed in constant memory.

    Fixes come resolved (fixes.resolve_diagnoses) against `recipe` and `plan` (a BuildPlan
    or plan.json) where given, else the record's recipe.toml and plan.json (a log.txt in a
    record folder counts too); a bare log's symbolic fixes say what they need.
    """
    if path.is_dir():
        result = path / "result.json"
        if exit_code is None and result.is_file():
            import json

            exit_code = json.loads(result.read_text(encoding="utf-8")).get("exit_code")
        path = path / "log.txt"
    with path.open("rb") as fh:
        found = diagnose_stream(fh, exit_code=exit_code)
    if path.name == "log.txt" and (recipe is None or plan is None):
        kept_recipe, kept_plan = record_context(path.parent)
        recipe = recipe if recipe is not None else kept_recipe
        plan = plan if plan is not None else kept_plan
    if plan is not None and exit_code != 0:  # a failed build: its Bazel against its source's
        from . import bazelskew

        want, ran, _probed = bazelskew.facts_for(path, plan)
        found = bazelskew.join(found, want, ran)
    record = path.parent if path.name == "log.txt" else None
    return resolve_diagnoses(found, recipe=recipe, plan=plan, record_dir=record)


def unrecognised_event(log: Path) -> UnrecognisedEvent:
    """The root-cause lines of a build log no signature explains (unrecognised.py), as
    the event a build yields; the same lines go into the log itself when it is a record's."""
    from .unrecognised import root_lines

    with log.open("rb") as fh:
        unknown = root_lines(fh, "build")
    return UnrecognisedEvent("build", tuple((r.line, r.text, r.speaker)
                                            for r in unknown.lines), unknown.query,
                             unknown.tail)


