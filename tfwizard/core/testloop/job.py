"""`bazel test` as a long job (core/jobs.py): live log and test progress, cancel, a record,
and attach after the front end died.

    job = TestJob(box, targets, gpu=False, record_dir=folder)   # box: a started WarmContainer
    async for event in job.events(): ...   # LogLines, TestProgress, ..., TestFinished last
    job.cancel()                           # SIGINT to `bazel test`; the server stays up
    job.result                             # TestJobResult (its .run: testrun.TestRun)

    job = TestJob.attach(box, folder)      # a run whose front end was killed

The run is a detached exec of the warm container (`WarmContainer.start`): `bazel test`
writes its output to a file of the state volume, the BEP to another, and the job follows
both by reading what they gained since the last poll (filetail.py; RunFiles). So the run does not depend on the process that started
it: `job.json` in the record folder names the exec, its files and the targets, and
`TestJob.attach` follows the same files from where they are. The record folder
(<data>/tests/<id>/) holds job.json (with its `status`: running, succeeded, failed or
cancelled), log.txt, bep.json, each test's test.xml, each failing test's test.log and
result.json (testrun.keep_record).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..building.plan.plan import RECORD
from ..building.run.events import LogLines
from ..building.run.progress import bep_events
from ..building.warm.container import BUILD_SCRIPT, WarmContainer
from ..errors import UsageError
from ..i18n import _, ngettext
from ..jobs import Event
from ..paths import atomic_write, private_dir
from ..streams import STDOUT, TFWIZARD, LineSplitter
from .filetail import FileTail, container_runner
from .run import TestEvents, TestResult, TestRun, keep_record, tag_filters, test_argv

#: how often the job reads the growing log and BEP files (seconds)
POLL_S = 0.25
#: the run's own command: $1 the output file, then the command (its output into the file)
TO_FILE = 'out=$1; shift; exec "$@" >"$out" 2>&1'
#: the record folder's description of the run
JOB_FILE = "job.json"


@dataclass(frozen=True)
class TestProgress(Event):
    """Test results so far, from the BEP as Bazel writes it."""

    type: ClassVar[str] = "test-progress"
    passed: int
    failed: int
    flaky: int
    cached: int
    total: int  # test targets Bazel will run (0 until it has configured them)
    tests: tuple[TestResult, ...] = ()

    @property
    def done(self) -> int:
        """Tests that have a result."""
        return self.passed + self.failed + self.flaky

    @property
    def left(self) -> int:
        """Tests still to run (or to report)."""
        return max(0, self.total - self.done)


@dataclass(frozen=True)
class TestJobResult:
    """How a test job ended: its run, and the words of the long-job protocol."""

    run: TestRun

    @property
    def status(self) -> str:
        """cancelled, succeeded or failed."""
        if self.run.cancelled:
            return "cancelled"
        return "succeeded" if self.run.exit_code == 0 else "failed"

    @property
    def ok(self) -> bool:
        """Whether every test passed."""
        return self.status == "succeeded"


@dataclass(frozen=True)
class TestFinished(Event):
    """The last event: how the run ended."""

    type: ClassVar[str] = "finished"
    result: TestJobResult

    def to_dict(self) -> dict[str, Any]:
        """{"type": "finished", "status": ..., "run": result.json's shape}."""
        return {"type": self.type, "status": self.result.status,
                "run": self.result.run.to_json()}


def progress_of(seen: TestEvents) -> TestProgress:
    """The counts of a (partial) BEP file's events: results so far, the test targets
    configured."""
    done = [t for t in seen.tests() if t.status != "NO_STATUS"]
    return TestProgress(
        passed=sum(t.status == "PASSED" for t in done),
        failed=sum(t.status not in ("PASSED", "FLAKY") for t in done),
        flaky=sum(t.status == "FLAKY" for t in done),
        cached=sum(t.cached for t in done), total=max(seen.configured, len(done)),
        tests=tuple(done))


class RunFiles:
    """A run's output and BEP files read as they grow (`tail`: those two, in that order):
    each byte read once, each BEP line decoded once (testrun.TestEvents keeps the results).
    """

    def __init__(self, tail: FileTail, skip: int = 0) -> None:
        """`skip`: output lines already logged (by a process that was killed)."""
        self.tail = tail
        self.out = LineSplitter()
        self.skip = skip
        self.seen = skip
        self.bep: list[bytes] = []  # the BEP file's bytes, for the record
        self._partial = b""  # a BEP line still being written
        self.events = TestEvents()

    def poll(self, final: bool) -> list[str]:
        """The output's new complete lines (all of them when `final`: the run ended); the
        BEP's new complete events into `events`."""
        out, bep = self.tail.poll()
        lines = self.out.feed(out) + (self.out.flush() if final else [])
        self.bep.append(bep)
        head, _nl, self._partial = (self._partial + bep).rpartition(b"\n")
        if final and self._partial:
            head, self._partial = head + b"\n" + self._partial, b""
        if head:
            self.events.feed(bep_events(head.decode("utf-8", "replace").split("\n")))
        if self.skip:
            dropped = lines[:self.skip]
            self.skip -= len(dropped)
            lines = lines[len(dropped):]
        self.seen += len(lines)
        return lines


class TestJob:
    """One `bazel test` run in the warm container, followed through its files."""

    __test__ = False  # not a pytest test class

    def __init__(self, box: WarmContainer, record_dir: Path, *, spec: dict[str, Any],
                 poll_s: float = POLL_S) -> None:
        """Use TestJob.start or TestJob.attach."""
        self.box = box
        self.record_dir = record_dir
        self.spec = spec
        self.poll_s = poll_s
        self.result: TestJobResult | None = None
        self._cancel = False
        self._started = spec.get("started", time.time())
        self.bytes_read = 0  # of the output and BEP files, once the run ended

    # -- making one ----------------------------------------------------------------------------
    @classmethod
    def start(cls, box: WarmContainer, targets: Sequence[str], *, gpu: bool,
              record_dir: Path, flags: Sequence[str] = (), poll_s: float = POLL_S
              ) -> TestJob:
        """A job for `targets` (started when events() is first iterated); `flags`: more
        Bazel options for this run only."""
        token = secrets.token_hex(6)
        bep = f"{RECORD}/bep-{token}.json"
        argv = test_argv(box.plan, targets, bep, tag_filters().for_container(gpu))
        if flags:
            at = argv.index("--")
            argv[at:at] = list(flags)
        spec = {"token": token, "bep": bep, "out": f"{RECORD}/test-{token}.log",
                "argv": argv, "targets": list(targets), "exec_id": "",
                "container": box.workspace.container_name, "status": "new",
                "started": time.time()}
        return cls(box, record_dir, spec=spec, poll_s=poll_s)

    @classmethod
    def attach(cls, box: WarmContainer, record_dir: Path, *, poll_s: float = POLL_S
               ) -> TestJob:
        """The job a record folder describes, to follow from where it is."""
        try:
            spec = json.loads((record_dir / JOB_FILE).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(_("{path}: not a test run's record ({error})").format(
                path=record_dir, error=exc)) from None
        if spec.get("status") != "running" or not spec.get("exec_id"):
            raise UsageError(_("test run {id} is not running (status: {status})").format(
                id=record_dir.name, status=spec.get("status")),
                _("Its results are in {path}.").format(path=record_dir))
        box.adopt(spec["token"], spec["exec_id"])
        return cls(box, record_dir, spec=spec, poll_s=poll_s)

    def _save_spec(self) -> None:
        private_dir(self.record_dir)
        atomic_write(self.record_dir / JOB_FILE, json.dumps(self.spec, indent=2) + "\n")

    # -- the protocol --------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the run (SIGINT to `bazel test`; Bazel's server stays up)."""
        self._cancel = True
        self.box.cancel()

    async def events(self) -> AsyncIterator[Any]:
        """The run's log lines and test progress as they come; TestFinished last."""
        loop = asyncio.get_running_loop()
        call = loop.run_in_executor
        if self.spec["status"] == "new":
            yield LogLines(TFWIZARD, (_("bazel test in {name}").format(
                name=self.spec["container"]),), 0)
            exec_id = await call(None, self._launch)
            self.spec.update(exec_id=exec_id, status="running")
            self._save_spec()
        from ..building.run.record import BuildRecord

        log = BuildRecord.reopen(self.record_dir)  # after attach: the lines it holds
        skip = sum(1 for channel, _line in log.replay() if channel == STDOUT) \
            if log.log_path.is_file() else 0
        box = self.box
        follow = RunFiles(FileTail(container_runner(box.client, box.container.id,
                                                    box.plan.user or ""),
                                   [self.spec["out"], self.spec["bep"]]), skip)
        last: TestProgress | None = None
        code: int | None = None
        try:
            while True:
                running, code = await call(None, self.box.exit_code, self.spec["exec_id"])
                at = follow.seen + 1
                new = await call(None, follow.poll, not running)
                if new:
                    log.append(STDOUT, new)
                    yield LogLines(STDOUT, tuple(new), at)
                progress = progress_of(follow.events)
                if progress != last:
                    last = progress
                    yield progress
                if not running:
                    break
                await asyncio.sleep(self.poll_s)
        finally:
            log.close()
        self.bytes_read = follow.tail.bytes_read
        yield TestFinished(await call(None, self._finish, code, follow))

    def _launch(self) -> str:
        step = next(s for s in self.box.plan.steps if s.name == "build")
        conf, failed = self.box.configure_first(step)
        if failed is not None:  # configure in a folder of its own failed: say so in the log
            conf = ["sh", "-c", f"echo 'configure exited {failed.exit_code}'; exit 1"]
        test, secret_env = self.box.secrets.build(self.spec["argv"])  # this exec's only
        argv = ["sh", "-c", TO_FILE, "sh", self.spec["out"], "sh", "-c", BUILD_SCRIPT, "sh",
                self.spec["bep"], str(len(conf)), *conf, *test]
        return self.box.start(argv, env={**step.env, **secret_env}, workdir=step.workdir,
                              token=self.spec["token"])

    def _finish(self, code: int | None, follow: RunFiles) -> TestJobResult:
        run = TestRun(code, follow.events.exit_name, time.time() - float(self._started),
                      follow.events.tests(),
                      cancelled=self._cancel or self.box.cancelled, argv=self.spec["argv"],
                      record_dir=self.record_dir)
        keep_record(self.box, run, b"".join(follow.bep))
        self.result = TestJobResult(run)
        self.spec["status"] = self.result.status
        self._save_spec()
        self.box.exec(["rm", "-f", self.spec["out"]], workdir="/")
        return self.result


def running_runs(tests_dir: Path) -> list[Path]:
    """Record folders under <data>/tests whose job.json says running, newest first."""
    found = []
    for path in sorted(tests_dir.glob(f"*/{JOB_FILE}"), reverse=True):
        try:
            if json.loads(path.read_text("utf-8")).get("status") == "running":
                found.append(path.parent)
        except (OSError, ValueError):
            continue
    return found


class RecipeTestJob:
    """A test job for a recipe (the GUI's): starts (or reuses) the recipe's warm container
    first, in a thread, then runs TestJob in it; afterwards `diffstat` holds the source's
    `git diff --stat` against its ref (the PR summary's "what changed")."""

    def __init__(self, recipe: Any, recipe_id: str, targets: Sequence[str], *,
                 record_dir: Path, env: dict[str, str] | None = None,
                 flags: Sequence[str] = (), poll_s: float = POLL_S) -> None:
        """`recipe_id`: the recipe's path (the warm workspace's identity); `flags`: more
        Bazel options for this run only."""
        self.flags = list(flags)
        self.recipe = recipe
        self.recipe_id = recipe_id
        self.targets = list(targets)
        self.record_dir = record_dir
        self.env = env
        self.poll_s = poll_s
        self.inner: TestJob | None = None
        self.diffstat = ""
        self._cancel = False

    @property
    def result(self) -> TestJobResult | None:
        """The run's result (None until it ended, or when cancelled before it started)."""
        return self.inner.result if self.inner is not None else None

    @property
    def cancelled(self) -> bool:
        """Whether the run was asked to stop (cancel())."""
        return self._cancel

    def cancel(self) -> None:
        """Stop the run (or keep it from starting)."""
        self._cancel = True
        if self.inner is not None:
            self.inner.cancel()

    async def events(self) -> AsyncIterator[Any]:
        """LogLines saying the container is being started, then the TestJob's events."""
        from ..docker import client as dockerutil

        loop = asyncio.get_running_loop()
        yield LogLines(TFWIZARD, (_("starting the warm build container…"),), 0)
        client = await loop.run_in_executor(None, dockerutil.connect, self.env)
        try:
            box, gpu = await loop.run_in_executor(None, self._open, client)
            if not self.targets and not self._cancel:  # the tests of the change
                self.targets = await loop.run_in_executor(None, self._select, box, gpu)
                yield LogLines(TFWIZARD, (ngettext(
                    "{count} test depends on the change against {base}: {labels}",
                    "{count} tests depend on the change against {base}: {labels}",
                    len(self.targets)).format(
                    count=len(self.targets), base=self._base(),
                    labels=" ".join(self.targets) or "-"),), 0)
            if self._cancel or not self.targets:
                return
            self.inner = TestJob.start(box, self.targets, gpu=gpu, record_dir=self.record_dir,
                                       flags=self.flags, poll_s=self.poll_s)
            async for event in self.inner.events():
                yield event
            self.diffstat = await loop.run_in_executor(None, self._diffstat, box)
        finally:
            client.close()

    def _open(self, client: Any) -> tuple[WarmContainer, bool]:
        from ..building.plan.plan import make_plan
        from ..building.warm.secrets import secret_values
        from ..building.warm.workspace import workspace_for
        from .run import has_gpu

        base = Path(self.recipe_id).parent if self.recipe.path else None
        plan = make_plan(self.recipe, recipe_dir=base)
        box = WarmContainer(client, plan, workspace_for(plan, self.recipe_id),
                            secrets=secret_values(plan, os.environ if self.env is None
                                                  else self.env))
        box.ensure()
        return box, has_gpu(box)

    def _base(self) -> str:
        """The revision the change is measured against (as `tfwizard test` without --base)."""
        return getattr(self.recipe.tensorflow, "ref", "") or "HEAD"

    def _select(self, box: WarmContainer, gpu: bool) -> list[str]:
        """The tests of the change (select_tests sees the container's GPU itself)."""
        from .select import DEFAULT_MAX, select_tests

        del gpu
        sel = select_tests(box, base=self._base(), filters=tag_filters(), limit=DEFAULT_MAX)
        return list(sel.labels)

    def _diffstat(self, box: WarmContainer) -> str:
        from .select import source_git

        lines: list[str] = []
        code = source_git(box, 'git -c safe.directory="*" diff --stat "$1"', [self._base()],
                          lambda c, line: lines.append(line) if c == "stdout" else None)
        return "\n".join(lines) if code == 0 else ""
