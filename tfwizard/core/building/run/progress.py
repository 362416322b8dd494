"""Progress from Bazel's console (live) and its Build Event Protocol file (authoritative).

The console gives the live `[done / total]` action counter, which BEP does not carry
during a build; BEP gives structure (targets, failed actions, metrics) and the exit
code. Both parsers are pure: they take text, never touch Docker.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlparse

from ...i18n import _
from ...vocab import PHASES, Phase
from .events import Progress

_N = r"(\d[\d,]*)"  # Bazel prints 12,345 in big builds


def _int(text: str | None) -> int | None:
    return int(text.replace(",", "")) if text else None


_ACTION = re.compile(r"^\[" + _N + r" / " + _N + r"\] (.*)$")
_ANALYZING = re.compile(r"^(?:Analyzing|Loading): (.*)$")
_LOADED = re.compile(_N + r" packages? loaded(?:, " + _N + r" targets? configured)?")
_ANALYZED = re.compile(r"^INFO: Analyzed (?:target|\d+ targets) ?(\S*) \(" + _N +
                       r" packages? loaded(?:, " + _N + r" targets? configured)?\)")
_ELAPSED = re.compile(r"^INFO: Elapsed time: ([\d.]+)s(?:, Critical Path: ([\d.]+)s)?")
_PROCESSES = re.compile(r"^INFO: " + _N + r" process(?:es)?(?:: (.*?))?\.?$")
_COMPLETED = re.compile(r"^INFO: Build completed successfully, " + _N + r" total actions?")
_PROCESS_KIND = re.compile(_N + r" ([^,\d][^,]*)")
_FAILED = re.compile(r"^FAILED: Build did NOT complete successfully")
_INTERRUPTED = re.compile(r"^(?:Bazel caught interrupt signal|INFO: Build interrupted|"
                          r"ERROR: build interrupted)")
_FETCHING = re.compile(r"\bFetching\b|\bDownloading\b")


@dataclass
class BuildStats:
    """What the console said about the build as a whole."""

    analysed_target: str | None = None
    packages_loaded: int | None = None
    targets_configured: int | None = None
    elapsed_s: float | None = None
    critical_path_s: float | None = None
    processes: int | None = None
    process_kinds: dict[str, int] = field(default_factory=dict)
    cache_hits: int | None = None
    total_actions: int | None = None
    succeeded: bool | None = None  # True: "Build completed successfully"; False: FAILED
    interrupted: bool = False


class ProgressParser:
    """Turn Bazel console lines into `Progress` events and `BuildStats`.

    `feed(line)` returns a Progress when the line changed what a progress bar shows,
    else None. The phase only moves forward through `vocab.PHASES`; the runner sets the
    phases Bazel does not print (fetch, configure) with `enter`. ETA comes from the action
    rate over the last `window_s` seconds.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 window_s: float = 60.0) -> None:
        self.clock = clock
        self.window_s = window_s
        self.phase: Phase = PHASES[0]
        self.done: int | None = None
        self.total: int | None = None
        self.message = ""
        self.stats = BuildStats()
        self._samples: deque[tuple[float, int]] = deque()

    # -- phase ---------------------------------------------------------------------------
    def enter(self, phase: Phase) -> bool:
        """Move to `phase` if it is later than the current one; True if it moved."""
        if PHASES.index(phase) > PHASES.index(self.phase):
            self.phase = phase
            return True
        return False

    # -- rate ----------------------------------------------------------------------------
    @property
    def rate(self) -> float | None:
        """Actions per second over the recent window (None: not known yet)."""
        if len(self._samples) < 2:
            return None
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        if t1 - t0 < 1.0 or d1 <= d0:
            return None
        return (d1 - d0) / (t1 - t0)

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current rate (None: not known yet)."""
        rate = self.rate
        if rate is None or self.done is None or self.total is None:
            return None
        return max(0.0, (self.total - self.done) / rate)

    def _sample(self, done: int) -> None:
        now = self.clock()
        if self._samples and done < self._samples[-1][1]:
            self._samples.clear()  # a new Bazel invocation started counting again
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[0][0] > self.window_s:
            self._samples.popleft()

    def snapshot(self) -> Progress:
        """The progress so far as a Progress event."""
        return Progress(
            phase=self.phase, done=self.done, total=self.total,
            eta_s=None if self.eta_s is None else round(self.eta_s, 1),
            rate=None if self.rate is None else round(self.rate, 3),
            message=self.message, packages_loaded=self.stats.packages_loaded,
            targets_configured=self.stats.targets_configured)

    # -- lines ---------------------------------------------------------------------------
    def feed(self, line: str) -> Progress | None:
        """Read one log line; the Progress event when it moved the count."""
        line = line.rstrip()
        if not line:
            return None
        first = line[0]
        if first == "[":
            m = _ACTION.match(line)
            if m:
                return self._action(_int(m[1]) or 0, _int(m[2]) or 0, m[3])
            return None
        if first == "A" or first == "L":
            m = _ANALYZING.match(line)
            if m:
                self.enter("analyse")
                text = m[1]
                counts = _LOADED.search(text)
                if counts:
                    self.stats.packages_loaded = _int(counts[1])
                    if counts[2]:
                        self.stats.targets_configured = _int(counts[2])
                    text = text[:counts.start()].rstrip(" (")
                self.message = (_("Analysing {target}").format(target=text).strip() if text
                                else _("Analysing"))
                return self.snapshot()
            return None
        if first == "I":
            return self._info(line)
        if first == "F" and _FAILED.match(line):
            self.stats.succeeded = False
            return None
        if (first == "B" or first == "E") and _INTERRUPTED.match(line):
            self.stats.interrupted = True
        return None

    def _action(self, done: int, total: int, text: str) -> Progress:
        self.done, self.total = done, total
        self._sample(done)
        message = text.split(";", 1)[0].strip()
        self.message = message
        self.enter(_phase_of(message) or "compile")
        return self.snapshot()

    def _info(self, line: str) -> Progress | None:
        m = _ANALYZED.match(line)
        if m:
            self.enter("analyse")
            self.stats.analysed_target = m[1] or None
            self.stats.packages_loaded = _int(m[2])
            self.stats.targets_configured = _int(m[3])
            self.message = (_("Analysed {target}").format(target=m[1]) if m[1]
                            else _("Analysed targets"))
            return self.snapshot()
        m = _COMPLETED.match(line)
        if m:
            # printed three times without a terminal: count it once
            if self.stats.total_actions is None:
                self.stats.total_actions = _int(m[1])
                self.stats.succeeded = True
                # a cached build may end before printing a counter with the full total
                self.total = max(self.total or 0, self.stats.total_actions or 0)
                self.done = self.total
                return self.snapshot()
            return None
        m = _ELAPSED.match(line)
        if m:
            self.stats.elapsed_s = float(m[1])
            self.stats.critical_path_s = float(m[2]) if m[2] else None
            return None
        m = _PROCESSES.match(line)
        if m:
            self.stats.processes = _int(m[1])
            kinds: dict[str, int] = {}
            # "23 remote cache hit, 6 internal" (counts may carry thousands separators)
            for part in _PROCESS_KIND.finditer(m[2] or ""):
                kinds[part[2].strip()] = _int(part[1]) or 0
            self.stats.process_kinds = kinds
            hits = [v for k, v in kinds.items() if k.endswith("cache hit")]
            self.stats.cache_hits = sum(hits) if hits else 0
            return None
        if self.phase in ("prepare", "fetch", "configure", "analyse") and _FETCHING.search(line):
            self.message = line[6:].strip()
            return self.snapshot()
        return None


@dataclass(frozen=True)
class CacheSummary:
    """Where a build's actions came from, from Bazel's "INFO: N processes: ..." line."""

    processes: int  # every action that ran or was looked up
    ran_here: int  # executed on the build machine (sandboxes, local, workers)
    cache_hits: int  # taken from a cache, disk or remote
    disk_cache_hits: int | None  # None: this Bazel does not tell disk from remote hits
    remote_cache_hits: int | None
    remote_executions: int
    internal: int

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return dict(self.__dict__)


def cache_summary(stats: BuildStats, *, disk_cache: bool,
                  remote_cache: bool) -> CacheSummary | None:
    """The summary of a build whose console said how its processes ran, else None.

    Bazel before 7 calls a disk-cache hit a "remote cache hit" too (tfwizard-testing): with
    only one of the two caches the hits are that one's; with both they cannot be told apart.
    """
    if stats.processes is None:
        return None
    kinds = stats.process_kinds
    internal = kinds.get("internal", 0)
    remote_runs = kinds.get("remote", 0)
    disk = kinds.get("disk cache hit", 0)
    remote_hit = kinds.get("remote cache hit", 0)
    here = sum(n for k, n in kinds.items()
               if k not in ("internal", "remote") and not k.endswith("cache hit"))
    hits = sum(n for k, n in kinds.items() if k.endswith("cache hit"))
    disk_hits: int | None = disk
    remote_hits: int | None = remote_hit
    if "disk cache hit" not in kinds and remote_hit:
        if disk_cache and not remote_cache:
            disk_hits, remote_hits = remote_hit, 0
        elif disk_cache and remote_cache:
            disk_hits = remote_hits = None
    return CacheSummary(stats.processes, here, hits, disk_hits, remote_hits, remote_runs,
                        internal)


def cache_summary_text(summary: CacheSummary) -> str:
    """One sentence for the end of a build (the CLI, the GUI)."""
    if summary.disk_cache_hits is None or summary.remote_cache_hits is None:
        text = _("Actions: {processes} in all; {here} ran here, {hits} came from a cache (the "
                 "disk or the remote one: this Bazel does not tell them apart), {remote} ran "
                 "remotely, {internal} internal.")
    else:
        text = _("Actions: {processes} in all; {here} ran here, {disk} came from the disk "
                 "cache, {remote_hits} from the remote cache, {remote} ran remotely, "
                 "{internal} internal.")
    return text.format(processes=summary.processes, here=summary.ran_here,
                       hits=summary.cache_hits, disk=summary.disk_cache_hits,
                       remote_hits=summary.remote_cache_hits,
                       remote=summary.remote_executions, internal=summary.internal)


def _phase_of(message: str) -> Phase | None:
    """compile | link | package for one running action's description."""
    if "pip_package" in message or "wheel" in message.lower():
        return "package"
    if message.startswith("Linking ") and "[for host]" not in message \
            and "[for tool]" not in message:
        target = message.split()[1] if len(message.split()) > 1 else ""
        # archives (.a, .lo) are linked all through compiling; a .so or binary is late
        if not target.endswith((".a", ".lo")):
            return "link"
    return None


