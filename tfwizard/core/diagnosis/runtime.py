"""Why TensorFlow does not use the GPU: known runtime messages and facts, joined with the host.

The words (cause, next step, sources) live in resources/knowledge/runtime.toml; this module
matches `[[message]]` regexes against the probe's captured log lines (or any program's
output: `diagnose_log`, streaming through logscan) and runs the `[[check]]` entries, whose
logic is below under the same id. A check may carry regexes too (a log line that says what
the check finds from facts); its `log_cause`/`log_next_step` then speak for the line alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, BinaryIO, cast

from .. import cc as ccmod
from .. import compat
from ..errors import KnowledgeError
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase, load_knowledge
from ..vocab import SEVERITIES, SPEAKERS, Severity, severity_order
from .literals import line_pattern
from .logscan import LineHit, LineMatcher, ScanResult

#: the libraries TF's MaybeTryDlopenGPULibraries() needs (gpu-compat-facts.md section 10)
GPU_LIBRARIES = ("libcudart", "libcublas", "libcufft", "libcusolver", "libcusparse", "libcudnn")
#: internal line patterns (not rules): every library TensorFlow failed to dlopen
_DLERROR = "_dlerror"
_DLERROR_PATTERNS = (r"Could not load dynamic library '(?P<lib>[^']+)'",
                     r"Could not dlopen library '(?P<lib>[^']+)'",
                     r"Couldn't open CUDA library (?P<lib>\S+?)\.?(?: |$)",
                     r"could not dlopen DSO: (?P<lib>[^;\s]+)",
                     r"Could not find '(?P<lib>[\w.]+\.dll)'")
#: internal line patterns: the two driver versions TensorFlow's CUDA diagnostics print
#: after cuInit fails; different ones are a driver/library mismatch whatever cuInit said
_DIAG_DSO, _DIAG_KERNEL = "_diag_dso", "_diag_kernel"
_DIAG_PATTERNS = ((_DIAG_DSO, r"libcuda reported version is: (?P<dso>\d+(?:\.\d+)+)"),
                  (_DIAG_KERNEL, r"kernel reported version is: (?P<kernel>\d+(?:\.\d+)+)"))


@dataclass(frozen=True)
class RuntimeRule:
    """One runtime.toml rule: a message pattern or a check, and what it means."""

    id: str
    kind: str  # message | check
    title: str
    severity: Severity
    cause: str
    next_step: str
    sources: tuple[str, ...]
    next_step_wsl: str = ""
    regex: re.Pattern[str] | None = None  # the first of `regexes`
    regexes: tuple[re.Pattern[str], ...] = ()
    #: ids of deeper causes: when one of them is found too, this one is reported after it
    secondary_to: tuple[str, ...] = ()
    #: a check's words when only its log line was seen (no probe facts)
    log_cause: str = ""
    log_next_step: str = ""
    #: the tool that prints the lines it matches (vocab.SPEAKERS); a check without a
    #: regex is found from facts and has none
    speaker: str = ""
    #: ids of causes that explain everything this one says: when one of them is found too,
    #: this one is not reported (cuDNN's failed handle makes "DNN library is not found")
    superseded_by: tuple[str, ...] = ()


@dataclass
class Diagnosis:
    """One problem found: what it is, why, and what to do next."""

    id: str
    title: str
    severity: Severity
    cause: str
    next_step: str
    sources: tuple[str, ...] = ()
    #: the log lines (or facts) that gave it away
    evidence: list[str] = field(default_factory=list)
    #: recipe keys to change, e.g. {"cuda.compute_capabilities": [..., "sm_86"]}, or
    #: "+sm_86" (append) until resolved against a recipe (fixes.resolve_diagnoses)
    recipe_fix: dict[str, Any] = field(default_factory=dict)
    fix_problem: str = ""  # why recipe_fix is empty once resolved
    #: 1-based numbers of the log lines that gave it away (none for facts)
    lines: list[int] = field(default_factory=list)
    speaker: str = ""  # the tool that printed the evidence (vocab.SPEAKERS; "" for facts)

    def to_dict(self) -> dict[str, Any]:
        """The diagnosis as JSON data."""
        data = asdict(self)
        data["sources"] = list(self.sources)
        return data


def load_rules(kb: KnowledgeBase | None = None) -> dict[str, RuntimeRule]:
    """The rules of runtime.toml by id (messages first, in file order)."""
    kb = kb or load_knowledge()
    raw = kb.raw.get("runtime")
    if raw is None:
        raise KnowledgeError(_("knowledge base: {file} is missing").format(file="runtime.toml"))
    rules: dict[str, RuntimeRule] = {}
    for kind in ("message", "check"):
        for entry in raw.get(kind, []):
            try:
                texts = entry.get("regex", [])
                texts = [texts] if isinstance(texts, str) else list(texts)
                if kind == "message" and not texts:
                    raise KeyError("regex")
                regexes = tuple(re.compile(t) for t in texts)
                rule = RuntimeRule(
                    id=entry["id"], kind=kind, title=entry["title"],
                    severity=entry["severity"], cause=entry["cause"],
                    next_step=entry["next_step"], sources=tuple(entry["sources"]),
                    next_step_wsl=entry.get("next_step_wsl", ""),
                    regex=regexes[0] if regexes else None, regexes=regexes,
                    secondary_to=tuple(entry.get("secondary_to", [])),
                    log_cause=entry.get("log_cause", ""),
                    log_next_step=entry.get("log_next_step", ""),
                    speaker=entry.get("speaker", ""),
                    superseded_by=tuple(entry.get("superseded_by", [])),
                )
            except (KeyError, TypeError, re.error) as exc:
                raise KnowledgeError(f"runtime.toml {kind} {entry.get('id', '?')}: {exc!r}") from None
            if rule.severity not in SEVERITIES:
                raise KnowledgeError(_("{where}: unknown severity {severity!r}").format(
                    where=f"runtime.toml {rule.id}", severity=rule.severity))
            if (rule.speaker or rule.regexes) and rule.speaker not in SPEAKERS:
                raise KnowledgeError(_("{where}: speaker must be one of {speakers}").format(
                    where=f"runtime.toml {rule.id}", speakers=", ".join(SPEAKERS)))
            rules[rule.id] = rule
    for rule in rules.values():
        unknown = (set(rule.secondary_to) | set(rule.superseded_by)) - set(rules)
        if unknown:
            raise KnowledgeError(_("{where}: secondary_to and superseded_by must name "
                                   "known ids ({ids})").format(
                where=f"runtime.toml {rule.id}", ids=", ".join(sorted(unknown))))
    return rules


class _Values(dict[str, Any]):
    """str.format_map values; an unknown placeholder shows as itself instead of raising."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _Ctx:
    def __init__(self, probe: Mapping[str, Any], host: HostProfile | None, expect: str | None,
                 python: str, rules: dict[str, RuntimeRule], kb: KnowledgeBase,
                 recipe_ccs: list[str] | None) -> None:
        self.probe = probe
        self.host = host
        self.expect = expect
        self.rules = rules
        self.kb = kb
        self.recipe_ccs = recipe_ccs
        self.found: list[Diagnosis] = []
        self.seen_in_log: set[str] = set()  # checks reported from a log line, not facts
        env = probe.get("env") or {}
        self.base = {
            "python": python or "PY",
            "ld_library_path": env.get("LD_LIBRARY_PATH") or _("(unset)"),
            "gpus": self.host_gpus_text(),
            "expect": expect or "GPU",
        }

    @property
    def wsl(self) -> bool:
        return bool(self.host and self.host.os.wsl2)

    def host_gpus_text(self) -> str:
        if not self.host or not self.host.nvidia.gpus:
            return _("no NVIDIA GPU")
        names = [_("GPU {index} ({name}, CC {cc})").format(
                     index=g.index, name=g.name or "?", cc=g.compute_capability or "?")
                 for g in self.host.nvidia.gpus]
        return ", ".join(names)

    def has(self, rule_id: str) -> bool:
        return any(d.id == rule_id for d in self.found)

    def add(self, rule_id: str, values: Mapping[str, Any] | None = None, *,
            evidence: list[str] | None = None, severity: Severity | None = None,
            recipe_fix: dict[str, Any] | None = None, lines: list[int] | None = None,
            from_log: bool = False) -> Diagnosis:
        """Report a rule; `from_log`: a check seen only in a log line (its log_* words)."""
        rule = self.rules[rule_id]
        merged = _Values({**self.base, **(values or {})})
        cause, step = rule.cause, rule.next_step
        if from_log and rule.log_cause:
            cause, step = rule.log_cause, rule.log_next_step or step
        elif self.wsl and rule.next_step_wsl:
            step = rule.next_step_wsl
        # runtime.toml's words in the current language (knowledge.display_texts lists them)
        diagnosis = Diagnosis(
            id=rule.id, title=_(rule.title).format_map(merged),
            severity=severity or rule.severity,
            cause=_(cause).format_map(merged), next_step=_(step).format_map(merged),
            sources=rule.sources, evidence=list(evidence or []),
            recipe_fix=dict(recipe_fix or {}), lines=list(lines or []),
            speaker=rule.speaker if from_log or rule.kind == "message" else "",
        )
        if rule.id in self.seen_in_log and not from_log:  # facts replace a log line's words
            self.found = [d for d in self.found if d.id != rule.id]
            self.seen_in_log.discard(rule.id)
        elif from_log:
            self.seen_in_log.add(rule.id)
        self.found.append(diagnosis)
        return diagnosis

    def cc_fix(self, cc: str, fix: dict[str, Any] | None = None) -> dict[str, Any]:
        """The recipe change adding `cc` (to `fix`'s list when given): the whole new list
        when the recipe's is known, else failures.toml's symbolic "+sm_XY"."""
        token = ccmod.cc_token(cc)
        key = "cuda.compute_capabilities"
        if self.recipe_ccs is None:  # "append it": resolved against a recipe later
            if fix and fix.get(key) != "+" + token:
                return fix  # a symbolic fix appends one value
            return {key: "+" + token}
        current = list((fix or {}).get(key) or self.recipe_ccs)
        gpu = ccmod.parse_cc(cc)
        targets = ccmod.targets(current)
        if token in current or (gpu and any(t.covers_cubin(gpu) for t in targets)):
            return dict(fix or {})  # the recipe builds a kernel for it already
        return {key: [*current, token]}


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
        patterns += [line_pattern(key, p) for key, p in _DIAG_PATTERNS]
        cached = (kb, LineMatcher(patterns))
        _MATCHERS[id(kb)] = cached
    return cached[1]


