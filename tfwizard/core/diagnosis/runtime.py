"""Why TensorFlow does not use the GPU: known runtime messages and facts, joined with the host.

The words (cause, next step, sources) live in resources/knowledge/runtime.toml; this module
matches `[[message]]` regexes against the probe's captured log lines (or any program's
output: `diagnose_log`, streaming through logscan) and runs the `[[check]]` entries, whose
logic is below under the same id. A check may carry regexes too (a log line that says what
the check finds from facts); its `log_cause`/`log_next_step` then speak for the line alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO, cast

from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase, load_knowledge
from ..vocab import severity_order
from .runtime_facts import (
    _check_cc,
    _check_cuda_vs_driver,
    _check_expectation,
    _check_gpu_visible,
    _check_ops,
    _check_wsl,
    build_targets,
    cuda_and_driver,
    gpu_devices,
    op_error,
    target_gpus,
)
from .runtime_log import MessageExtra, _match_messages, log_lines, log_matcher
from .runtime_rules import (
    GPU_LIBRARIES,
    Diagnosis,
    RuntimeRule,
    _Ctx,
    _Values,
    load_rules,
)

__all__ = ["Diagnosis", "GPU_LIBRARIES", "MessageExtra", "RuntimeRule", "build_targets",
           "cuda_and_driver", "diagnose", "diagnose_log", "gpu_devices", "load_rules",
           "log_lines", "log_matcher", "op_error", "probe_failure", "target_gpus"]


def diagnose(probe: Mapping[str, Any], host: HostProfile | None = None, *,
             expect: str | None = None, python: str = "",
             kb: KnowledgeBase | None = None,
             recipe_ccs: list[str] | None = None) -> list[Diagnosis]:
    """Every known problem in a probe result, joined with the host profile; errors first.

    ``probe`` is probe_tf.py's result (log lines may be a list or a dict by stage);
    ``expect`` is cpu | cuda | rocm or None; ``recipe_ccs`` the recipe's
    cuda.compute_capabilities, so a fix can say the whole new list.
    """
    kb = kb or load_knowledge()
    ctx = _Ctx(probe, host, expect, python, load_rules(kb), kb, recipe_ccs)
    lines = log_lines(probe)
    if probe.get("import_error"):
        ctx.add("import-failed", {"error": probe["import_error"], "module": "tensorflow"},
                evidence=[str(probe["import_error"])])
        lines += str(probe["import_error"]).splitlines()  # its words name the cause too
    _match_messages(ctx, log_matcher(kb).scan_lines(lines))
    _check_expectation(ctx)
    _check_gpu_visible(ctx)
    _check_cuda_vs_driver(ctx)
    _check_cc(ctx)
    _check_wsl(ctx)
    _check_ops(ctx)
    return _ordered(ctx)


def diagnose_log(log: BinaryIO | Iterable[str], host: HostProfile | None = None, *,
                 expect: str | None = None, python: str = "",
                 kb: KnowledgeBase | None = None, recipe_ccs: list[str] | None = None,
                 ld_library_path: str | None = None) -> list[Diagnosis]:
    """The known runtime messages in a program's output, joined with the host profile.

    ``log`` is a binary stream (read in chunks, any size) or the lines themselves. Only
    the messages count (there are no probe facts); the host changes severities (a CPU-only
    machine may ignore CUDA's absence) and fixes (its GPUs' compute capabilities);
    ``ld_library_path`` is the one the program most likely ran with (this shell's), when
    known.
    """
    kb = kb or load_knowledge()
    ctx = _Ctx({}, host, expect, python, load_rules(kb), kb, recipe_ccs)
    ctx.base["ld_library_path"] = (_("(not known from a log)") if ld_library_path is None
                                   else ld_library_path or _("(unset)"))
    matcher = log_matcher(kb)
    if hasattr(log, "read"):
        scan = matcher.scan_stream(cast(BinaryIO, log))
    else:
        scan = matcher.scan_lines(cast(Iterable[str], log))
    _match_messages(ctx, scan)
    return _ordered(ctx)


def _ordered(ctx: _Ctx) -> list[Diagnosis]:
    """Root causes first (a diagnosis whose `secondary_to` cause was found goes after it),
    then errors, warnings, infos; then by first log line, facts last, as found."""
    found_ids = {d.id for d in ctx.found}
    kept = [d for d in ctx.found
            if not (d.id in ctx.rules and found_ids & set(ctx.rules[d.id].superseded_by))]
    errors = {d.id for d in kept if d.severity == "error"}

    def key(item: tuple[int, Diagnosis]) -> tuple[bool, int, float, int]:
        index, d = item
        rule = ctx.rules.get(d.id)
        secondary = bool(rule and (found_ids & set(rule.secondary_to)
                                   or rule.yields_to_any_error and errors - {d.id}))
        return secondary, severity_order(d.severity), d.lines[0] if d.lines else float("inf"), index

    return [d for _i, d in sorted(enumerate(kept), key=key)]


def probe_failure(kind: str, values: Mapping[str, Any], *,
                  kb: KnowledgeBase | None = None,
                  evidence: list[str] | None = None) -> Diagnosis:
    """The diagnosis for a probe that crashed or timed out (kind: crashed | timeout)."""
    kb = kb or load_knowledge()
    rule = load_rules(kb)[f"probe-{kind}"]
    merged = _Values(values)
    return Diagnosis(rule.id, _(rule.title).format_map(merged), rule.severity,
                     _(rule.cause).format_map(merged), _(rule.next_step).format_map(merged),
                     rule.sources, list(evidence or []))