# -- Build Event Protocol -----------------------------------------------------------------


@dataclass
class BepSummary:
    """What a BEP JSON file says about a build."""

    started: bool = False
    command: str | None = None
    exit_name: str | None = None  # SUCCESS, BUILD_FAILURE, INTERRUPTED, ...
    exit_code: int | None = None
    overall_success: bool | None = None
    aborted: list[str] = field(default_factory=list)  # "REASON: description"
    failed_actions: list[dict[str, Any]] = field(default_factory=list)
    targets: dict[str, bool] = field(default_factory=dict)  # label -> success
    outputs: list[str] = field(default_factory=list)
    actions_executed: int | None = None
    events: int = 0
    bad_lines: int = 0

    @property
    def finished(self) -> bool:
        """True when the BEP file holds the build's finished event."""
        return self.exit_name is not None


def parse_bep(lines: Iterable[str]) -> BepSummary:
    """Summarise newline-delimited BEP JSON (a truncated last line is tolerated)."""
    out = BepSummary()
    for raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            out.bad_lines += 1
            continue
        out.events += 1
        ident = event.get("id", {})
        if "started" in event:
            out.started = True
            out.command = event["started"].get("command")
        if "finished" in event:
            fin = event["finished"]
            code = fin.get("exitCode", {})
            out.exit_name = code.get("name", "SUCCESS" if fin.get("overallSuccess") else None)
            out.exit_code = int(code.get("code", 0))  # proto3 JSON omits zero
            out.overall_success = fin.get("overallSuccess", out.exit_code == 0)
        if "aborted" in event:
            ab = event["aborted"]
            out.aborted.append(f"{ab.get('reason', 'UNKNOWN')}: {ab.get('description', '')}"
                               .rstrip(": "))
        # proto3 JSON leaves out false: an action without "success" failed
        if "action" in event and not event["action"].get("success", False):
            act = event["action"]
            done = ident.get("actionCompleted", {})
            out.failed_actions.append({
                "label": act.get("label") or done.get("label"),
                "output": done.get("primaryOutput"),
                "type": act.get("type"),
                "exit_code": act.get("exitCode"),
            })
        if "completed" in event and "targetCompleted" in ident:
            label = ident["targetCompleted"].get("label", "")
            comp = event["completed"]
            out.targets[label] = bool(comp.get("success", False))
        if "namedSetOfFiles" in event:
            for f in event["namedSetOfFiles"].get("files", []):
                if f.get("name"):
                    out.outputs.append(f["name"])
        if "buildMetrics" in event:
            summary = event["buildMetrics"].get("actionSummary", {})
            if "actionsExecuted" in summary:
                out.actions_executed = int(summary["actionsExecuted"])
    return out


def bep_events(lines: Iterable[str]) -> Iterator[dict]:
    """The events of a BEP JSON file's lines; a line that is not JSON (one Bazel is still
    writing) is skipped."""
    for raw in lines:
        try:
            yield json.loads(raw)
        except ValueError:
            continue


def file_uri_path(uri: str) -> str:
    """The path of a BEP `file://` URI ("" for any other scheme)."""
    return unquote(urlparse(uri).path) if uri.startswith("file://") else ""
