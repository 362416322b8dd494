"""The runtime diagnosis from log lines: the `[[message]]` regexes matched against the
probe's (or any program's) output, and what each match adds from the host."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .. import cc as ccmod
from ..i18n import _
from ..knowledge import KnowledgeBase, load_knowledge
from ..vocab import Severity
from .literals import line_pattern
from .logscan import LineHit, LineMatcher, ScanResult
from .runtime_facts import _is_gpu_build
from .runtime_rules import (
    _ALLOC_BACKOFF,
    _ALLOC_BACKOFF_PATTERN,
    _BUILT_WITH_CUDA,
    _BUILT_WITH_CUDA_PATTERN,
    _DIAG_DSO,
    _DIAG_KERNEL,
    _DIAG_PATTERNS,
    _DLERROR,
    _DLERROR_PATTERNS,
    _IMPORT_FRAME,
    _IMPORT_FRAME_PATTERNS,
    _PY_EXCEPTION,
    GPU_LIBRARIES,
    JAX_LIBRARY_FILES,
    PYTHON_EXCEPTIONS,
    _Ctx,
    load_rules,
)

# -- log messages ------------------------------------------------------------------------------


def log_lines(probe: Mapping[str, Any]) -> list[str]:
    """Every captured log line of a probe result, in stage order."""
    log = probe.get("log") or {}
    if isinstance(log, list):
        return [str(x) for x in log]
    lines: list[str] = []
    for stage_lines in log.values():
        lines.extend(str(x) for x in stage_lines)
    return lines


_MATCHERS: dict[int, tuple[KnowledgeBase, LineMatcher]] = {}


def log_matcher(kb: KnowledgeBase | None = None) -> LineMatcher:
    """The line matcher of runtime.toml's regexes (and the dlerror lines), per knowledge base."""
    kb = kb or load_knowledge()
    cached = _MATCHERS.get(id(kb))
    if cached is None or cached[0] is not kb:
        patterns = [line_pattern(rule.id, regex) for rule in load_rules(kb).values()
                    for regex in rule.regexes]
        patterns += [line_pattern(_DLERROR, p) for p in _DLERROR_PATTERNS]
        patterns.append(line_pattern(_ALLOC_BACKOFF, _ALLOC_BACKOFF_PATTERN))
        patterns += [line_pattern(key, p) for key, p in _DIAG_PATTERNS]
        patterns += [line_pattern(_IMPORT_FRAME, p) for p in _IMPORT_FRAME_PATTERNS]
        patterns.append(line_pattern(_BUILT_WITH_CUDA, _BUILT_WITH_CUDA_PATTERN))
        patterns += [line_pattern(_PY_EXCEPTION, p) for p in PYTHON_EXCEPTIONS]
        cached = (kb, LineMatcher(patterns, context={_BUILT_WITH_CUDA: 1}))
        _MATCHERS[id(kb)] = cached
    return cached[1]


def _match_messages(ctx: _Ctx, scan: ScanResult) -> None:
    # internal lines that say a rule's cause where its own words are missing: the CUDA
    # diagnostics' two driver versions (dso-mismatch), the allocator's tries at a smaller
    # reservation (gpu-out-of-memory, as a warning: no failure yet), tf.test.is_built_with_cuda()
    # printing False (cpu-build-gpu-expected)
    stand_ins: dict[str, tuple[list[LineHit], Severity | None]] = {
        "dso-mismatch": (_diagnostics_mismatch(scan), None),
        "gpu-out-of-memory": (scan.hits.get(_ALLOC_BACKOFF, []), "warning"),
        "cpu-build-gpu-expected": (_built_without_cuda(scan), None)}
    for rule in ctx.rules.values():
        hits = scan.hits.get(rule.id)
        stand_in_severity: Severity | None = None
        if not hits and rule.id in stand_ins:
            hits, stand_in_severity = stand_ins[rule.id]
        if not hits:
            continue
        if rule.kind == "check" and ctx.has(rule.id) and rule.id not in ctx.seen_in_log:
            continue  # the probe's facts said it already (an import error), in their words
        values: dict[str, Any] = dict(hits[0].groups)
        severity = None
        fix: dict[str, Any] = {}
        handler = _MESSAGE_EXTRAS.get(rule.id)
        if handler is not None:
            severity, extra, fix = handler(ctx, scan, values)
            values.update(extra)
        severity = stand_in_severity or severity
        evidence: list[str] = []
        for hit in hits:
            if hit.text not in evidence:
                evidence.append(hit.text)
        ctx.add(rule.id, values, evidence=evidence[:5], severity=severity, recipe_fix=fix,
                lines=[h.line for h in hits], from_log=rule.kind == "check")
    # an import that failed for a reason no rule names: import-failed, in the traceback's
    # words, when no other error explains the output (start-up lines that yield to any
    # error, secondary_to "*", explain nothing)
    if not ctx.has("import-failed") and not any(
            d.severity == "error" and not ctx.rules[d.id].yields_to_any_error
            for d in ctx.found):
        hits, values = _failed_import(scan, {n for d in ctx.found for n in d.lines})
        if hits:
            ctx.add("import-failed", values, evidence=[h.text for h in hits],
                    lines=[h.line for h in hits], from_log=True)