def _match_messages(ctx: _Ctx, scan: ScanResult) -> None:
    mismatch = _diagnostics_mismatch(scan)
    for rule in ctx.rules.values():
        hits = scan.hits.get(rule.id)
        if rule.id == "dso-mismatch" and mismatch and not hits:
            hits = mismatch  # the diagnostics' versions say it where the message did not
        if not hits:
            continue
        values: dict[str, Any] = dict(hits[0].groups)
        severity = None
        fix: dict[str, Any] = {}
        handler = _MESSAGE_EXTRAS.get(rule.id)
        if handler is not None:
            severity, extra, fix = handler(ctx, scan, values)
            values.update(extra)
        evidence: list[str] = []
        for hit in hits:
            if hit.text not in evidence:
                evidence.append(hit.text)
        ctx.add(rule.id, values, evidence=evidence[:5], severity=severity, recipe_fix=fix,
                lines=[h.line for h in hits], from_log=rule.kind == "check")


def _diagnostics_mismatch(scan: ScanResult) -> list[LineHit]:
    """The diagnostics lines of a libcuda and a kernel module of different versions
    (375.66.0 against 384.130.0), or [] when they agree or one is missing."""
    dso, kernel = scan.hits.get(_DIAG_DSO), scan.hits.get(_DIAG_KERNEL)
    if not dso or not kernel:
        return []
    if _driver_version(dso[0].groups["dso"]) == _driver_version(kernel[0].groups["kernel"]):
        return []
    return sorted([dso[0], kernel[0]], key=lambda h: h.line)


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
    error 803 and SYSTEM_DRIVER_MISMATCH name neither)."""
    unknown = _("(not in the log)")
    dso, kernel = scan.hits.get(_DIAG_DSO), scan.hits.get(_DIAG_KERNEL)
    return None, {"dso": values.get("dso") or (dso[0].groups["dso"] if dso else unknown),
                  "kernel": values.get("kernel") or (kernel[0].groups["kernel"] if kernel
                                                     else unknown)}, {}


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


_MESSAGE_EXTRAS: dict[str, MessageExtra] = {
    "dlopen-failed": _dlopen_extra,
    "cudart-not-found": _cudart_extra,
    "ptx-jit": _cc_extra,
    "cc-below-minimum": _cc_extra,
    "cc-not-in-build": _no_kernel_extra,
    "ptxas-newer-than-driver": _ptxas_extra,
    "dso-mismatch": _dso_extra,
    "libcuda-not-found": _driver_side_extra,
    "cuinit-no-device": _driver_side_extra,
}


# -- facts joined with the host ----------------------------------------------------------------


def _is_gpu_build(probe: Mapping[str, Any]) -> bool:
    info = probe.get("build_info") or {}
    return bool(probe.get("built_with_cuda") or probe.get("built_with_rocm")
                or info.get("is_cuda_build") or info.get("is_rocm_build"))


def gpu_devices(probe: Mapping[str, Any]) -> list[str]:
    """The names of the GPU devices a probe result lists."""
    return [d.get("name", "") for d in probe.get("devices") or [] if d.get("type") == "GPU"]


def _driver_for(kb: KnowledgeBase, cuda: str) -> str:
    """The Linux driver a CUDA x.y toolkit shipped with (compat.driver_for_toolkit), else
    words saying which CUDA it must support."""
    return compat.driver_for_toolkit(kb, cuda) or _("one supporting CUDA {version}").format(
        version=cuda)


def _check_expectation(ctx: _Ctx) -> None:
    if ctx.expect not in ("cuda", "rocm"):
        return
    probe = ctx.probe
    if probe.get("tensorflow") is None:
        return  # import-failed says it all
    if not _is_gpu_build(probe):
        ctx.add("cpu-build-gpu-expected", evidence=[
            f"is_built_with_cuda() = {probe.get('built_with_cuda')}",
            f"build_info = {probe.get('build_info')}"])
    host_gpus = bool(ctx.host and (ctx.host.nvidia.gpus or ctx.host.amd.gpus))
    if not gpu_devices(probe) and not host_gpus:
        message = ctx.host.nvidia.message if ctx.host else _("host not detected")
        ctx.add("no-gpu-on-host", {"host_gpu_message": message or _("no GPU reported")},
                evidence=["tf.config.list_physical_devices('GPU') = []"])


def _check_gpu_visible(ctx: _Ctx) -> None:
    probe = ctx.probe
    if probe.get("tensorflow") is None or gpu_devices(probe) or not _is_gpu_build(probe):
        return
    if not (ctx.host and ctx.host.nvidia.gpus):
        return
    libs = {lib.get("name", "") for lib in probe.get("libraries") or []}
    if not any(n.startswith("libcudart") for n in libs):
        why = _("libcudart was never loaded: the [and-cuda] libraries are missing or not on "
                "the loader path.")
    elif not any(n.startswith("libcuda.so") for n in libs):
        why = _("The CUDA runtime loaded but the driver library libcuda did not.")
    else:
        why = _("The CUDA libraries loaded; the log lines above say why no device was "
                "registered.")
    if ctx.has("dlopen-failed") or ctx.has("dso-mismatch"):
        why += " " + _("See the diagnosis above.")
    ctx.add("no-gpu-visible", {"why": why},
            evidence=["tf.config.list_physical_devices('GPU') = []"])


def cuda_and_driver(probe: Mapping[str, Any], host: HostProfile | None
                    ) -> tuple[str, str, compat.Support] | None:
    """(the CUDA the wheel says it was built with, the CUDA the host's driver supports, both
    x.y, and how the one runs on the other: compat.cuda_support); None when either is
    unknown."""
    built = compat.major_minor((probe.get("build_info") or {}).get("cuda_version"))
    driver = compat.major_minor(host.nvidia.cuda_driver_version) if host is not None else None
    if built is None or driver is None:
        return None
    b, d = f"{built[0]}.{built[1]}", f"{driver[0]}.{driver[1]}"
    support = compat.cuda_support(d, b)
    return None if support is None else (b, d, support)


def _check_cuda_vs_driver(ctx: _Ctx) -> None:
    info = ctx.probe.get("build_info") or {}
    host = ctx.host
    found = cuda_and_driver(ctx.probe, host)
    if found is None or found[2] == "native" or host is None:
        return
    built, _driver_cuda, support = found
    values = {
        "cuda": info.get("cuda_version"), "driver": host.nvidia.driver_version or "?",
        "driver_cuda": host.nvidia.cuda_driver_version,
        "driver_needed": _driver_for(ctx.kb, built),
    }
    evidence = [f"build_info cuda_version = {info.get('cuda_version')}",
                _("driver {driver} supports CUDA {cuda}").format(
                    driver=host.nvidia.driver_version, cuda=host.nvidia.cuda_driver_version)]
    rule = "cuda-newer-than-driver" if support == "major" else "cuda-minor-newer-than-driver"
    ctx.add(rule, values, evidence=evidence)


def build_targets(probe: Mapping[str, Any]) -> list[str]:
    """The compute-capability tokens the wheel says it was built for ([] when unknown)."""
    info = probe.get("build_info") or {}
    raw = info.get("cuda_compute_capabilities")
    if isinstance(raw, str):
        raw = re.split(r"[,\s]+", raw)
    return [str(t) for t in raw or [] if str(t)]


def target_gpus(probe: Mapping[str, Any], host: HostProfile | None) -> list[tuple[str, str]]:
    """(label, compute capability) of this machine's NVIDIA GPUs: the host profile's, else
    what TensorFlow listed."""
    gpus: list[tuple[str, str]] = []
    if host:
        for g in host.nvidia.gpus:
            if g.compute_capability and not g.error:
                gpus.append((_("GPU {index} ({name})").format(index=g.index, name=g.name or "?"),
                             g.compute_capability))
    if not gpus:
        for d in probe.get("gpu_details") or []:
            if d.get("compute_capability"):
                gpus.append((f"{d.get('name')} ({d.get('device_name') or '?'})",
                             d["compute_capability"]))
    return gpus


def _check_cc(ctx: _Ctx) -> None:
    tokens = build_targets(ctx.probe)
    targets = ccmod.targets(tokens)
    if not targets:
        return
    built = ", ".join(tokens)
    for label, cc in target_gpus(ctx.probe, ctx.host):
        if ctx.has("ptx-jit") or ctx.has("cc-below-minimum"):
            # TF itself said so; the message diagnosis is the more precise one
            if any(cc in e for d in ctx.found for e in d.evidence):
                continue
        cov = ccmod.coverage(targets, cc, tegra_mismatch=ctx.kb.is_tegra(cc))
        values = {"gpu": label, "cc": cc, "sm": ccmod.cc_token(cc), "built": built,
                  "ptx": cov.ptx.token if cov.ptx else ""}
        evidence = [f"build_info cuda_compute_capabilities = {tokens}", f"{label}: CC {cc}"]
        if not cov.runs:
            ctx.add("cc-not-in-build", values, evidence=evidence, recipe_fix=ctx.cc_fix(cc))
        elif cov.needs_jit:
            ctx.add("cc-ptx-only", values, evidence=evidence, recipe_fix=ctx.cc_fix(cc))


def _check_wsl(ctx: _Ctx) -> None:
    if not ctx.wsl or not _is_gpu_build(ctx.probe) or gpu_devices(ctx.probe):
        return
    libcuda = [lib for lib in ctx.probe.get("libraries") or []
               if str(lib.get("name", "")).startswith("libcuda.so")]
    if any(lib.get("origin") == "wsl" for lib in libcuda):
        return
    if libcuda:
        state = _("This process loaded {path} instead: a Linux driver installed inside "
                  "WSL2.").format(path=libcuda[0].get("path"))
    else:
        state = _("No libcuda was loaded at all: {folder} is not on the loader path.").format(
            folder="/usr/lib/wsl/lib")
    ctx.add("wsl-libcuda-path", {"libcuda_state": state},
            evidence=[str(lib.get("path")) for lib in libcuda])


def _check_ops(ctx: _Ctx) -> None:
    for op in ctx.probe.get("ops") or []:
        if op.get("ok"):
            continue
        device = str(op.get("device", "?"))
        rule = "gpu-op-failed" if ":GPU:" in device.upper() else "cpu-op-failed"
        error = op_error(op)
        ctx.add(rule, {"device": device, "error": error}, evidence=[error])


def op_error(op: Mapping[str, Any]) -> str:
    """Why a probe operation failed, in words (a wrong value, the exception, or no result)."""
    value, expected = op.get("value"), op.get("expected")
    if isinstance(value, (int, float)) and isinstance(expected, (int, float)):
        # it ran but computed the wrong number (probe_tf.py's own "error" text is English)
        return _("wrong result: {value!r}, expected {expected!r}").format(
            value=value, expected=expected)
    return str(op.get("error") or _("no result"))


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
        ctx.add("import-failed", {"error": probe["import_error"]},
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

    def key(item: tuple[int, Diagnosis]) -> tuple[bool, int, float, int]:
        index, d = item
        rule = ctx.rules.get(d.id)
        secondary = bool(rule and found_ids & set(rule.secondary_to))
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
