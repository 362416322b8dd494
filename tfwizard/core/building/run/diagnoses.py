"""A finished build's log diagnosed for its record: the diagnoses as events with fixes as
values for this build, written into the record's log too; never the reason a build is lost."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from ...bazelversion import BazelVersion
from ...diagnosis import bazelskew
from ...diagnosis.build import diagnose_stream, diagnose_warnings, recognised, unrecognised_event
from ...diagnosis.text import diagnosis_block, unrecognised_block
from ...diagnosis.types import DiagnosisEvent, UnrecognisedEvent
from ...errors import TfWizardError
from ...fixes import record_context, resolve_diagnoses
from ...i18n import _
from ...recipe import parse_recipe
from ...streams import TFWIZARD
from ..plan.plan import BuildPlan
from .record import BuildRecord


def build_diagnoses(record: BuildRecord, exit_code: int | None, *, plan: BuildPlan,
                    recipe_text: str | None, warnings_only: bool, explained: bool = False,
                    probe: Callable[[], BazelVersion | None] | None = None
                    ) -> list[DiagnosisEvent | UnrecognisedEvent]:
    """What a build's log shows (only warnings after a build that succeeded), with fixes
    as values for this build, appended to the record and returned as events; a failed
    build no specific signature explains ends with its root-cause lines (UnrecognisedEvent),
    unless tfwizard stopped it with its own message (`explained`). A failed build's
    diagnoses are joined with the Bazel it ran and the one its source asks for
    (bazelskew.py; `probe` asks the image when neither the plan nor the log says)."""
    record.close()
    if not record.log_path.is_file():
        return []
    # streamed from log.txt in big chunks: a multi-GB log in constant memory
    with record.log_path.open("rb") as fh:
        if warnings_only:  # only the warnings' patterns: the success path stays cheap
            found = diagnose_warnings(fh)
        else:
            found = diagnose_stream(fh, exit_code=exit_code)
    if not warnings_only:
        want, ran, probed = bazelskew.facts_for(record.log_path, plan, probe)
        if probed and ran is not None:  # the log keeps what the image said
            record.append(TFWIZARD, [bazelskew.ran_line(ran)])
        found = bazelskew.join(found, want, ran)
    unknown = None if warnings_only or explained or recognised(found) else unrecognised_event(
        record.log_path)
    if unknown is not None:
        record.append(TFWIZARD, unrecognised_block(unknown))
    if not found:
        return [unknown] if unknown is not None else []
    # fixes as values for this build: half of the --jobs this plan ran, the recipe's
    # flags plus one (a "halve" in the recipe broke it)
    recipe = None
    with contextlib.suppress(TfWizardError):
        recipe = (parse_recipe(recipe_text, "recipe") if recipe_text is not None
                  else record_context(record.path)[0])
    found = resolve_diagnoses(found, recipe=recipe, plan=plan, record_dir=record.path)
    events = [DiagnosisEvent(d.id, d.title, d.cause, d.next_step, tuple(d.lines),
                             dict(d.recipe_fix), d.fix_problem, d.severity,
                             tuple(d.excerpt)) for d in found]
    for d in found:
        record.append(TFWIZARD, diagnosis_block(d))
    return [*events, unknown] if unknown is not None else list(events)


def guarded_diagnoses(record: BuildRecord, exit_code: int | None, *, plan: BuildPlan,
                      recipe_text: str | None, warnings_only: bool, explained: bool = False,
                      probe: Callable[[], BazelVersion | None] | None = None
                      ) -> tuple[list[DiagnosisEvent | UnrecognisedEvent], str | None]:
    """build_diagnoses that never loses the build: when the diagnosis itself fails (a
    broken catalogue, a log nobody foresaw), no diagnoses and the line that says why, for
    the log; the outcome, the wheel and the record stand."""
    try:
        return build_diagnoses(record, exit_code, plan=plan, recipe_text=recipe_text,
                               warnings_only=warnings_only, explained=explained,
                               probe=probe), None
    except Exception as exc:  # any failure of the diagnosis; the build's result matters more
        return [], _("the log's diagnosis failed ({kind}: {error}); the build's result "
                     "stands, `tfwizard diagnose` can read the log again").format(
            kind=type(exc).__name__, error=exc)
