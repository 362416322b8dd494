"""Following a `tfwizard test` run (core/testloop/job.py) on the terminal: Bazel's lines
on stderr, a live line of test counts (a bar on a terminal), each test's result at the end.
`--json`: Bazel's lines on stderr, the run as one JSON object on stdout."""

from __future__ import annotations

import json
from typing import Any

from ..core.i18n import _, ngettext
from .context import Environment
from .follow import Printer
from .words import NOTE

#: lines of a failing test's own log shown under it
TAIL_LINES = 30


def counts_text(event: Any) -> str:
    """"tests 3/6: 2 passed, 1 failed, 0 flaky, 2 cached, 3 left"."""
    return _("tests {done}/{total}: {passed} passed, {failed} failed, {flaky} flaky, "
             "{cached} cached, {left} left").format(
        done=event.done, total=event.total, passed=event.passed, failed=event.failed,
        flaky=event.flaky, cached=event.cached, left=event.left)


def print_run(env: Environment, run: Any) -> None:
    """Each test's result line, the failing tests' own log tails, the counts."""
    from ..core.testloop.run import log_tail

    for test in run.tests:
        cached = _(" (cached)") if test.cached else ""
        env.out(ngettext("{status:<8} {label}  {seconds:.1f} s, {attempts} attempt{cached}",
                         "{status:<8} {label}  {seconds:.1f} s, {attempts} attempts{cached}",
                         test.attempts).format(
            status=test.status, label=test.label, seconds=test.duration_s,
            attempts=test.attempts, cached=cached))
    for test in run.failed:
        log = run.record_dir / "tests" / test.folder() / "test.log"
        if not log.is_file():
            continue
        env.out("")
        env.out(_("--- {label}: the last lines of its test.log ({path})").format(
            label=test.label, path=log))
        for line in log_tail(log.read_text("utf-8", "replace"), TAIL_LINES):
            env.out(line)
    passed = len(run.tests) - len(run.failed)
    env.out("")
    env.out(_("{passed} of {total} tests passed; Bazel: {exit} (record: {path})").format(
        passed=passed, total=len(run.tests), exit=run.exit_name or run.exit_code,
        path=run.record_dir))


class TestLinePrinter(Printer):
    """Bazel's lines on stderr as they come, a counts line when they change (`--json`:
    no counts; the run as one JSON object at the end)."""

    def __init__(self, env: Environment, *, as_json: bool = False,
                 results: bool = True) -> None:
        """`results`: print the results at the end (not when stdout is the PR summary's)."""
        super().__init__(env)
        self.as_json = as_json
        self.results = results

    def event(self, event: Any) -> None:
        """Log lines to stderr, counts, the results."""
        if event.type == "log":
            prefix = NOTE if event.channel == "tfwizard" else ""
            for line in event.lines:
                self.env.err(prefix + line)
        elif event.type == "test-progress" and not self.as_json and event.total:
            self.env.err(NOTE + counts_text(event))
        elif event.type == "finished":
            self.finished(event.result)

    def finished(self, result: Any) -> None:
        """The run's results (or its JSON)."""
        if self.as_json:
            self.env.out(json.dumps(result.run.to_json()))
        elif self.results:
            print_run(self.env, result.run)


class TestBarPrinter(TestLinePrinter):
    """A terminal: a bar of tests done of the total with the counts; Bazel's ERROR and
    FAIL lines above it (the whole log is in the record)."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.console = Console(file=env.stderr, highlight=False)
        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("[dim]{task.fields[counts]}"),
                                 console=self.console)
        self.task = self.progress.add_task(_("tests"), total=None, counts="")

    def __enter__(self) -> Printer:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def event(self, event: Any) -> None:
        """Move the bar; errors above it; the results at the end."""
        if event.type == "log":
            for line in event.lines:
                if line.startswith(("ERROR:", "FAIL:", "FAILED:")) or event.channel == "tfwizard":
                    self.console.print(line, markup=False, soft_wrap=True)
        elif event.type == "test-progress":
            self.progress.update(self.task, total=event.total or None, completed=event.done,
                                 counts=counts_text(event))
        elif event.type == "finished":
            self.progress.stop()
            self.finished(event.result)
