"""`tfwizard build` on the warm path: the BuildRunner's record, events, progress,
diagnosis and result.json, with the steps run in the recipe's warm container (warm.py).

    runner = WarmRunner(plan, recipe_id=str(path), idle_s=1800, out_dir=out)
    async for event in runner.events(): ...      # as BuildRunner's

What differs from the cold runner: the source is cloned once into the workspace volume,
configure and build run in one exec (configure only when its inputs changed), the wheel is
the one this build's BEP names, and nothing is removed at the end (the container stays up
for its idle timeout). `use_warm` says when a plan can take this path; `tfwizard build
--fresh` takes the cold one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from ...errors import BuildCancelled, TfWizardError
from ...i18n import _
from ...paths import data_dir
from ...streams import STDERR, STDOUT, ThreadFeed
from ..plan.plan import BuildPlan
from ..run import artifacts
from ..run.attach import PLAN_DIGEST_LABEL
from ..run.events import BuildEvent, PhaseChanged
from ..run.runner import BuildRunner
from ..run.sourcefollow import apply_facts, read_running_facts
from ..run.steps import StepOutcome
from . import wheelsums
from .attach import build_tag
from .container import DEFAULT_IDLE_S, ExecResult, WarmContainer
from .workspace import Workspace, workspace_for

_DONE = object()


def cold_reason(plan: BuildPlan) -> str | None:
    """Why `plan` must be built cold (a sentence), or None when the warm path can take it."""
    if any(step.role == "package" for step in plan.steps):
        return _("TensorFlow {release} packages its wheel in a separate step").format(
            release=plan.release)
    return None


def recipe_idle_s(minutes: int) -> int:
    """The idle timeout in seconds for the recipe key build.warm_idle_min (0: default)."""
    return minutes * 60 if minutes > 0 else DEFAULT_IDLE_S


class WarmRunner(BuildRunner):
    """A BuildRunner whose steps run in the recipe's warm container."""

    def __init__(self, plan: BuildPlan, *, recipe_id: str, idle_s: int = DEFAULT_IDLE_S,
                 **kwargs: Any) -> None:
        """`recipe_id`: the recipe's path (with the plan, the workspace's identity);
        `idle_s`: the container's idle timeout; the rest as BuildRunner's."""
        super().__init__(plan, **kwargs)
        self.workspace = workspace_for(plan, recipe_id)
        self.idle_s = int(idle_s)
        self.warm: WarmContainer | None = None
        self._built: ExecResult | None = None

    async def _run_steps(self) -> AsyncIterator[BuildEvent]:
        await self._setup_engine()
        if not self.volumes.local and self.plan.source_kind == "dir":
            raise TfWizardError(
                _("a warm build bind-mounts the source folder, which a remote Docker engine "
                  "cannot see"), _("Build with `--fresh` (uploads the source)."))
        async for event in self._one_build_per_folder():
            yield event
        yield PhaseChanged("prepare")
        box = WarmContainer(self.engine.client, self.plan, self.workspace, idle_s=self.idle_s,
                            cancel_grace_s=self.cancel_grace_s, secrets=self.secrets.values)
        self.warm = box
        if box.cancelled or self.cancelled:
            raise BuildCancelled(_("cancelled by the user"))
        current = await self.engine.call(_("looking for the warm build container"), box.find)
        if current is None or current.status != "running":
            async for event in self._image_events():  # a new container: check the image
                yield event
        if box.reusable(current):  # up with this spec: ensure() makes no engine call
            reused = box.ensure()
        else:
            reused = await self.engine.call(_("starting the warm build container"),
                                            box.ensure)
        yield self.log.say(
            (_("warm build container {name} reused (Bazel server and caches warm)") if reused
             else _("warm build container {name} started (idle timeout {minutes} min)")
             ).format(name=self.workspace.container_name, minutes=self.idle_s // 60))
        if self.plan.source_kind != "dir":
            async for event in self._watched(self._exec_step("fetch", "fetch", box.fetch)):
                yield event
            if self.stepper.last is not None and self.stepper.last.exit_code != 0:
                return
            if self.replan is not None:  # configure and build follow the clone's files
                facts = await self.engine.call(
                    _("reading the source's build facts"), read_running_facts,
                    box, f"{self.plan.git_url}@{self.plan.git_ref}")
                async for event in apply_facts(self, facts, self.replan):
                    yield event
        tag = build_tag(self.build_id, self._labels[PLAN_DIGEST_LABEL], self.out_dir)
        async for event in self._watched(self._exec_step(
                "build", "configure", lambda out: box.build(out, configure=True, tag=tag)),
                package=True):
            yield event

    async def _watched(self, events: AsyncIterator[BuildEvent], *,
                       package: bool = False) -> AsyncIterator[BuildEvent]:
        """`events` with cancel watched (SIGINT to the exec); `package`: then the package
        phase when the step succeeded."""
        watcher = self._loop.create_task(self._watch_cancel()) if self._loop else None
        try:
            async for event in events:
                yield event
        finally:
            if watcher is not None:
                watcher.cancel()
        if package and self.stepper.last is not None and self.stepper.last.exit_code == 0 \
                and self.parser.enter("package"):
            yield PhaseChanged("package", "copy")

    @classmethod
    def attach_warm(cls, found: Any, *, client: Any, env: Any = None,
                    data_root: Path | None = None, out_dir: Path | None = None,
                    **kwargs: Any) -> WarmRunner:
        """A runner that follows the warm build `found` (warmattach.WarmBuild) its front end
        left: its record reopened, its plan verified (warmattach.open_warm)."""
        from .attach import open_warm

        left = open_warm(found, env=env, data_root=data_root, out_dir=out_dir)
        runner = cls(left.plan, recipe_id="", out_dir=left.out_dir, client=client, env=env,
                     data_root=data_root, build_id=found.build_id, **kwargs)
        ws = runner.workspace
        runner.workspace = Workspace(found.workspace_key, ws.recipe, ws.release, ws.ref,
                                     ws.backend)
        runner._labels[PLAN_DIGEST_LABEL] = left.digest
        runner.log.record = left.record
        runner._attached = left
        return runner

    async def _resume_steps(self) -> AsyncIterator[BuildEvent]:
        """Follow a warm build that was left: a second `bazel build` of the plan waits on
        the server for the running one, then names the (up to date) wheel in its BEP."""
        await self._setup_engine()
        self.engine.connected = True
        box = WarmContainer(self.engine.client, self.plan, self.workspace, idle_s=self.idle_s,
                            cancel_grace_s=self.cancel_grace_s, secrets=self.secrets.values)
        self.warm = box
        box.container = await self.engine.call(_("looking for the warm build container"),
                                               box.find)
        if box.container is None or box.container.status != "running":
            raise TfWizardError(_("the warm build container of build {id} is gone").format(
                id=self.build_id), _("Build again."))
        yield self.log.say(_("re-attached to build {id} in the warm container {name}: "
                             "waiting for its Bazel command to end").format(
            id=self.build_id, name=box.container.name))
        async for event in self._watched(self._exec_step("build", "analyse", box.build),
                                         package=True):
            yield event

    async def _watch_cancel(self) -> None:
        await self._cancel.wait()
        if self.warm is not None:
            self.log.say_soon(_("cancelling: sent SIGINT to the build in the warm container"))
            await self.engine.call(_("interrupting the build"), self.warm.cancel)

    async def _exec_step(self, name: str, phase: str,
                         run: Any) -> AsyncIterator[BuildEvent]:
        """One warm exec as events: its lines logged and parsed, its exit in stepper.last."""
        if self.cancelled:
            raise BuildCancelled(_("cancelled by the user"))
        self.stepper.last_step = name
        self.parser.enter(phase)  # type: ignore[arg-type]
        yield PhaseChanged(self.parser.phase, name)
        # not translated: record.step_line_counts finds where a step starts by this line
        yield self.log.say(f"step {name}: warm exec in {self.workspace.container_name}")
        done: list[ExecResult | None] = []
        feed: ThreadFeed[tuple[str, list[str]]] = ThreadFeed(lambda: _lines_of(run, done))
        async for channel, lines in feed:
            for event in self.stepper._emit(2 if channel == STDERR else 1, lines, False):
                yield event
            for event in self.log.take_said():
                yield event
        for event in self.log.take_said():
            yield event
        result = done[0] if done else None
        if name == "build" and result is not None:
            self._built = result
            assert self.record is not None
            data = "\n".join(result.bep_lines or []).encode("utf-8") or None
            self._bep = artifacts.store_bep(self.record, data, mask=bool(self.record.secrets))
            if self._bep is not None and self._bep.exit_name:
                yield self.log.say(_("Bazel exit (BEP): {exit}").format(
                    exit=self._bep.exit_name))
            if result.skipped:
                self.parser.enter("analyse")
        code = None if result is None else result.exit_code
        if result is None and name == "fetch":
            code = 0  # the source was there already
        self.stepper.last = StepOutcome(code, None, None)
        yield self.log.say(_("step {step} exited with {code}").format(step=name, code=code))

    def _read_in_container(self, path: str) -> bytes | None:
        """A file in the warm container (the workspace's source volume)."""
        return self.warm.read_file(path) if self.warm is not None else None

    async def _copy_wheels(self) -> list[Path]:
        """The wheel this build's BEP names (never an older one bazel-bin still holds)."""
        assert self.record is not None and self.warm is not None
        if self._built is None:
            return []
        out_dir = self.out_dir if self.out_dir is not None else self.record.path
        sums = (self.data_root or data_dir(self.env)) / wheelsums.FILE
        wheel = await self.engine.call(_("copying the wheel out of the warm container"),
                                       self.warm.copy_wheel, self._built, out_dir, sums=sums)
        return [wheel] if wheel is not None else []

    def _cleanup_sync(self) -> None:
        """The warm container stays up; a build still running in it is stopped when the
        front end cancelled or left."""
        if self.cancelled and self.warm is not None:
            self.warm.cancel()


def _lines_of(run: Any, done: list[ExecResult | None]) -> Iterator[tuple[str, list[str]]]:
    """The lines of `run(on_output)` (called in a thread of its own) as they come, in
    batches per channel; its result lands in `done`."""
    q: queue.Queue[Any] = queue.Queue()

    def on_output(channel: str, line: str) -> None:
        q.put((STDERR if channel == "stderr" else STDOUT, line))

    def target() -> None:
        try:
            done.append(run(on_output))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the reading thread
            q.put(exc)
        finally:
            q.put(_DONE)

    threading.Thread(target=target, daemon=True, name="tfwizard-warm-exec").start()
    while True:
        item = q.get()
        batch = [item]
        while item is not _DONE and not isinstance(item, BaseException):
            try:
                item = q.get_nowait()
            except queue.Empty:
                break
            batch.append(item)
        channel, lines = "", list[str]()
        for got in batch:
            if got is _DONE:
                if lines:
                    yield channel, lines
                return
            if isinstance(got, BaseException):
                raise got
            if got[0] != channel and lines:
                yield channel, lines
                lines = []
            channel = got[0]
            lines.append(got[1])
        if lines:
            yield channel, lines
