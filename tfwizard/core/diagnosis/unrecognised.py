"""What to show when no rule knows a failure: the log's own root-cause lines.

When a failed build's log shows no specific failure signature, or a program's output no
known runtime message, this module picks the lines a person would look at first: Bazel's
first `ERROR:`, the compiler's and the linker's first error, the last Python exception,
TensorFlow's `E`/`F`-level lines, a `Killed` or signal line, pip's, git's and Docker's
errors. Each line says which tool printed it (vocab.SPEAKERS), and the most telling one
becomes a search query to paste: its stable words, without paths, numbers, hashes and hex.

An `Unrecognised` is never a diagnosis: it has no id, cause or fix, front ends render it
apart (diagnosis_text.unrecognised_block), and the benchmark never counts it as recognised.
The scan streams through logscan like the diagnosis (constant memory, any size); lines that
look like errors and are known to be harmless (runtime.toml's [[harmless]]) are skipped.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, ClassVar, cast

from ..knowledge import KnowledgeBase, load_knowledge
from .linetext import line_text
from .literals import line_pattern
from .logscan import LineHit, LineMatcher, ScanResult
from .runtime_rules import PYTHON_EXCEPTIONS

#: the most root-cause lines shown
MOST = 5
#: the most words of a search query
QUERY_WORDS = 12
#: when no line looks like an error, how many of the log's last lines (not blank) are
#: shown instead, looked for in at most its last TAIL_BYTES (a stream) or TAIL_SCAN lines
TAIL_LINES = 3
TAIL_BYTES = 16 << 10
TAIL_SCAN = 256

def _glog(level: str) -> str:
    """A TensorFlow/XLA (absl) log line of `level`, in its three shapes: after a date
    ("2024-01-01 12:00:00.000000: E path:12] "), absl's own ("E0000 00:00:17.5  123
    file.cc:12] ") and TensorFlow 0.x's ("E path.cc:12] ")."""
    return (rf"\d: {level} \S+:\d+\] |^{level}\d{{4}} [\d:.]+\s+\d+ \S+\.cc:\d+\] |"
            rf"^{level} \S+\.cc:\d+\] ")


#: words of a line that says something failed (a warning or a note is read only then),
#: without their first letter (either case) so each is a literal the prefilter can use
_FAILED = ("ould not", "ouldn't", "ailed", "ailure", "nable to", "annot ", "not found",
           "gnoring", "older than", "too old", "not supported", "rror")


