"""One rendering of a diagnosis, of a build log or of a program's output.

Every front end and report prints a diagnosis with these lines: `tfwizard diagnose`, the
build's printers and its record, verify's report, the bundle, the wizard's diagnosis rows.
A diagnosis is any object with the fields both kinds share (diagnose.Diagnosis,
runtime.Diagnosis, types.DiagnosisEvent): id, title, severity, cause,
next_step, lines, recipe_fix, fix_problem, and its log's own words as `excerpt` (a build
log) or `evidence` (a program's output).

A failure no rule knows (unrecognised.Unrecognised, types.UnrecognisedEvent) is not a
diagnosis and never looks like one: `unrecognised_block` says "not recognised" first,
then the log's root-cause lines with the tool that printed each, and a query to search for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..fixes import fix_text
from ..i18n import N_, translate
from ..vocab import severity_word, speaker_word

#: how much of a quoted log line is shown
QUOTE_WIDTH = 200
#: how many log line numbers are listed
LINE_NUMBERS = 10


class Explained(Protocol):
    """What a diagnosis of either kind has (read-only)."""

    @property
    def id(self) -> str:
        """The diagnosis id (a failures.toml or runtime.toml key)."""

    @property
    def title(self) -> str:
        """One line naming the problem."""

    @property
    def severity(self) -> str:
        """Its severity word (vocab.Severity)."""

    @property
    def cause(self) -> str:
        """Why it happened."""

    @property
    def next_step(self) -> str:
        """What to do next."""

    @property
    def fix_problem(self) -> str:
        """Why the recipe fix could not be resolved (empty when it could)."""

    @property
    def lines(self) -> Sequence[int]:
        """The log line numbers it was found on."""

    @property
    def recipe_fix(self) -> Mapping[str, Any]:
        """The recipe changes that fix it (empty when none)."""


def evidence(diagnosis: Any) -> tuple[str, ...]:
    """The log's own words behind a diagnosis (a wrapped line is one text)."""
    words = getattr(diagnosis, "excerpt", None) or getattr(diagnosis, "evidence", None)
    return tuple(words or ())


def fix_line(changes: Mapping[str, Any], problem: str = "", *,
             lang: str | None = None) -> str | None:
    """The line that offers a diagnosis's fix, or says why there is none (None: no fix)."""
    if changes:
        return translate(N_("recipe fix: {changes}"), lang).format(changes=fix_text(changes))
    if problem:
        return translate(N_("no recipe fix: {why}"), lang).format(why=problem)
    return None


def heading(diagnosis: Explained, *, lang: str | None = None) -> str:
    """"ERROR compile-error: A C++ file did not compile": a diagnosis's first line."""
    return f"{severity_word(diagnosis.severity, lang)} {diagnosis.id}: {diagnosis.title}"


def diagnosis_lines(diagnosis: Explained, *, quotes: int | None = None,
                    lang: str | None = None) -> list[str]:
    """The lines under a diagnosis's heading: the log lines it was found at, the log's
    words quoted (`quotes` of them, None: all; a wrapped line as the lines it was wrapped
    onto), the cause, the next step, and the recipe fix or why there is none.

    `lang` "en" words them in English (a bundle's copy for a bug tracker); None: in the
    current language.
    """
    out: list[str] = []
    numbers = list(diagnosis.lines)
    if numbers:
        shown = ", ".join(map(str, numbers[:LINE_NUMBERS]))
        out.append(translate(N_("log lines: {lines}"), lang).format(
            lines=shown + (" ..." if len(numbers) > LINE_NUMBERS else "")))
    texts = evidence(diagnosis)
    for text in texts if quotes is None else texts[:quotes]:
        out.extend(f"> {line[:QUOTE_WIDTH]}" for line in text.splitlines())
    out.append(translate(N_("cause: {cause}"), lang).format(cause=diagnosis.cause))
    out.append(translate(N_("next: {step}"), lang).format(step=diagnosis.next_step))
    fix = fix_line(diagnosis.recipe_fix, diagnosis.fix_problem, lang=lang)
    if fix:
        out.append(fix)
    return out


def diagnosis_block(diagnosis: Explained, *, indent: str = "  ", quotes: int | None = None,
                    lang: str | None = None) -> list[str]:
    """The heading, then the diagnosis's lines indented under it."""
    return [heading(diagnosis, lang=lang),
            *(indent + line for line in diagnosis_lines(diagnosis, quotes=quotes, lang=lang))]


def unrecognised_heading(*, lang: str | None = None) -> str:
    """The first line of a failure no rule knows: it says so, and that it is no diagnosis."""
    return translate(N_("NOT RECOGNISED: no known cause matches this log (this is not a "
                        "diagnosis)"), lang)


def unrecognised_lines(unknown: Any, *, lang: str | None = None) -> list[str]:
    """The lines under that heading: each root-cause line with its line number and the
    tool that printed it, quoted, then the search query (or that no line looked like an
    error)."""
    roots = list(getattr(unknown, "lines", ()))
    if not roots:
        tail = list(getattr(unknown, "tail", ()) or ())
        if not tail:
            return [translate(N_("no line of the log looks like an error: read its last "
                                 "lines"), lang)]
        out = [translate(N_("no line of the log looks like an error; its last lines:"), lang)]
        for item in tail:
            line, text = ((item["line"], item["text"]) if isinstance(item, Mapping)
                          else (item[0], item[1]))
            out.append(translate(N_("line {line}:"), lang).format(line=line))
            out.extend(f"> {part[:QUOTE_WIDTH]}" for part in str(text).splitlines())
        return out
    out = [translate(N_("the lines to read first:"), lang)]
    for root in roots:
        line, text, speaker = _root_fields(root)
        out.append(translate(N_("line {line}, printed by {speaker}:"), lang).format(
            line=line, speaker=speaker_word(speaker, lang)))
        out.extend(f"> {part[:QUOTE_WIDTH]}" for part in text.splitlines())
    if getattr(unknown, "query", ""):
        out.append(translate(N_("search for: {query}"), lang).format(query=unknown.query))
    return out


def unrecognised_block(unknown: Any, *, indent: str = "  ",
                       lang: str | None = None) -> list[str]:
    """The heading, then the root-cause lines and the search query indented under it."""
    return [unrecognised_heading(lang=lang),
            *(indent + line for line in unrecognised_lines(unknown, lang=lang))]


def _root_fields(root: Any) -> tuple[int, str, str]:
    """(line, text, speaker) of a root-cause line: a RootLine, or its JSON form (a dict
    or a [line, text, speaker] list, as an event carries it)."""
    if isinstance(root, Mapping):
        return int(root["line"]), str(root["text"]), str(root["speaker"])
    if isinstance(root, (tuple, list)):
        return int(root[0]), str(root[1]), str(root[2])
    return root.line, root.text, root.speaker