#: an exception line that names no cause: TensorFlow 1.x's ImportError carrying the first
#: traceback ("ImportError: Traceback (most recent call last):")
_UNINFORMATIVE = re.compile(r"\w: Traceback \(most recent call last\)")
#: an ImportError, and the module it names: "cannot import name 'x' from 'pkg.mod'", or the
#: package folder of the library it could not load
_IMPORT_ERROR = re.compile(r"\b(?:ImportError|ModuleNotFoundError): (?:.*?(?:from ['‘]"
                           r"(?P<module>[\w.]+)['’]|[/\\](?:site|dist)-packages[/\\]"
                           r"(?P<package>\w+)))?")


def _failed_import(scan: ScanResult, claimed: set[int]
                   ) -> tuple[list[LineHit], dict[str, Any]]:
    """The lines of an import that failed, and {module, error}: a traceback through a
    package's __init__.py (or TensorFlow's "Failed to load the native TensorFlow runtime")
    with the first exception after it that says something (else the last one), or an
    ImportError alone; ([], {}) when there is neither, or when that exception is a line
    another diagnosis gave (`claimed`: its rule names the cause)."""
    exceptions = [h for h in scan.hits.get(_PY_EXCEPTION, [])
                  if not _UNINFORMATIVE.search(h.text)]
    frames = scan.hits.get(_IMPORT_FRAME, [])
    if frames and exceptions:
        frame = frames[0]
        after = [h for h in exceptions if h.line > frame.line]
        error = after[0] if after else exceptions[-1]
        if error.line in claimed:
            return [], {}
        module = frame.groups.get("package") or "tensorflow"
        return sorted([frame, error], key=lambda h: h.line), {"module": module,
                                                              "error": error.text}
    for hit in exceptions:
        named = None if hit.line in claimed else _IMPORT_ERROR.search(hit.text)
        if named:
            module = named.group("module") or named.group("package") or _("a package")
            return [hit], {"module": module, "error": hit.text}
    return [], {}


def _diagnostics_mismatch(scan: ScanResult) -> list[LineHit]:
    """The diagnostics lines of a libcuda and a kernel module of different versions
    (375.66.0 against 384.130.0), or [] when they agree or one is missing."""
    dso, kernel = scan.hits.get(_DIAG_DSO), scan.hits.get(_DIAG_KERNEL)
    if not dso or not kernel:
        return []
    if _driver_version(dso[0].groups["dso"]) == _driver_version(kernel[0].groups["kernel"]):
        return []
    return sorted([dso[0], kernel[0]], key=lambda h: h.line)


def _built_without_cuda(scan: ScanResult) -> list[LineHit]:
    """The lines where tf.test.is_built_with_cuda() gave False: on its own line (a print
    with a label before it) or on the next one (an interactive session)."""
    return [h for h in scan.hits.get(_BUILT_WITH_CUDA, [])
            if _CALL_FALSE.search(h.text) or (h.context and h.context[0] == "False")]


