"""Bazel version skew from a build's facts, not only its log's words.

A Bazel too old or too new for the source fails in whatever rule, attribute or provider
it lacks: a different line each time. The build knows more than its lines: the Bazel the
source asks for (its `.bazelversion`, in the plan's `bazel_versions`) and the Bazel that
ran (the image's answer in the plan, configure.py's "You have bazel X installed." or
Bazel's "Build label:" in the log, or, after a failure, the image asked once more). `join`
puts the two beside the log's diagnoses, as the runtime diagnosis joins a program's output
with the machine:

- they differ (major or minor) and the log names nothing else: the failure is the
  version's, said with both versions as its first evidence line;
- they differ and the log names another cause: that cause stays first, the version
  follows as a warning;
- they are the same: a `bazel-version-mismatch` read from a Starlark error alone is
  dropped (the error is the source's, and the fallback shows its lines).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ..bazelversion import BazelVersion, parse_release, version_from_spec
from ..i18n import _
from .build import Diagnosis, FailureSignature, load_failures
from .linetext import line_text
from .logscan import split_lines

SKEW = "bazel-version-mismatch"
#: where the lines that name the Bazel are: the configure step at the start, tfwizard's
#: own line about the image at the end
HEAD, TAIL = 1 << 20, 64 << 10
#: configure.py's check (every TensorFlow since 1.x), Bazel's `version` command, and
#: tfwizard's line after asking the image (`ran_line`)
_RAN = re.compile(r"You have bazel (\S+) installed|^Build label: (\S+)"
                  r"|^the build image's Bazel: (\S+) \((image(?:-package)?)\)")
#: the statements of the plan that say which Bazel ran (bazelversion.py's sources)
RAN_SOURCES = ("image", "image-package")


def ran_line(version: BazelVersion) -> str:
    """The log line tfwizard writes after asking the image which Bazel it has."""
    return f"the build image's Bazel: {version} ({version.source})"


def ran_in_log(path: Path) -> BazelVersion | None:
    """The Bazel a build log says ran (the last statement wins), None when it says none
    or only a build with no release number ("no_version", a development build)."""
    try:
        with path.open("rb") as fh:
            return ran_in_stream(fh)
    except OSError:
        return None


def ran_in_stream(fh: BinaryIO) -> BazelVersion | None:
    """ran_in_log of a seekable binary stream, read from its start: its first HEAD bytes
    and its last TAIL."""
    fh.seek(0)
    head = fh.read(HEAD)
    fh.seek(0, 2)
    size = fh.tell()
    tail = b""
    if size > HEAD:
        fh.seek(max(HEAD, size - TAIL))
        tail = fh.read()
    found = None
    for raw in split_lines(head) + split_lines(tail):
        match = _RAN.search(line_text(raw, untag_lines=True))
        if match is not None:
            text = next(g for g in match.groups() if g is not None)
            version = parse_release(text)
            source = match.group(4) or "log"  # tfwizard's own line says where it asked
            found = BazelVersion(text, version, source) if version is not None else found
    return found


def plan_facts(plan: Any) -> tuple[BazelVersion | None, BazelVersion | None]:
    """(asked for, ran) as a plan (BuildPlan or plan.json's data) states them: the
    source's .bazelversion, and the image's own answer when the preflight asked it."""
    versions = (plan.get("bazel_versions") if isinstance(plan, Mapping)
                else getattr(plan, "bazel_versions", None)) or {}
    want_text = versions.get("bazelversion")
    want = (BazelVersion(want_text, version_from_spec(want_text), "bazelversion")
            if want_text else None)
    ran = None
    for source in RAN_SOURCES:
        if versions.get(source):
            ran = BazelVersion(versions[source], parse_release(versions[source]), source)
            break
    return (want if want is not None and want.known else None,
            ran if ran is not None and ran.known else None)


def skewed(want: BazelVersion, ran: BazelVersion) -> bool:
    """Whether two Bazels differ where it matters: the major or minor release."""
    a, b = want.version, ran.version
    return a is not None and b is not None and (a.major, a.minor) != (b.major, b.minor)


def join(found: list[Diagnosis], want: BazelVersion | None, ran: BazelVersion | None,
         *, signatures: tuple[FailureSignature, ...] | None = None) -> list[Diagnosis]:
    """A failed build's diagnoses with the Bazel versions joined in (see the module)."""
    if want is None or ran is None:
        return found
    if not skewed(want, ran):
        return [d for d in found if d.id != SKEW]
    sigs = {s.id: s for s in (signatures if signatures is not None else load_failures())}
    sig = sigs[SKEW]
    fact = _("the source's .bazelversion asks for Bazel {want}; Bazel {ran} ran ({how})").format(
        want=want, ran=ran, how=_how(ran))
    old = next((d for d in found if d.id == SKEW), None)
    rest = [d for d in found if d.id != SKEW and SKEW not in sigs.get(d.id, sig).superseded_by]
    alone = not any(d.severity == "error" and not sigs.get(d.id, sig).generic for d in rest)
    if old is None:
        joined = Diagnosis(sig.id, _(sig.title), _(sig.cause), _(sig.next_step),
                           dict(sig.recipe_fix), sig.sources, (), (fact,),
                           severity="error" if alone else "warning", speaker=sig.speaker)
        return [joined, *rest] if alone else [*rest, joined]
    joined = dataclasses.replace(old, excerpt=(fact, *old.excerpt))
    if alone:
        return [joined, *rest]
    return [joined if d is old else d for d in found]


def _how(ran: BazelVersion) -> str:
    return {"image": _("the image's bazel --version"),
            "image-package": _("the image's bazel-bootstrap package"),
            }.get(ran.source, _("the build log"))


def facts_for(log: Path, plan: Any, probe: Callable[[], BazelVersion | None] | None = None
              ) -> tuple[BazelVersion | None, BazelVersion | None, bool]:
    """(asked for, ran, probed): the plan's statements, then the log's, then `probe` (the
    image asked after the failure) when the source asks for a Bazel and nothing said
    which one ran."""
    want, ran = plan_facts(plan) if plan is not None else (None, None)
    if want is None:
        return None, ran, False
    ran = ran or ran_in_log(log)
    if ran is None and probe is not None:
        asked = probe()
        if asked is not None and asked.known:
            return want, asked, True
    return want, ran, False
