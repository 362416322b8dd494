"""Running one plan step in its container and turning its output into events.

`Stepper` makes a step's container (containers.py: least privilege, secrets in files),
attaches to its output before the start, reads the multiplexed stream off the event loop,
splits it into lines, logs them (BuildLog: masked in the record, LogLines events for the
front end), feeds the progress parser, and, when the user cancels, stops the container
(SIGINT, then SIGKILL after a grace period). `follow` does the same for a container that
ran unwatched (after a front end died), from the first line the record lacks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...docker import client as dockerutil
from ...errors import TfWizardError
from ...i18n import _
from ...secrets import redact
from ...streams import STDERR, STDOUT, TFWIZARD, LineSplitter, ThreadFeed
from ..plan.plan import BuildPlan, Step
from .attach import SkippingSplitter
from .containers import Engine, StepSecrets, create_container, create_options, started_at
from .events import BuildEvent, LogLines, PhaseChanged, Progress
from .progress import ProgressParser
from .record import BuildRecord
from .volumes import step_mounts


class BuildLog:
    """The build's log: lines go to the record (masked) and come back as LogLines events."""

    def __init__(self) -> None:
        """An empty log; set `record` before the first line."""
        self.record: BuildRecord | None = None
        self._said: list[LogLines] = []  # said where no event could be yielded (say_soon)

    def log(self, channel: str, lines: list[str]) -> LogLines:
        """Append `lines` to the record on `channel`; the event a front end shows."""
        assert self.record is not None
        if self.record.secrets:  # front ends see what the record keeps: masked
            lines = [redact(line, self.record.secrets) for line in lines]
        first = self.record.append(channel, lines)
        return LogLines(channel, tuple(lines), first)

    def say(self, *lines: str) -> LogLines:
        """tfwizard's own lines (an error's message and hint: one tagged line each)."""
        return self.log(TFWIZARD, [part for line in lines for part in line.split("\n")])

    def say_soon(self, *lines: str) -> None:
        """Say lines from where no event can be yielded (the cancel watcher, an engine
        call): they go to the record now and to the front end with the next events."""
        self._said.append(self.say(*lines))

    def take_said(self) -> list[BuildEvent]:
        """The events of what was said soon, once."""
        said, self._said = self._said, []
        return list(said)


@dataclass
class StepOutcome:
    """How the last step ended: its exit code, its container, when it started."""

    exit_code: int | None
    container: Any
    started_at: float | None  # engine clock, epoch seconds


