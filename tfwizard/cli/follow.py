"""Following a long job on the terminal: a printer for each kind of output, and `drive`.

`follow(runner, env, json=...)` picks the printer that suits the output (one JSON object
per line, a live progress bar on a terminal, plain lines otherwise), drives the job's
events through it with Ctrl-C (and SIGTERM) cancelling cleanly, and returns the exit
status its result gives. `tfwizard build`, `build --attach` and `fetch` all follow a build
this way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..core.i18n import _
from ..core.jobs import Job
from ..core.vocab import phase_name, status_word
from .context import Environment, ExitStatus
from .render import build_summary
from .words import NOTE, progress_text


def follow(job: Job, env: Environment, *, as_json: bool, rich: bool | None = None,
           printer: Printer | None = None) -> ExitStatus:
    """Drive the job with the printer that suits the output (or `printer`); the exit status
    its result gives (CANCELLED when it was cancelled or never finished)."""
    if printer is not None:
        pass
    elif as_json:
        printer = JsonPrinter(env)
    elif env.stdout_isatty if rich is None else rich:
        printer = RichPrinter(env)
    else:
        printer = PlainPrinter(env)
    with printer:
        asyncio.run(drive(job, printer))
    result = job.result
    if result is None or result.status == "cancelled":
        return ExitStatus.CANCELLED
    return ExitStatus.OK if result.ok else ExitStatus.ERROR


async def drive(job: Job, printer: Printer) -> None:
    """Run the job; the first Ctrl-C (or SIGTERM) cancels it cleanly, the second hard."""
    task = asyncio.current_task()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            printer.note(_("cancelling the build (Ctrl-C again to stop at once)..."))
            job.cancel()
        elif task is not None:
            task.cancel()  # the runner's cleanup still removes the containers

    with _on_signals(on_signal):
        try:
            async for event in job.events():
                printer.event(event)
        except asyncio.CancelledError:
            printer.note(_("build stopped; containers removed"))


def run_job(job: Job) -> Any:
    """Run a job whose events nobody prints to its end; Ctrl-C (or SIGTERM) calls its
    cancel(), so it still ends with a result that says "cancelled". Returns the result."""

    async def main() -> Any:
        with _on_signals(job.cancel):
            async for _event in job.events():
                pass
        return job.result

    return asyncio.run(main())


@contextlib.contextmanager
def _on_signals(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` on SIGINT and SIGTERM while inside (main thread, running loop)."""
    loop = asyncio.get_running_loop()
    installed = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, callback)
                installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


class Printer:
    """Shows a build's events; `finished` prints how it ended."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.diagnoses: list[Any] = []
        #: tfwizard's own log lines already shown: the result does not say them again
        self.said: set[str] = set()

    def __enter__(self) -> Printer:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def note(self, text: str) -> None:
        """Something tfwizard says outside the build's log (cancelling...)."""
        self.env.err(NOTE + text)

    def event(self, event: Any) -> None:
        """Show one event."""
        raise NotImplementedError

    def finished(self, result: Any) -> None:
        """The wheel or why there is none, the cache summary, the diagnoses, the record;
        the outcome only when the log did not just say it (a failure read once)."""
        lines = build_summary(result, self.diagnoses)
        if lines and all(part in self.said for part in lines[0].split("\n")):
            lines = lines[1:]
        for line in lines:
            self.env.out(line)


class PlainPrinter(Printer):
    """Not a terminal: every log line as it comes, progress every few seconds."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self._last_progress = 0.0

    def event(self, event: Any) -> None:
        """Log lines as they are, phases and progress as tfwizard's lines."""
        kind = event.type
        out = self.env.stdout
        if kind == "log":
            prefix = NOTE if event.channel == "tfwizard" else ""
            if prefix:
                self.said.update(event.lines)
            out.write("".join(f"{prefix}{line}\n" for line in event.lines))
            out.flush()
        elif kind == "phase":
            self.env.out(NOTE + _("phase {phase}").format(phase=phase_name(event.phase)))
        elif kind == "progress":
            now = time.monotonic()
            if event.total and now - self._last_progress >= 5:
                self._last_progress = now
                self.env.out(NOTE + progress_text(event))
        elif kind in ("finding", "unrecognised"):
            self.diagnoses.append(event)
        elif kind == "finished":
            self.finished(event.result)


class JsonPrinter(Printer):
    """One JSON object per line: log events one per log line, progress at most 1/s."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self._last_progress = 0.0

    def note(self, text: str) -> None:
        """A note as a {"type": "note"} object."""
        self._write({"type": "note", "message": text})

    def _write(self, data: dict[str, Any]) -> None:
        self.env.stdout.write(json.dumps(data) + "\n")
        self.env.stdout.flush()

    def event(self, event: Any) -> None:
        """The event's own dict (a log event: one object per line, numbered)."""
        if event.type == "log":
            out = self.env.stdout
            out.write("".join(
                json.dumps({"type": "log", "channel": event.channel, "n": event.first_line + i,
                            "line": line}) + "\n" for i, line in enumerate(event.lines)))
            out.flush()
            return
        if event.type == "progress":
            now = time.monotonic()
            if now - self._last_progress < 1.0:
                return
            self._last_progress = now
        self._write(event.to_dict())


class RichPrinter(Printer):
    """A terminal: a progress bar (phase, done/total actions, ETA); tfwizard's own lines,
    Bazel's ERROR lines and the result above it. The full log is in the record."""

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
        )

        self.console = Console(file=env.stdout, highlight=False)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[phase]:<9}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[eta]}"),
            TextColumn("[dim]{task.fields[message]}"),
            console=self.console,
            transient=False,
        )
        self.task = self.progress.add_task("build", total=None, phase="prepare", eta="",
                                           message="")

    def __enter__(self) -> Printer:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def note(self, text: str) -> None:
        """A note above the bar, in yellow."""
        from rich.markup import escape

        self.console.print(f"[yellow]{NOTE}{escape(text)}")

    def event(self, event: Any) -> None:
        """Move the bar; print tfwizard's lines and Bazel's errors above it."""
        from rich.markup import escape

        kind = event.type
        if kind == "log":
            for line in event.lines:
                if event.channel == "tfwizard":
                    self.said.add(line)
                    self.console.print(f"[cyan]{NOTE.rstrip()}[/] {escape(line)}", markup=True,
                                       highlight=False, soft_wrap=True)
                elif line.startswith(("ERROR:", "FAILED:")):
                    self.console.print(line, style="red", markup=False, soft_wrap=True)
        elif kind == "phase":
            self.progress.update(self.task, phase=phase_name(event.phase))
        elif kind == "progress":
            from ..core.vocab import eta_text

            fields: dict[str, Any] = {"phase": phase_name(event.phase),
                                      "message": event.message[:60],
                                      "eta": eta_text(event.eta_s) if event.eta_s is not None
                                      else ""}
            if event.total:
                fields.update(total=event.total, completed=event.done or 0)
            self.progress.update(self.task, **fields)
        elif kind in ("finding", "unrecognised"):
            self.diagnoses.append(event)
        elif kind == "finished":
            self.progress.update(self.task, phase=status_word(event.result.status), eta="",
                                 message="")
            self.progress.stop()
            self.finished(event.result)