#: key -> (speaker, patterns): the kinds of line a person reads first, by the tool that
#: prints them (the speaker of some is decided from the line itself: `_speaker`)
_LINES: dict[str, tuple[str, tuple[str, ...]]] = {
    "compiler": ("compiler", (
        r"^\S+:\d+(?::\d+)?: (?:fatal )?error: ",
        r"(?:^|[\s/])(?:[\w.+-]*-)?(?:gcc|g\+\+|cc1plus|cc1|clang|clang\+\+|c\+\+|nvcc|hipcc|"
        r"icpx|icx)(?:-[\d.]+)?(?:\.exe)?: (?:fatal )?error: ",
        r": 错误：",  # gcc in Chinese
        r"\b(?:fatal )?error C\d{4}: ",  # MSVC
        r"^nvcc (?:fatal|error)\s*: ",
        r"internal compiler error: ")),
    "linker": ("linker", (
        r"undefined reference to |ld returned \d+ exit status|error LNK\d{4}: |"
        r"\bld(?:\.\w+)?: (?:error: )?cannot find -l|Undefined symbols for architecture |"
        r"linker command failed with exit code",)),
    "bazel": ("bazel", (
        r"^ERROR: (?!Build did NOT complete successfully|Build failed\. Not running|"
        r"Couldn't start the build)",
        r"^FATAL: ")),
    "configure": ("configure", (r"Configuration Error: |Please re-specify|UserInputError|"
                                r"Please (?:upgrade|downgrade) your ",)),
    "python": ("python", PYTHON_EXCEPTIONS),
    "tf-fatal": ("tf-runtime", (_glog("F"), r"Check failed: ")),
    "tf-error": ("tf-runtime", (_glog("E"),)),
    # a warning or a note that says something failed (TF's library loader logs at W and I)
    "tf-notice": ("tf-runtime", tuple(
        rf"(?:{_glog(level)}).*?{word}" for level in ("W", "I") for word in _FAILED
    ) + (r"\*\*\* WARNING \*\*\*",)),
    "cuda": ("cuda-runtime", (r"CUDA error: |CUDA_ERROR_[A-Z_]+|cudaError[A-Z]\w+",)),
    "fetch": ("fetch", (r"Download from \S+ failed|Error downloading \[|"
                        r"An error occurred during the fetch of repository",)),
    # the operating system's own words (errno strings, the shell's)
    "system": ("system", (r"No such file or directory|command not found|Permission denied|"
                          r"Operation not permitted|No space left on device|"
                          r"Cannot allocate memory",
                          # the shell's own prefix for an error of a script it runs
                          # ("x.sh: line 59: 1: Usage: ..." of ${1:?Usage ...})
                          r"^\S+: line \d+: ")),
    "signal": ("system", (r"^\s*Killed\s*$|Segmentation fault|Aborted \(core dumped\)|"
                          r"core dumped|died due to signal|terminated by signal|"
                          r"Killed signal terminated",)),
    "pip": ("pip", (r"^ERROR: (?:Could not|No matching distribution|pip's|Failed building|"
                    r"Cannot install|Package '|ResolutionImpossible|THESE PACKAGES)",)),
    "git": ("git", (r"^fatal: ",)),
    "docker": ("docker", (r"Error response from daemon: ",)),
    # the last resort, read only when no line above was found: any line that says
    # something failed, in whoever's words (a script's "Incorrect version of ..."), or
    # warns of it (Python's "RuntimeWarning: ...", absl's "WARNING:absl:No GPU/TPU found",
    # a script's "GPU is NOT AVAILABLE")
    "other": ("other", (*_FAILED, "nvalid ", "ncorrect ", "ERROR", "Warning: ", "WARNING:",
                        "ot available", "OT AVAILABLE", "oes not match")),
}
#: the order in which kinds of line make the search query, the most telling first; a line
#: two kinds found belongs to the earlier one
_QUERY_ORDER = ("compiler", "linker", "configure", "tf-fatal", "tf-error", "cuda", "python",
                "pip", "git", "docker", "fetch", "bazel", "tf-notice", "system", "signal",
                "other")
#: the kind of line read only when no other was found
_LAST_RESORT = "other"
#: keys whose last line counts (a program's last exception is the one that ended it)
_LAST = ("python",)
_HARMLESS = "_harmless"


@dataclass(frozen=True)
class RootLine:
    """One line of the log a person should read first: where, what, and who printed it."""

    line: int  # 1-based
    text: str
    speaker: str  # vocab.SPEAKERS

    def to_dict(self) -> dict[str, Any]:
        """The line as JSON data."""
        return {"line": self.line, "text": self.text, "speaker": self.speaker}


@dataclass(frozen=True)
class Unrecognised:
    """A failure no rule knows: its root-cause lines and a query to search for. Not a
    diagnosis (no cause, no fix): shown apart and never counted as recognised."""

    kind: str  # build | runtime
    lines: tuple[RootLine, ...] = ()
    query: str = ""
    #: (line number, text) of the log's last lines, when no line looked like an error
    tail: tuple[tuple[int, str], ...] = ()
    recognised: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        """JSON data: `recognised` is always false."""
        return {"recognised": False, "kind": self.kind,
                "lines": [line.to_dict() for line in self.lines], "query": self.query,
                "tail": [{"line": number, "text": text} for number, text in self.tail]}


