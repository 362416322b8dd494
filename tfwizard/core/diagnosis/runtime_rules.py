"""The runtime diagnosis's rules (resources/knowledge/runtime.toml), a Diagnosis, and the
context the checks write to (runtime.py runs them)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from .. import cc as ccmod
from ..errors import KnowledgeError
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase, load_knowledge
from ..vocab import SEVERITIES, SPEAKERS, Severity

#: the libraries TF's MaybeTryDlopenGPULibraries() needs (gpu-compat-facts.md section 10)
GPU_LIBRARIES = ("libcudart", "libcublas", "libcufft", "libcusolver", "libcusparse", "libcudnn")
#: internal line patterns (not rules): every library TensorFlow failed to dlopen
_DLERROR = "_dlerror"
_DLERROR_PATTERNS = (r"Could not load dynamic library '(?P<lib>[^']+)'",
                     r"Could not dlopen library '(?P<lib>[^']+)'",
                     r"Couldn't open CUDA library (?P<lib>\S+?)\.?(?: |$)",
                     r"could not dlopen DSO: (?P<lib>[^;\s]+)",
                     r"Could not find '(?P<lib>[\w.]+\.dll)'",
                     # cuDNN's own loader (its sub-libraries and what they need)
                     r"Could not load library (?P<lib>libcudnn\w*\.so[\d.]*)\. Error: ",
                     r"Could not locate (?P<lib>[\w.]+\.dll)\.\s*Please make sure",
                     r"Unable to load any of \{(?P<lib>libcudnn[^,}\s]*)",
                     # jaxlib's CUDA plugin names the library by its product name
                     # (jax_plugins/xla_cuda*/__init__.py: "Unable to load cuDNN. Is it
                     # installed?"); JAX_LIBRARY_FILES gives its file
                     r"Unable to load (?P<lib>cuDNN|cuFFT|cuSOLVER|cuPTI|cuBLAS|cuSPARSE"
                     r"|NCCL|nvJitLink)\. Is it installed\?",
                     # XLA's NCCL loader, at a program's first collective
                     r"Unable to load (?P<lib>NCCL) library\. Multi-GPU collectives will not")
#: internal line pattern: one try of the BFC allocator backing off to a smaller reservation
#: (XLA's cuda_executor.cc, TensorFlow's cuda_driver.cc). Alone it is gpu-out-of-memory as a
#: warning: a run that went on prints it too (tests/data/gpu-captures)
_ALLOC_BACKOFF = "_alloc_backoff"
_ALLOC_BACKOFF_PATTERN = (r"Failed to allocate device memory of \S+ \(\d+ bytes\)"
                          r"|failed to allocate \S+ \(\d+ bytes\) from device")
#: a line of Python's that ends a traceback: the exception's class and its words (also the
#: fallback's "last Python exception", unrecognised.py)
PYTHON_EXCEPTIONS = (r"^[\w.]*\wError(?:: | \(|$)", r"^[\w.]*Exception(?:: |$)",
                     r"^[\w.]*Exit(?:: |$)", r"^[\w.]*Interrupt(?:: |$)")
#: internal line patterns of an import that failed in a way no rule names: a traceback's
#: frame of a package's __init__.py run as a module (only an import runs it so), and the
#: exception lines; import-failed when nothing else explains the output (runtime_log)
_IMPORT_FRAME, _PY_EXCEPTION = "_import_frame", "_py_exception"
_IMPORT_FRAME_PATTERNS = (r'File "(?:[^"]*[/\\])?(?P<package>\w+)[/\\]__init__\.py", '
                          r"line \d+, in <module>",
                          # TensorFlow's own words under its import's traceback
                          r"Failed to load the native TensorFlow runtime")
#: internal line pattern: a program printing tf.test.is_built_with_cuda(), with the line
#: after it (an interactive session prints the result there): False is cpu-build-gpu-expected
_BUILT_WITH_CUDA = "_built_with_cuda"
_BUILT_WITH_CUDA_PATTERN = r"is_built_with_cuda\(\)"
#: the library files of the names jaxlib's CUDA plugin gives them
JAX_LIBRARY_FILES = {"cuDNN": "libcudnn", "cuFFT": "libcufft", "cuSOLVER": "libcusolver",
                     "cuPTI": "libcupti", "cuBLAS": "libcublas", "cuSPARSE": "libcusparse",
                     "NCCL": "libnccl", "nvJitLink": "libnvJitLink"}
#: internal line patterns: the two driver versions TensorFlow's CUDA diagnostics print
#: after cuInit fails; different ones are a driver/library mismatch whatever cuInit said
_DIAG_DSO, _DIAG_KERNEL = "_diag_dso", "_diag_kernel"
_DIAG_PATTERNS = ((_DIAG_DSO, r"libcuda reported version is: (?P<dso>\d+(?:\.\d+)+)"),
                  (_DIAG_KERNEL, r"kernel reported version is: (?P<kernel>\d+(?:\.\d+)+)"))


#: `secondary_to = ["*"]`: reported after every other error found (a start-up line that a
#: run goes past when it fails later for another reason)
ANY_ERROR = "*"


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

    @property
    def yields_to_any_error(self) -> bool:
        """`secondary_to = ["*"]`: reported after any other error, and no explanation of
        the output on its own (a start-up line that a run goes past when it fails later)."""
        return ANY_ERROR in self.secondary_to


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
    # `superseded_like = "ID"`: superseded by that rule and by every rule that supersedes it
    for entry in raw.get("message", []) + raw.get("check", []):
        like = entry.get("superseded_like")
        if like is None:
            continue
        if like not in rules:
            raise KnowledgeError(_("{where}: secondary_to and superseded_by must name "
                                   "known ids ({ids})").format(
                where=f"runtime.toml {entry['id']}", ids=like))
        rule = rules[entry["id"]]
        rules[rule.id] = replace(rule, superseded_by=tuple(dict.fromkeys(
            rule.superseded_by + (like,) + rules[like].superseded_by)))
    for rule in rules.values():
        unknown = (set(rule.secondary_to) | set(rule.superseded_by)) - set(rules) - {ANY_ERROR}
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


