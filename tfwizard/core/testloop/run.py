"""`tfwizard test`: what a `bazel test` run in the recipe's warm container
(warm.py) is made of -- the build's flags, configure answers and caches with TensorFlow's
own tag filters (test_argv, tag_filters), and what it left (parse_test_events, keep_record).
The run itself is testjob.TestJob.

    tests, exit_name = parse_test_events(bep_lines)
    for test in tests: test.label, test.status, test.duration_s, test.attempts

The per-test results come from the run's own BEP file (`testResult` per attempt,
`testSummary` per test; keyed by label, the configuration id changes with test options).
The record folder keeps log.txt, the BEP file, every test's `test.xml` and each failing
test's own `test.log` under tests/<package>/<name>/, and result.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..building.plan.plan import BuildPlan
from ..building.run.progress import bep_events, file_uri_path
from ..building.warm.container import BEP_FLAG, WarmContainer, bep_flag
from ..errors import KnowledgeError
from ..i18n import _
from ..resources import resource_path
from ..secrets import redact

#: statuses that count as a pass (Bazel's exit code is 0 with a FLAKY test)
PASSING = frozenset({"PASSED", "FLAKY"})


@dataclass(frozen=True)
class TagFilters:
    """TensorFlow's test tag filters (resources/knowledge/testing.toml)."""

    always: tuple[str, ...]
    without_gpu: tuple[str, ...]
    with_gpu: tuple[str, ...]
    sources: tuple[str, ...]

    def for_container(self, gpu: bool) -> list[str]:
        """The filters for a container with (or without) a GPU."""
        return [*(self.with_gpu if gpu else self.without_gpu), *self.always]


@cache
def tag_filters() -> TagFilters:
    """The shipped tag filters (loaded once per process)."""
    from ..knowledge import read_toml

    raw = read_toml(resource_path("knowledge", "testing.toml"))
    try:
        t = raw["tag_filters"]
        return TagFilters(tuple(t["always"]), tuple(t["without_gpu"]), tuple(t["with_gpu"]),
                          tuple(t["sources"]))
    except (KeyError, TypeError) as exc:
        raise KnowledgeError(_("knowledge base is malformed: {error}").format(
            error=repr(exc))) from None


@dataclass(frozen=True)
class TestResult:
    """One test target's result in one run."""

    label: str
    status: str  # Bazel's: PASSED, FAILED, FLAKY, TIMEOUT, ...
    duration_s: float
    attempts: int
    cached: bool
    log: str = ""  # the container path of its (last attempt's) test.log
    xml: str = ""  # ... and of its test.xml

    @property
    def passed(self) -> bool:
        """Whether the test counts as passed (FLAKY does)."""
        return self.status in PASSING

    def folder(self) -> str:
        """Its folder under bazel-testlogs and the record's tests/: package/name."""
        pkg, _sep, name = self.label.lstrip("/").partition(":")
        return f"{pkg}/{name}" if name else pkg


@dataclass
class TestRun:
    """How one `bazel test` ended: exit code, Bazel's exit name, each test's result."""

    exit_code: int | None
    exit_name: str
    seconds: float
    tests: list[TestResult] = field(default_factory=list)
    cancelled: bool = False
    argv: list[str] = field(default_factory=list)
    record_dir: Path | None = None

    @property
    def failed(self) -> list[TestResult]:
        """The tests that did not pass."""
        return [t for t in self.tests if not t.passed]

    def to_json(self) -> dict[str, Any]:
        """result.json's and `--json`'s shape."""
        return {"exit_code": self.exit_code, "exit_name": self.exit_name,
                "seconds": round(self.seconds, 3), "cancelled": self.cancelled,
                "argv": self.argv, "record_dir": str(self.record_dir or ""),
                "tests": [asdict(t) for t in self.tests]}


def _outputs(result: dict[str, Any]) -> dict[str, str]:
    return {o.get("name", ""): file_uri_path(o.get("uri", ""))
            for o in result.get("testActionOutput", [])}