@dataclass
class _Scan:
    matcher: LineMatcher
    speakers: dict[str, str] = field(default_factory=dict)


_SCANNERS: dict[int, tuple[KnowledgeBase, _Scan]] = {}


def _scanner(kb: KnowledgeBase | None = None) -> _Scan:
    """The line matcher of the kinds of line above and runtime.toml's harmless lines, per
    knowledge base."""
    kb = kb or load_knowledge()
    cached = _SCANNERS.get(id(kb))
    if cached is None or cached[0] is not kb:
        patterns = [line_pattern(key, regex) for key, (_speaker, regexes) in _LINES.items()
                    for regex in regexes]
        harmless = kb.raw.get("runtime", {}).get("harmless", [])
        patterns += [line_pattern(_HARMLESS, entry["regex"]) for entry in harmless]
        cached = (kb, _Scan(LineMatcher(patterns, untag_lines=True, skip_progress=True,
                                        keep_last=_LAST),
                            {key: speaker for key, (speaker, _regexes) in _LINES.items()}))
        _SCANNERS[id(kb)] = cached
    return cached[1]


def root_lines(log: BinaryIO | Iterable[str], kind: str, *,
               kb: KnowledgeBase | None = None) -> Unrecognised:
    """The root-cause lines of a log nothing recognised (`kind`: build | runtime), from a
    binary stream (any size, constant memory) or the lines themselves."""
    scan = _scanner(kb)
    last: deque[str] = deque(maxlen=TAIL_SCAN)  # a list's last lines, kept as it passes
    if hasattr(log, "read"):
        result = scan.matcher.scan_stream(cast(BinaryIO, log))
    else:
        result = scan.matcher.scan_lines(_kept(cast(Iterable[str], log), last))
    unknown = from_scan(result, kind, scan.speakers)
    if unknown.lines:
        return unknown
    raws = (_stream_end(cast(BinaryIO, log)) if hasattr(log, "read") else list(last))
    return Unrecognised(kind, (), "", _tail(raws, result.lines))


def _kept(lines: Iterable[str], last: deque[str]) -> Iterator[str]:
    """The lines, passed on; the last TAIL_SCAN of them kept in `last`."""
    for raw in lines:
        last.append(raw)
        yield raw


def _stream_end(fh: BinaryIO) -> list[str]:
    """The whole lines in the last TAIL_BYTES of a seekable stream; none where it cannot
    be read again (a pipe, or closed)."""
    try:
        size = fh.seek(0, 2)
        start = max(0, size - TAIL_BYTES)
        fh.seek(start)
        raw = fh.read().split(b"\n")
    except (OSError, ValueError):
        return []
    if raw and raw[-1] == b"":
        raw.pop()  # the newline that ends the last line
    if start > 0:
        raw = raw[1:]  # the line the read began inside
    return [line.decode("utf-8", "replace").removesuffix("\r") for line in raw]


def _tail(raws: list[str], total: int) -> tuple[tuple[int, str], ...]:
    """(number, text) of the last TAIL_LINES of `raws` that are not blank, the log's last
    lines (`total`: how many lines the log has)."""
    out: list[tuple[int, str]] = []
    for back, raw in enumerate(reversed(raws)):
        text = line_text(raw, untag_lines=True)
        if text.strip():
            out.append((total - back, text))
            if len(out) == TAIL_LINES:
                break
    return tuple(reversed(out))


def from_scan(result: ScanResult, kind: str, speakers: dict[str, str]) -> Unrecognised:
    """The Unrecognised of a scan: per kind of line its first (the last exception: its
    last) line that is not a known harmless one, in log order, at most MOST."""
    harmless = {h.line for h in result.hits.get(_HARMLESS, [])}
    chosen: dict[str, LineHit] = {}
    taken: set[int] = set()
    for key in _QUERY_ORDER:
        if key == _LAST_RESORT and chosen:
            break
        useful = [h for h in result.hits.get(key, [])
                  if h.line not in harmless and h.line not in taken]
        if useful:
            chosen[key] = useful[-1] if key in _LAST else useful[0]
            taken.add(chosen[key].line)
    picked = sorted(chosen.items(), key=lambda item: item[1].line)[:MOST]
    lines = tuple(RootLine(hit.line, hit.text, _speaker(speakers[key], hit.text))
                  for key, hit in picked)
    best = next((chosen[key] for key in _QUERY_ORDER if key in chosen), None)
    return Unrecognised(kind, lines, search_query(best.text) if best else "")