#: the call with False right after it ("is_built_with_cuda() = False", "...()): False")
_CALL_FALSE = re.compile(_BUILT_WITH_CUDA_PATTERN + r"\)*[\s:=>-]*False\b")


def _driver_version(text: str) -> tuple[int, ...]:
    """A driver version without its trailing zero parts (384.130.0 is 384.130)."""
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


MessageExtra = Callable[[_Ctx, ScanResult, dict[str, Any]],
                        tuple[Severity | None, dict[str, Any], dict[str, Any]]]


def _dlopen_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                  ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    named: list[str] = []
    optional: list[str] = []  # TensorRT's, CUPTI's: named only when nothing else failed
    for hit in scan.hits.get(_DLERROR, []):
        lib = hit.groups.get("lib", "")
        lib = JAX_LIBRARY_FILES.get(lib, lib)
        kept = optional if lib.startswith(_HARMLESS_DLERRORS) else named
        if lib and lib not in kept:
            kept.append(lib)
    named = named or [lib for lib in optional if not lib.startswith(("libnvinfer", "nvinfer"))]
    if not named:
        loaded = {lib.get("name", "") for lib in ctx.probe.get("libraries") or []}
        missing = [n for n in GPU_LIBRARIES if not any(x.startswith(n) for x in loaded)]
        text = (_("{libs} (not loaded; TensorFlow named none)").format(libs=", ".join(missing))
                if missing and ctx.probe
                else _("one of {libs}").format(libs=", ".join(GPU_LIBRARIES)))
    else:
        text = ", ".join(named)
    return None, {"libs": text}, {}


#: dlerrors that do not stop the GPU: TensorRT (optional) and CUPTI (the profiler)
_HARMLESS_DLERRORS = ("libnvinfer", "nvinfer", "libcupti", "cupti")


def _host_gpus(ctx: _Ctx) -> bool | None:
    """Whether the host has an NVIDIA GPU; None when no host profile is known."""
    return None if ctx.host is None else bool(ctx.host.nvidia.gpus)


def _cudart_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                  ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    if not ctx.probe:  # a program's output: only the host can tell
        return _driver_side_extra(ctx, scan, values)
    gpu_build = _is_gpu_build(ctx.probe)
    host_gpu = bool(ctx.host and ctx.host.nvidia.gpus)
    if not gpu_build and ctx.expect in (None, "cpu") and not host_gpu:
        return "info", {}, {}  # every CPU-only machine prints it
    if not gpu_build and ctx.expect in (None, "cpu"):
        return "warning", {}, {}
    return None, {}, {}


def _driver_side_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                       ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """No CUDA or no driver: harmless on a host known to have no NVIDIA GPU."""
    if _host_gpus(ctx) is False and ctx.expect in (None, "cpu"):
        return "info", {}, {}
    return None, {}, {}


def _cc_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
              ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    cc = str(values.get("cc", ""))
    if not cc:  # the PTX failed to load (CUDA_ERROR_INVALID_PTX): the host's GPUs say which
        gpus = [g.compute_capability for g in ctx.host.nvidia.gpus
                if g.compute_capability and not g.error] if ctx.host else []
        if not gpus:
            return "error", {"cc": _("(not in the log)"), "sm": "sm_XY"}, {}
        _severity, extra, fix = _no_kernel_extra(ctx, scan, values)
        return "error", {"cc": gpus[0], "sm": ccmod.cc_token(gpus[0])}, fix
    return None, {"sm": ccmod.cc_token(cc)}, ctx.cc_fix(cc)


def _dso_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
               ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """The two versions, from the message or TensorFlow's CUDA diagnostics lines (CUDA
    error 803 and SYSTEM_DRIVER_MISMATCH name neither); the kernel module's is the one the
    machine's profile read through NVML (nvidia-smi's "Driver Version") when no line says
    it, since NVML works while a cuda-compat libcuda does not (tests/data/gpu-captures)."""
    unknown = _("(not in the log)")
    dso, kernel = scan.hits.get(_DIAG_DSO), scan.hits.get(_DIAG_KERNEL)
    host_driver = ctx.host.nvidia.driver_version if ctx.host else None
    return None, {"dso": values.get("dso") or (dso[0].groups["dso"] if dso else unknown),
                  "kernel": values.get("kernel") or (kernel[0].groups["kernel"] if kernel
                                                     else host_driver or unknown)}, {}