class Stepper:
    """Runs a build's steps one container at a time; remembers what it made."""

    def __init__(self, *, plan: BuildPlan, build_id: str, labels: Mapping[str, str],
                 engine: Engine, secrets: StepSecrets, parser: ProgressParser, log: BuildLog,
                 cancel: asyncio.Event, grace_s: float, mem_limit: str | None) -> None:
        """`labels`: the build's container labels (read at each create); `cancel`: set
        when the user cancels."""
        self.plan, self.build_id, self.labels = plan, build_id, labels
        self.engine, self.secrets, self.parser, self.log = engine, secrets, parser, log
        self.cancel, self.grace_s, self.mem_limit = cancel, grace_s, mem_limit
        self.containers: list[Any] = []  # every container made, removed at the end
        self.running: Any = None
        self.last: StepOutcome | None = None
        self.last_step = ""
        self.build_started_at: float | None = None
        self.oom = False
        self.init = True  # False once the engine turns out to have no docker-init

    def create(self, step: Step, mounts: list[Any], user: str | None) -> Any:
        """The step's container, created (not started), its secret files in place."""
        argv, env, files = self.secrets.files_for(step, user)
        options = create_options(self.plan, step, name=f"tfwizard-{self.build_id}-{step.name}",
                                 labels=self.labels, mounts=step_mounts(step, mounts),
                                 user=user, argv=argv, environment=env, init=self.init,
                                 mem_limit=self.mem_limit)
        container, self.init = create_container(self.engine.client, self.plan.image, options,
                                                files, step)
        return container

    def _no_init_found(self) -> None:
        self.init = False
        self.log.say_soon(_("this Docker engine has no docker-init: the steps run as PID 1 "
                            "(a cancel may stop the build less cleanly)"))

    async def _start(self, step: Step, mounts: list[Any], user: str | None) -> tuple[Any, Any]:
        """A started step container and the socket attached to it before the start.

        An engine without docker-init refuses to start a container made with init; that
        container goes and the step is made again without one.
        """
        call = self.engine.call
        while True:
            had_init = self.init
            container = await call(_("creating the {step} container").format(step=step.name),
                                   self.create, step, mounts, user)
            if had_init and not self.init:
                self._no_init_found()
            self.containers.append(container)
            sock = await call(_("attaching to the container"),
                              self.engine.client.api.attach_socket, container.id,
                              params={"stdout": 1, "stderr": 1, "stream": 1})
            try:
                await call(_("starting the {step} container").format(step=step.name),
                           container.start)
                return container, sock
            except TfWizardError as exc:
                dockerutil.close_quietly(sock)
                if not (self.init and dockerutil.missing_init(exc)):
                    raise
                self._no_init_found()
                self.containers.remove(container)
                await call(_("removing the {step} container").format(step=step.name),
                           container.remove, force=True)

    async def run(self, step: Step, mounts: list[Any], *, user: str | None = None,
                  quiet: bool = False) -> AsyncIterator[BuildEvent]:
        """Run one step to its end as events; its exit goes into `last`."""
        container, sock = await self._start(step, mounts,
                                            user if user is not None else self.plan.user)
        for event in self.log.take_said():
            yield event
        raw = dockerutil.raw_socket(sock)
        feed: ThreadFeed[list[tuple[int, bytes]]] = ThreadFeed(
            lambda: dockerutil.read_frames(raw), stop=lambda: dockerutil.close_quietly(raw))
        try:
            async for event in self._watched(feed, {1: LineSplitter(), 2: LineSplitter()},
                                             step, container, quiet=quiet):
                yield event
        finally:
            dockerutil.close_quietly(raw)
            dockerutil.close_quietly(sock)

    async def follow(self, step: Step, container: Any,
                     seen: Mapping[str, int]) -> AsyncIterator[BuildEvent]:
        """The output of a step container that may have run unwatched: from its first
        line the record lacks (the engine's log keeps it all), live until it exits."""
        follower = await self.engine.call(_("following the container's log"),
                                          dockerutil.LogFollower, self.engine.client,
                                          container.id)
        splitters: dict[int, LineSplitter] = {1: SkippingSplitter(seen.get(STDOUT, 0)),
                                              2: SkippingSplitter(seen.get(STDERR, 0))}
        feed: ThreadFeed[list[tuple[int, bytes]]] = ThreadFeed(follower.frames,
                                                               stop=follower.close)
        try:
            async for event in self._watched(feed, splitters, step, container, quiet=False):
                yield event
        finally:
            follower.close()

    async def _watched(self, feed: ThreadFeed[list[tuple[int, bytes]]],
                       splitters: dict[int, LineSplitter], step: Step, container: Any, *,
                       quiet: bool) -> AsyncIterator[BuildEvent]:
        """Drain a running container while a watcher stops it on cancel; then its exit."""
        self.running = container
        watcher = asyncio.ensure_future(self._watch_cancel(container))
        try:
            async for event in self._drain(feed, splitters, step, container, quiet=quiet):
                yield event
            if self.cancel.is_set() and not watcher.done():
                # let the watcher finish saying how it stopped the step (SIGINT, SIGKILL)
                with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(watcher), self.grace_s + 5)
        finally:
            watcher.cancel()
            self.running = None
        said = self.log.take_said()
        code = self.last.exit_code if self.last is not None else None
        if not quiet or code != 0:
            said.append(self.log.say(_("step {step} exited with {code}").format(
                step=step.name, code=code)))
        for event in said:
            yield event

    async def _drain(self, feed: ThreadFeed[list[tuple[int, bytes]]],
                     splitters: dict[int, LineSplitter], step: Step, container: Any, *,
                     quiet: bool) -> AsyncIterator[BuildEvent]:
        """A step container's output as events until it ends; then its exit goes into
        `last` (and the build's start time and the OOM mark)."""
        async for batch in feed:
            for event in self._lines(batch, splitters, quiet):
                yield event
            for event in self.log.take_said():  # e.g. "cancelling: sent SIGINT ..."
                yield event
        for n, splitter in splitters.items():
            lines = splitter.flush()
            if lines:
                for event in self._emit(n, lines, quiet):
                    yield event
        call = self.engine.call
        status = await call(_("waiting for the {step} container").format(step=step.name),
                            container.wait)
        started = await call(_("inspecting the container"), started_at, container)
        if step.role == "build":
            self.build_started_at = started
        self.last = StepOutcome(status.get("StatusCode"), container, started)
        self.oom = dockerutil.oom_killed(container)  # attrs fresh from started_at's reload

    def _lines(self, batch: list[tuple[int, bytes]], splitters: dict[int, LineSplitter],
               quiet: bool) -> list[BuildEvent]:
        # consecutive frames of one stream become one LogLines event
        out: list[BuildEvent] = []
        cur_stream, cur_lines = 0, list[str]()
        for stream, payload in batch:
            splitter = splitters.get(stream)
            if splitter is None:
                continue
            lines = splitter.feed(payload)
            if not lines:
                continue
            if stream != cur_stream and cur_lines:
                out.extend(self._emit(cur_stream, cur_lines, quiet))
                cur_lines = []
            cur_stream = stream
            cur_lines.extend(lines)
        if cur_lines:
            out.extend(self._emit(cur_stream, cur_lines, quiet))
        return out

    def _emit(self, stream: int, lines: list[str], quiet: bool) -> list[BuildEvent]:
        channel = STDERR if stream == 2 else STDOUT
        events: list[BuildEvent] = [self.log.log(channel, lines)]
        if quiet:
            return events
        progress: Progress | None = None
        before = self.parser.phase
        feed: Callable[[str], Progress | None] = self.parser.feed
        for line in lines:
            p = feed(line)
            if p is not None:
                progress = p
        if self.parser.phase != before:
            events.append(PhaseChanged(self.parser.phase, self.last_step))
        if progress is not None:
            events.append(progress)
        return events

    async def _watch_cancel(self, container: Any) -> None:
        await self.cancel.wait()
        await self._stop_container(container)

    async def _stop_container(self, container: Any) -> None:
        """SIGINT (Bazel cancels cleanly), then SIGKILL after the grace period."""
        call = self.engine.call
        with contextlib.suppress(Exception):
            await call(_("interrupting the build"), container.kill, signal="SIGINT")
        self.log.say_soon(_("cancelling: sent SIGINT to the build container"))
        try:
            await asyncio.wait_for(call(_("waiting for the container"), container.wait),
                                   self.grace_s)
        except (asyncio.TimeoutError, TfWizardError):
            with contextlib.suppress(Exception):
                await call(_("killing the build container"), container.kill)
            self.log.say_soon(_("cancelling: killed the build container"))

    def stop_now(self, *, keep: bool) -> None:
        """Stop the running step and remove every container made (`keep`: leave them);
        synchronous, never raises (a loop that may not run another callback calls it)."""
        running = self.running
        if running is not None:
            with contextlib.suppress(Exception):
                running.kill(signal="SIGINT")
            with contextlib.suppress(Exception):
                running.wait(timeout=self.grace_s)
        for container in self.containers:
            if keep:
                continue
            with contextlib.suppress(Exception):
                container.remove(force=True)
        self.containers.clear()