def _speaker(default: str, text: str) -> str:
    """Who printed a line, where its words say better than its shape."""
    if default == "bazel":
        if re.search(r"Error downloading|during the fetch of repository|"
                     r"Download from \S+ failed", text):
            return "fetch"
        if re.search(r"Analysis of target|in \S+ rule |no such (target|package)|"
                     r"Skipping '", text):
            return "bazel-analysis"
    if default == "python":
        if re.match(r"(java|javax|com\.google)\.|Caused by: ", text):
            return "bazel"  # a Java exception: Bazel's server
        if re.match(r"(\w+\.)*(ImportError|ModuleNotFoundError)\b", text):
            return "python-import"
        if "XlaRuntimeError" in text or text.startswith("jaxlib"):
            return "xla"
        if text.startswith("tensorflow."):
            return "tf-runtime"
    if default == "tf-runtime":
        if re.search(r"stream_executor/(cuda|gpu)|cuda_(driver|dnn|blas|diagnostics)|"
                     r"CUDA_ERROR|cudaError", text):
            return "cuda-runtime"
        if re.search(r"\bxla/|/xla/|XLA", text):
            return "xla"
    return default


#: what a search query leaves out (see search_query)
_TIME_PREFIX = re.compile(r"^(?:\d{4}-\d\d-\d\d[ T][\d:.,]+Z?:?\s+|[IWEF]\d{4} [\d:.]+\s+\d+\s+)")
_LOCATION = re.compile(r"^(?:ERROR|FATAL|[IWEF]):?\s+\S+:\d+(?::\d+)?[:\]]\s+|^\S+:\d+(?::\d+)?[:\]]\s+")
_HEX = re.compile(r"^(?:0x[0-9a-fA-F]+|[0-9a-fA-F]{7,}|[0-9a-fA-F-]{20,})$")
#: a number that is not part of a name (uint32_t, sm_86 and cp311 stay whole)
_NUMBER = re.compile(r"(?<![A-Za-z_\d])\d+(?:[.,:x]\d+)*")
_EDGE = "()[]{}<>,;:'\"`‘’“”.!?"


def search_query(text: str) -> str:
    """The stable words of a log line to paste into a search: no time or source location
    in front, no paths, URLs, hashes, hex addresses or numbers, at most QUERY_WORDS words."""
    text = _TIME_PREFIX.sub("", text.strip().splitlines()[0] if text.strip() else "")
    text = _LOCATION.sub("", text)
    words: list[str] = []
    for token in text.split():
        bare = token.strip(_EDGE)
        if ("/" in bare or "\\" in bare or "://" in bare or "=" in bare
                or _HEX.match(bare) and any(c.isdigit() for c in bare)):
            continue
        token = _trim(_NUMBER.sub("", token))
        if sum(c.isalpha() for c in token) >= 2:
            words.append(token)
        if len(words) >= QUERY_WORDS:
            break
    return " ".join(words)


def _trim(token: str) -> str:
    """A word without the punctuation around it; a bracket it closes itself stays
    (inclusion(s), main())."""
    token = token.strip(_EDGE.replace("(", "").replace(")", ""))
    while token.endswith(")") and token.count(")") > token.count("("):
        token = token[:-1].rstrip(_EDGE)
    while token.startswith("(") and token.count("(") > token.count(")"):
        token = token[1:].lstrip(_EDGE)
    return token.strip(_EDGE) if token.count("(") != token.count(")") else token