def _no_kernel_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                     ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """'no kernel image': the fix adds the host GPUs' compute capabilities, when known."""
    fix: dict[str, Any] = {}
    for gpu in ctx.host.nvidia.gpus if ctx.host else []:
        if gpu.compute_capability and not gpu.error:
            fix = ctx.cc_fix(gpu.compute_capability, fix)
    return None, {}, fix


def _ptxas_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                 ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """The wrapped or cut warning may lack the versions: the host's driver CUDA, else words."""
    unknown = _("(not in the log)")
    driver = (ctx.host.nvidia.cuda_driver_version if ctx.host else "") or unknown
    return None, {"driver": values.get("driver") or driver,
                  "ptxas": values.get("ptxas") or unknown}, {}


def _ptxas_missing_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                         ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """XLA stopping because it has no PTX compiler at all is an error; its other words
    (a ptxas too old, a fall-back to the driver) stay the rule's warning."""
    fatal = ("No PTX compilation provider is available", "Can't find ptxas binary")
    hits = scan.hits.get("ptxas-too-old", [])
    return ("error" if any(f in h.text for h in hits for f in fatal) else None), {}, {}


def _versions_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                    ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """A library's (or a PJRT plugin's) versions as the message gave them: PyTorch's tuples
    "(8, 5, 0)" as 8.5.0; a wording that names none (jaxlib's "Outdated cuDNN installation
    found.", PJRT's struct-size check, which names only the plugin's) in words."""
    unknown = _("(not in the log)")
    out: dict[str, Any] = {}
    for key in ("loaded", "compiled", "built", "plugin", "framework"):
        value = str(values.get(key) or "")
        if value.startswith("(") and value.endswith(")"):
            value = ".".join(part.strip() for part in value[1:-1].split(","))
        out[key] = value or unknown
    return None, out, {}


def _addon_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                 ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """Linux's loader names only the libtensorflow_framework it lacks, not the add-on."""
    return None, {"lib": values.get("lib") or _("An add-on's native library")}, {}


def _cpu_build_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                     ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """A CPU build is what was asked for (--expect cpu), or all a host without an NVIDIA
    GPU can use: information then."""
    if ctx.expect == "cpu" or _host_gpus(ctx) is False:
        return "info", {}, {}
    return None, {}, {}


def _import_extra(ctx: _Ctx, scan: ScanResult, values: dict[str, Any]
                  ) -> tuple[Severity | None, dict[str, Any], dict[str, Any]]:
    """Python's line is the error the words quote."""
    hits = scan.hits.get("import-failed")
    return None, {"error": hits[0].text.strip() if hits else ""}, {}


_MESSAGE_EXTRAS: dict[str, MessageExtra] = {
    "import-failed": _import_extra,
    "cpu-build-gpu-expected": _cpu_build_extra,
    "tf-addon-abi-mismatch": _addon_extra,
    "dlopen-failed": _dlopen_extra,
    "cudart-not-found": _cudart_extra,
    "ptx-jit": _cc_extra,
    "cc-below-minimum": _cc_extra,
    "cc-not-in-build": _no_kernel_extra,
    "ptxas-newer-than-driver": _ptxas_extra,
    "ptxas-known-bad-version": _ptxas_extra,
    "ptxas-too-old": _ptxas_missing_extra,
    "dso-mismatch": _dso_extra,
    "libcuda-not-found": _driver_side_extra,
    "cuinit-no-device": _driver_side_extra,
    "jax-cuda-plugin-failed": _driver_side_extra,
    "jaxlib-without-cuda": _driver_side_extra,
    "cudnn-mismatch": _versions_extra,
    "cuda-lib-too-old": _versions_extra,
    "pjrt-plugin-version-mismatch": _versions_extra,
}


