"""Diagnosis: known failure signatures (resources/knowledge/failures.toml) found in a log.

The catalogue is data; this module only loads it and matches it. `diagnose(lines)` gives
one Diagnosis per signature found, with the 1-based numbers of the lines that matched.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .errors import KnowledgeError
from .i18n import _
from .record import untag
from .resources import resource_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: most line numbers kept per diagnosis (a failing TF build can repeat an error thousands
#: of times)
MAX_LINES = 50


@dataclass(frozen=True)
class FailureSignature:
    id: str
    title: str
    patterns: tuple[re.Pattern[str], ...]
    cause: str
    next_step: str
    recipe_fix: Mapping[str, Any]
    sources: tuple[str, ...]
    exit_codes: tuple[int, ...] = ()
    generic: bool = False  # reported only when no specific signature matched
    severity: str = "error"  # warning: the build may succeed (and is checked then too)
    context_lines: int = 0  # lines after a match that belong to it (the server's words)


@dataclass(frozen=True)
class Diagnosis:
    id: str
    title: str
    cause: str
    next_step: str
    recipe_fix: Mapping[str, Any]
    sources: tuple[str, ...]
    lines: tuple[int, ...]  # 1-based line numbers that matched
    excerpt: tuple[str, ...] = field(default=())  # the first few matching lines
    fix_problem: str = ""  # why recipe_fix is empty once resolved (fixes.resolve_diagnoses)
    severity: str = "error"  # error | warning (a problem the build went past)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["recipe_fix"] = dict(self.recipe_fix)
        return data


def load_failures_from(path: Path, known_sources: Iterable[str] | None = None
                       ) -> tuple[FailureSignature, ...]:
    """Load and check a failures.toml (bad regexes and unknown sources are errors)."""
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
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
                severity=str(entry.get("severity", "error")),
                context_lines=int(entry.get("context_lines", 0)),
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
        if not sig.patterns and not sig.exit_codes:
            raise KnowledgeError(_("{where}: needs patterns or exit_codes").format(where=where))
        if known is not None and (not sig.sources or not set(sig.sources) <= known):
            raise KnowledgeError(_("{where}: sources must be keys of sources.toml").format(
                where=where))
        seen.add(sig.id)
        out.append(sig)
    return tuple(out)


@cache
def load_failures() -> tuple[FailureSignature, ...]:
    """The shipped catalogue."""
    from .knowledge import load_knowledge

    return load_failures_from(resource_path("knowledge", "failures.toml"),
                              load_knowledge().sources)


def diagnose(lines: Iterable[str], *, exit_code: int | None = None,
             signatures: Iterable[FailureSignature] | None = None) -> list[Diagnosis]:
    """Every known failure signature in `lines` (log.txt channel tags are stripped).

    Ordered by the first matching line; a signature that names the exit code matches
    on it too (e.g. 137: killed, most often for memory). Generic signatures (a compile
    error, say) are reported only when nothing more specific was found.
    """
    sigs = tuple(signatures) if signatures is not None else load_failures()
    hits: dict[str, list[int]] = {}
    texts: dict[str, list[str]] = {}
    context: list[tuple[str, int]] = []  # (signature, lines still to take) after a match
    # most lines match nothing: a plain substring test first (a TensorFlow log has
    # hundreds of thousands of lines, and a regex search per pattern per line adds up)
    checks = [(sig, [(p, _required_literal(p.pattern)) for p in sig.patterns]) for sig in sigs]
    for number, raw in enumerate(lines, start=1):
        text = untag(raw)[1]
        if context:  # the lines that follow a match and belong to it (e.g. the server's words)
            for sig_id, _left in context:
                if text.strip() and text.strip() not in texts[sig_id]:
                    texts[sig_id].append(text.strip())
            context = [(i, n - 1) for i, n in context if n > 1]
        if text[:1] == "[" and _PROGRESS_LINE.match(text):
            continue  # Bazel's "[12 / 34] Compiling ..." status lines never carry an error
        for sig, patterns in checks:
            for pattern, literal in patterns:
                if (literal is None or literal in text) and pattern.search(text):
                    found = hits.setdefault(sig.id, [])
                    if len(found) < MAX_LINES:
                        found.append(number)
                        if text.strip() not in texts.setdefault(sig.id, []):
                            texts[sig.id].append(text.strip())
                    if sig.context_lines:
                        context.append((sig.id, sig.context_lines))
                    break
    by_id = {s.id: s for s in sigs}
    if exit_code is not None:
        for sig in sigs:
            if exit_code in sig.exit_codes and sig.id not in hits:
                hits[sig.id] = []
    # a specific error explains the failure better than a generic one (a warning does not)
    if any(not by_id[i].generic and by_id[i].severity == "error" for i in hits):
        hits = {i: n for i, n in hits.items() if not by_id[i].generic}
    order = sorted(hits, key=lambda i: (hits[i][0] if hits[i] else sys.maxsize, i))
    out = []
    for sig_id in order:
        sig = by_id[sig_id]
        # the catalogue's words in the current language (display_texts() lists them)
        out.append(Diagnosis(sig.id, _(sig.title), _(sig.cause), _(sig.next_step),
                             dict(sig.recipe_fix), sig.sources, tuple(hits[sig_id]),
                             tuple(texts.get(sig_id, [])[:3 + sig.context_lines]),
                             severity=sig.severity))
    return out


_PROGRESS_LINE = re.compile(r"\[[\d,]+ / [\d,]+\] ")
_LITERAL = re.compile(r"[A-Za-z0-9 _:'\"=,/<>!@%&;-]+")


def _required_literal(pattern: str) -> str | None:
    """A plain substring every match of `pattern` contains, or None (then always search).

    The longest run of ordinary characters outside any group and not made optional by a
    quantifier; None for a pattern with a top-level `|`.
    """
    depth, top, i = 0, [], 0
    while i < len(pattern):  # blank out groups and escapes, keeping positions
        ch = pattern[i]
        if ch == "\\":
            top.append("\x00\x00")
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            top.append("\x00")
            i += 1
            continue
        elif ch == "[" and depth == 0:
            end = pattern.find("]", i + 2)
            top.append("\x00" * ((end if end > 0 else len(pattern)) - i + 1))
            i = (end if end > 0 else len(pattern)) + 1
            continue
        if ch == "|" and depth == 0:
            return None
        top.append(ch if depth == 0 else "\x00")
        i += 1
    flat = "".join(top)
    best = ""
    for m in _LITERAL.finditer(flat):
        run = m.group()
        after = flat[m.end():m.end() + 1]
        if after in ("?", "*", "{"):
            run = run[:-1]  # the quantifier makes only the last character optional
        if len(run) > len(best):
            best = run
    return best if len(best) >= 4 else None


def diagnose_file(path: Path, *, exit_code: int | None = None) -> list[Diagnosis]:
    """Diagnose a log file, or a build record folder (its log.txt; exit code from result.json).

    Fixes come resolved against the record's plan and recipe (a log.txt in a record folder
    counts too); a bare log's symbolic fixes say that they need them.
    """
    from .fixes import record_context, resolve_diagnoses

    folder = path if path.is_dir() else path.parent
    if path.is_dir():
        result = path / "result.json"
        if exit_code is None and result.is_file():
            import json

            exit_code = json.loads(result.read_text(encoding="utf-8")).get("exit_code")
        path = path / "log.txt"
    with path.open(encoding="utf-8", errors="replace") as fh:
        found = diagnose((line.rstrip("\n") for line in fh), exit_code=exit_code)
    recipe, plan = record_context(folder) if path.name == "log.txt" else (None, None)
    return resolve_diagnoses(found, recipe=recipe, plan=plan)