class TestEvents:
    """The per-test results of a BEP file fed event by event (each line decoded once, as it
    arrives): `tests()` and `exit_name` at any point, `configured` test targets so far."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        """Nothing seen yet."""
        self._attempts: dict[str, list[dict[str, Any]]] = {}
        self._summaries: dict[str, dict[str, Any]] = {}
        self.exit_name = ""
        self.configured = 0  # test targets Bazel configured (its targetConfigured events)

    def feed(self, events: Iterable[dict[str, Any]]) -> TestEvents:
        """Take more events (in the file's order); returns self."""
        for event in events:
            ident = event.get("id", {})
            if "testResult" in ident and "testResult" in event:
                self._attempts.setdefault(ident["testResult"].get("label", ""), []).append(
                    {**event["testResult"], "_attempt": ident["testResult"].get("attempt", 1)})
            elif "testSummary" in ident and "testSummary" in event:
                label = ident["testSummary"].get("label", "")
                self._attempts.setdefault(label, [])
                self._summaries[label] = event["testSummary"]
            elif "finished" in event:
                self.exit_name = event["finished"].get("exitCode", {}).get("name", "")
                if not self.exit_name and event["finished"].get("overallSuccess"):
                    self.exit_name = "SUCCESS"
            elif "targetConfigured" in ident and isinstance(event.get("configured"), dict):
                configured = event["configured"]
                if configured.get("testSize") or str(configured.get("targetKind", "")
                                                     ).endswith("_test rule"):
                    self.configured += 1
        return self

    def tests(self) -> list[TestResult]:
        """The results so far, in the order Bazel finished them."""
        out: list[TestResult] = []
        for label, runs in self._attempts.items():
            runs = sorted(runs, key=lambda r: int(r.get("_attempt", 1)))
            last = runs[-1] if runs else {}
            summary = self._summaries.get(label, {})
            files = _outputs(last)
            status = summary.get("overallStatus") or last.get("status") or "NO_STATUS"
            millis = summary.get("totalRunDurationMillis",
                                 last.get("testAttemptDurationMillis", 0))
            count = int(summary.get("totalRunCount", 0) or len(runs))
            cached = bool(int(summary.get("totalNumCached", 0) or 0)) or any(
                r.get("cachedLocally") for r in runs)
            out.append(TestResult(label, str(status), int(millis or 0) / 1000.0, count,
                                  cached, files.get("test.log", ""), files.get("test.xml", "")))
        return out


def parse_test_events(lines: Iterable[str]) -> tuple[list[TestResult], str]:
    """The per-test results of a BEP file (in the order Bazel finished them) and Bazel's
    exit name (`SUCCESS`, `TESTS_FAILED`, `NO_TESTS_FOUND`, ...; "" when unfinished)."""
    seen = TestEvents().feed(bep_events(lines))
    return seen.tests(), seen.exit_name


def test_argv(plan: BuildPlan, targets: Sequence[str], bep: str, filters: Sequence[str],
              ) -> list[str]:
    """The build step's `bazel build` turned into `bazel test` of `targets`: the same
    startup options and flags, the wheel target dropped, the tag filters, the BEP file."""
    build = next(step for step in plan.steps if step.name == "build")
    argv = [bep_flag(a, bep) for a in build.argv]
    at = argv.index("build")
    if argv[-1] == plan.bazel_target:
        argv = argv[:-1]
    argv[at] = "test"
    extra = ["--build_tests_only"]
    if filters:
        extra.append("--test_tag_filters=" + ",".join(filters))
    if not any(a.startswith(BEP_FLAG) for a in argv):
        extra.append(BEP_FLAG + bep)
    return [*argv[:at + 1], *extra, *argv[at + 1:], "--", *targets]


def keep_record(box: WarmContainer, run: TestRun, bep: bytes) -> None:
    """Into run.record_dir: bep.json, every test's test.xml and each failing test's own
    test.log (tests/<package>/<name>/), and result.json; the ${ENV} secrets' values masked
    (the BEP repeats the client's environment and the rc files' flags)."""
    from ..paths import atomic_write, private_dir

    assert run.record_dir is not None
    values = tuple(box.secrets.step.values.values())

    def masked(data: bytes) -> bytes:
        if not values:
            return data
        text = data.decode("utf-8", "replace")
        return "\n".join(redact(line, values) for line in text.split("\n")).encode("utf-8")

    atomic_write(run.record_dir / "bep.json", masked(bep))
    for test in run.tests:
        wanted = [test.xml] + ([test.log] if not test.passed else [])
        for path in wanted:
            data = box.read_file(path) if path else None
            if data is None:
                continue
            dest = run.record_dir / "tests" / test.folder() / Path(path).name
            private_dir(dest.parent)
            atomic_write(dest, masked(data))
    atomic_write(run.record_dir / "result.json", json.dumps(run.to_json(), indent=2) + "\n")


def log_tail(text: str, lines: int = 40) -> list[str]:
    """The last `lines` lines of a test.log, after Bazel's 3-line header."""
    body = text.splitlines()
    if len(body) >= 3 and body[1].startswith("Executing tests from"):
        body = body[3:]
    return body[-lines:]


#: device files that say a GPU is passed into the container (NVIDIA, ROCm)
GPU_DEVICES = ("/dev/nvidiactl", "/dev/kfd")


def has_gpu(box: WarmContainer) -> bool:
    """Whether the warm container sees a GPU device (then TF's `-no_gpu` filter applies,
    else `-gpu`)."""
    probe = " || ".join(f'[ -e "${i + 1}" ]' for i in range(len(GPU_DEVICES)))
    return box.exec(["sh", "-c", probe, "sh", *GPU_DEVICES], workdir="/").exit_code == 0
