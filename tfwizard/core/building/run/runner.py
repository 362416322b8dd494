"""The containerized build: a BuildPlan executed step by step in Docker, as events.

    runner = BuildRunner(plan, out_dir=Path("wheels"))
    async for event in runner.events():
        ...                       # PhaseChanged, LogLines, Progress, DiagnosisEvent, Artifact
    runner.result                 # the BuildResult also carried by the Finished event

The runner orchestrates; its parts each own one concern: `steps` (a step's container and
its output as events, cancel), `containers` (least-privilege create options, secrets kept
out of Cmd/Env), `volumes` (what the steps share: the source, Bazel's per-build output
root, the caches, the record volume Bazel writes its BEP file into; uploads to a remote
engine), `artifacts` (the wheel and the BEP file leave through the API), `attach` (a build
a dead front end left: found by its labels, its plan trusted only with the digest they
carry, its record replayed) and `outcome` (how the build ended, from facts alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from ...diagnosis.types import DiagnosisEvent, UnrecognisedEvent
from ...docker import client as dockerutil
from ...docker.imagefacts import image_bazel
from ...docker.shared import shared_client
from ...errors import BuildCancelled, TfWizardError
from ...i18n import _
from ...jobs import run_blocking
from ...paths import LABEL
from ...secrets import mask_recipe_text
from ...streams import STDERR, STDOUT, TFWIZARD
from ...vocab import build_outcome
from ..plan.flags import RECORD
from ..plan.plan import BuildPlan, Step
from . import artifacts, attach, outcome, preflight
from .attach import OUT_LABEL, PLAN_DIGEST_LABEL, RECORD_LABEL, plan_digest
from .checkout import OneBuildPerFolder
from .containers import ROOT, Engine, StepSecrets
from .diagnoses import guarded_diagnoses
from .events import Artifact, BuildEvent, BuildResult, Finished, PhaseChanged
from .progress import BepSummary, ProgressParser, cache_summary
from .record import BuildRecord, new_build_id, record_path
from .sourcefollow import FollowsSource, follow_source
from .steps import BuildLog, Stepper
from .volumes import Volumes, check_paths
from .wheelgate import WheelGate

#: seconds between SIGINT and SIGKILL when a build is cancelled (the whole stop takes < 10 s)
CANCEL_GRACE_S = 5.0


class BuildRunner(FollowsSource, WheelGate, OneBuildPerFolder):
    """Run one BuildPlan (the long-job protocol of core/jobs.py): `events()` once, `cancel()`
    from any thread, `result` at the end."""

    def __init__(self, plan: BuildPlan, out_dir: Path | None = None,
                 recipe_text: str | None = None, client: Any = None,
                 env: Mapping[str, str] | None = None, data_root: Path | None = None,
                 build_id: str | None = None, cancel_grace_s: float = CANCEL_GRACE_S,
                 pull: bool = True, keep_containers: bool = False,
                 mem_limit: str | None = None) -> None:
        """`out_dir`: where the wheel goes (None: the record folder); `data_root`: instead of
        paths.data_dir(env); `keep_containers`: leave the step containers for inspection
        (benchmarks); `mem_limit`: cap each step container's memory ("4g")."""
        self.plan, self.out_dir, self.recipe_text = plan, out_dir, recipe_text
        self.env, self.data_root = env, data_root
        #: host profiles the record keeps (host.json, target-host.json): what the build was
        #: planned for, for its bundle and its history
        self.profiles: dict[str, str] = {}
        self.build_id = build_id or new_build_id()
        self.cancel_grace_s, self.pull, self.keep_containers = cancel_grace_s, pull, \
            keep_containers
        self.result: BuildResult | None = None
        self.parser = ProgressParser()
        self._cancelled = threading.Event()
        self._cancel = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = time.monotonic()
        # plan.json as written to the record; its digest (and where the record and the wheel
        # go) ride on the containers' labels, which no step can change: `attach` runs a plan
        # only when it still has that digest
        self._plan_json = plan.to_json()
        self._labels = {**plan.labels, f"{LABEL}.build": self.build_id,
                        PLAN_DIGEST_LABEL: plan_digest(self._plan_json),
                        OUT_LABEL: str(out_dir) if out_dir is not None else "",
                        RECORD_LABEL: str(record_path(self.build_id, root=data_root, env=env))}
        self.log = BuildLog()
        self.engine = Engine(client)
        self.secrets = StepSecrets(plan, dict(os.environ if env is None else env))
        self.stepper = Stepper(plan=plan, build_id=self.build_id, labels=self._labels,
                               engine=self.engine, secrets=self.secrets, parser=self.parser,
                               log=self.log, cancel=self._cancel, grace_s=cancel_grace_s,
                               mem_limit=mem_limit)
        self.volumes = Volumes(self.engine, plan, self.build_id, self._labels, local=True)
        self._bep: BepSummary | None = None
        self._attached: attach.Attached | None = None  # set by BuildRunner.attach
        self._detached = False

    @property
    def record(self) -> BuildRecord | None:
        """The build's record (None until `events()` made or reopened it)."""
        return self.log.record

    @property
    def client(self) -> Any:
        """The docker client (None until connected)."""
        return self.engine.client

    # -- control -----------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the build: SIGINT to the running step, SIGKILL after the grace period."""
        self._cancelled.set()
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._cancel.set)

    def detach(self) -> None:
        """Let the front end leave without stopping the build (`tfwizard build --attach`):
        call it, then stop iterating `events()`. The containers run on, the log so far stays
        in the record, result.json still says "running"."""
        self._detached = True

    @property
    def cancelled(self) -> bool:
        """True once `cancel()` was called (or the front end left)."""
        return self._cancelled.is_set()

    # -- the build -----------------------------------------------------------------------------
    async def events(self) -> AsyncIterator[BuildEvent]:
        """The build as events; the last one is always Finished (unless the consumer leaves)."""
        self._loop = asyncio.get_running_loop()
        if self._cancelled.is_set():
            self._cancel.set()
        self._started = time.monotonic()
        record = self._open_record()
        clean = False
        try:  # from the first yield on: a consumer that leaves anywhere frees the record
            yield Artifact("record", str(record.path))
            for event in self._greeting():
                yield event
            found = outcome.Outcome("error", "")
            exit_code: int | None = None
            bep: BepSummary | None = None
            try:
                check_paths(self.plan, self.out_dir)
                async for event in (self._resume_steps() if self._attached else
                                    self._run_steps()):
                    yield event
                last = self.stepper.last
                exit_code, bep = (last.exit_code if last else None), self._bep
                wheels: list[Path] = []
                if outcome.wants_wheels(cancelled=self.cancelled, exit_code=exit_code,
                                        wheel_dir=self.plan.wheel_dir):
                    wheels = await self._copy_wheels()
                    async for event in self._wheel_events(wheels):  # the check, then each
                        yield event
                found = outcome.classify(
                    cancelled=self.cancelled, exit_code=exit_code,
                    last_step=self.stepper.last_step, oom=self.stepper.oom,
                    wheel_dir=self.plan.wheel_dir, wheels=[str(w) for w in wheels],
                    mismatch=self.wheel_mismatch())
            except TfWizardError as exc:
                found = outcome.from_error(exc, cancelled=self.cancelled)
            yield self.log.say(build_outcome(found.status, found.message))
            diagnoses: list[DiagnosisEvent | UnrecognisedEvent] = []
            if found.status != "cancelled":
                # a build that succeeded is looked at for warnings, one that failed for
                # everything (a failure tfwizard stopped with its own message is explained),
                # in a thread: the loop lives on through a big log or the image's answer
                diagnoses, failed = await asyncio.get_running_loop().run_in_executor(None, partial(
                    guarded_diagnoses, record, exit_code, plan=self.plan,
                    recipe_text=self.recipe_text, warnings_only=found.status == "succeeded",
                    explained=exit_code is None and bool(found.message),
                    probe=partial(image_bazel, self.plan.image, self.env, self.plan.user)))
                if failed:
                    yield self.log.say(failed)
                for d in diagnoses:
                    yield d
            await asyncio.get_running_loop().run_in_executor(None, self._cleanup_sync)
            clean = True
            yield Finished(self._finish(found, exit_code, bep, diagnoses))
        finally:
            if not clean:
                self._abandoned()
            self.free_folder()
            record.close()
            record.unlock()

    def _open_record(self) -> BuildRecord:
        """The record: reopened (and locked) by `attach`, else made and locked."""
        if self._attached is not None:
            return self._attached.record
        record = BuildRecord.create(self.build_id, root=self.data_root, env=self.env,
                                    files=self._start_files())
        record.lock()  # held while this process follows the build (see --attach)
        self.log.record = record
        return record

    def _start_files(self) -> dict[str, str]:
        """A new record's files: the recipe, the plan, and a "running" result.json with
        what `tfwizard build --attach` needs if this process dies (written at once)."""
        files = {} if self.recipe_text is None else {
            "recipe.toml": mask_recipe_text(self.recipe_text)}
        return {**files, **self.profiles, "plan.json": self._plan_json, "result.json": json.dumps(
            {"build_id": self.build_id, "status": "running", "pid": os.getpid(),
             "out_dir": str(self.out_dir) if self.out_dir else None}, indent=2) + "\n"}

    def _greeting(self) -> list[BuildEvent]:
        """The record's history (attach), then what this build is."""
        assert self.record is not None
        if self._attached is not None:
            return [*attach.replay(self.record), self.log.say(
                _("tfwizard build --attach {id}: following the build its front end "
                  "left").format(id=self.build_id))]
        return [self.log.say(
            _("tfwizard build {id}: TensorFlow {release} ({backend}) in {image}").format(
                id=self.build_id, release=self.plan.release, backend=self.plan.backend,
                image=self.plan.image),
            _("record: {path}").format(path=self.record.path))]

    def _finish(self, found: outcome.Outcome, exit_code: int | None, bep: BepSummary | None,
                diagnoses: list[DiagnosisEvent | UnrecognisedEvent]) -> BuildResult:
        """The result, written to the record's result.json."""
        assert self.record is not None
        stats = self.parser.stats
        cache = cache_summary(stats, disk_cache="disk" in self.plan.cache_volumes,
                              remote_cache=any(f.startswith(("--remote_cache=",
                                                             "--remote_executor="))
                                               for f in self.plan.flag_list))
        self.result = BuildResult(
            build_id=self.build_id, status=found.status, record_dir=str(self.record.path),
            wheel=found.wheel, exit_code=exit_code,
            bazel_exit=bep.exit_name if bep else None, message=found.message,
            elapsed_s=round(time.monotonic() - self._started, 2),
            actions=stats.total_actions or self.parser.total, cache_hits=stats.cache_hits,
            findings=tuple(d.id for d in diagnoses if isinstance(d, DiagnosisEvent)),
            cache=cache.to_dict() if cache is not None else None,
            wheel_check=self.wheel_check.to_dict() if self.wheel_check else None)
        self.record.write_result({**self.result.to_dict(), "stats": stats.__dict__,
                                  "image_id": self.plan.image_id,
                                  "image_digest": self.plan.image_digest})
        return self.result

    def _abandoned(self) -> None:
        """The consumer left before Finished: detached on purpose (the build runs on), or
        gone (Ctrl-C, task cancelled: stop and remove synchronously, since this loop may
        not run another callback)."""
        record = self.record
        assert record is not None
        if self._detached:
            with contextlib.suppress(Exception):
                record.append(TFWIZARD, [
                    _("front end detached; the build runs on: `tfwizard build --attach "
                      "{id}` follows it again").format(id=self.build_id)])
            return
        self._cancelled.set()
        self._cleanup_sync()
        if self.result is None:
            with contextlib.suppress(Exception):
                record.append(TFWIZARD, [_("build cancelled: the front end stopped")])
                record.write_result({
                    "build_id": self.build_id, "status": "cancelled",
                    "record_dir": str(record.path),
                    "message": _("the front end stopped before the build ended"),
                    "elapsed_s": round(time.monotonic() - self._started, 2)})

    async def _setup_engine(self) -> None:
        """Secrets resolved, the engine connected (local or remote)."""
        # fail before anything starts when a ${ENV_VAR} the recipe refers to is unset
        self.secrets.check()
        if self.record is not None:
            # resolved values reach only the step's own files; the record masks them
            self.record.secrets = tuple(self.secrets.mask_values())
        if self.engine.client is None:
            self.engine.client = await self.engine.call(_("connecting to Docker"),
                                                        shared_client, self.env)
        self.volumes.local = dockerutil.is_local_engine(self.engine.client)

    async def _run_steps(self) -> AsyncIterator[BuildEvent]:
        plan = self.plan
        await self._setup_engine()
        async for event in self._one_build_per_folder():
            yield event
        yield PhaseChanged("prepare")
        async for event in self._image_events():
            yield event
        mounts: list[Any] = []
        async for line in self.volumes.prepare(mounts):
            yield self.log.say(line)
        async for event in self._prepare_container(mounts):
            yield event
        async for event in self._steps(plan.steps, mounts):
            yield event

    async def _image_events(self) -> AsyncIterator[BuildEvent]:
        """The image found (pulled if allowed), its identity recorded, looked inside."""
        plan = self.plan
        yield self.log.say(_("checking image {image}").format(image=plan.image))
        # a pull can stall on a registry that does not answer: cancel must not wait for it
        image = await self.engine.call_cancellable(
            _("finding image {image}").format(image=plan.image),
            lambda: dockerutil.ensure_image(self.engine.client, plan.image, pull=self.pull),
            self._cancel)
        self.engine.connected = True
        # before any step: the image has what the plan runs and names (seconds, not hours)
        yield self.log.say(await self.engine.call(_("looking inside image {image}").format(
            image=plan.image), self._check_image, image))

    def _check_image(self, image: Any) -> str:
        """Record the image's ID and digest in plan.json; stop when it lacks what the plan
        needs (preflight.missing_in_image). Returns the line to log."""
        plan = self.plan
        plan.image_id, plan.image_digest = preflight.image_identity(image, plan.image)
        self.plan_changed()  # the plan names its image now
        return preflight.image_line(self.engine.client, plan, self.env)

    async def _steps(self, steps: list[Step], mounts: list[Any]) -> AsyncIterator[BuildEvent]:
        """Run `steps` in order until one fails; then the package phase."""
        for step in steps:
            if self.cancelled:
                raise BuildCancelled(_("cancelled by the user"))
            self.stepper.last_step = step.name
            self.parser.enter(step.phase)
            yield PhaseChanged(self.parser.phase, step.name)
            # not translated: record.step_line_counts finds where a step starts by this line
            yield self.log.say(f"step {step.name}: " + " ".join(step.argv))
            async for event in self.stepper.run(step, mounts):
                yield event
            async for event in self._after_step(step):
                yield event
            if not self._step_succeeded():
                return
        if self.parser.enter("package"):
            yield PhaseChanged("package", "copy")

    async def _after_step(self, step: Step) -> AsyncIterator[BuildEvent]:
        """What follows a step's output: the build step's BEP events (run or re-attached);
        after a clone, its own facts and the plan made from them (sourcefollow.py)."""
        events = follow_source(self, step) if step.role == "fetch" else self._read_bep()
        if step.role == "fetch" or step.needs_record:
            async for event in events:
                yield event

    def _step_succeeded(self) -> bool:
        """Whether the last step ran and exited 0 (else the build stops there)."""
        return self.stepper.last is not None and self.stepper.last.exit_code == 0

    async def _prepare_container(self, mounts: list[Any]) -> AsyncIterator[BuildEvent]:
        """Hand the volumes to the build uid: a root container chowns their top folders."""
        user = self.plan.user
        if not user or user.split(":")[0] == "0":
            return
        targets = [m["Target"] for m in mounts if m["Type"] == "volume"]
        if not targets:
            return
        step = Step("prepare", "prepare", ("chown", user, *targets), workdir="/",
                    needs_network=False, role="prepare", needs_record=True)
        yield self.log.say(_("handing volumes to uid {user}: {volumes}").format(
            user=user, volumes=" ".join(targets)))
        async for event in self.stepper.run(step, mounts, user=ROOT, quiet=True):
            yield event
        last = self.stepper.last
        if last is None or last.exit_code != 0:
            raise TfWizardError(
                _("could not prepare the volumes (chown exited {code})").format(
                    code=last.exit_code if last else None),
                _("The build image needs `chown`; see the log for details."))
        self.stepper.last = None

    # -- re-attaching ----------------------------------------------------------------------------
    @classmethod
    def attach(cls, build_id: str | None = None, *, client: Any = None,
               env: Mapping[str, str] | None = None, data_root: Path | None = None,
               out_dir: Path | None = None, **kwargs: Any) -> BuildRunner:
        """A runner that follows a build its front end left (killed, crashed, detached).

        The build is found by its containers' labels and its plan checked against the
        digest they carry (attach.open_build). `events()` then replays the record, follows
        the step container from the first line the record lacks, runs the steps still to
        come, and copies the wheel out; or, if the build ended meanwhile, reports how and
        still copies the wheel. Raises UsageError when there is nothing to attach to, or
        when another live tfwizard process follows the build.
        """
        if client is None:
            client = dockerutil.connect(env)
        left = attach.open_build(client, build_id, env=env, data_root=data_root,
                                 out_dir=out_dir)
        runner = cls(left.plan, out_dir=left.out_dir, client=client, env=env,
                     data_root=data_root, build_id=left.found.build_id, **kwargs)
        # the steps still to come carry the digest of the plan the build started with
        runner._labels[PLAN_DIGEST_LABEL] = left.digest
        runner.log.record = left.record
        runner._attached = left
        return runner

    async def _resume_steps(self) -> AsyncIterator[BuildEvent]:
        assert self.record is not None and self._attached is not None
        found = self._attached.found
        await self._setup_engine()
        self.engine.connected = True
        # what this build made is removed at its end, as if this process had made it
        self.stepper.containers.extend(found.containers)
        self.volumes.made.extend(await self.engine.call(
            _("listing the build's volumes"), lambda: self.engine.client.volumes.list(
                filters={"label": f"{LABEL}.build={self.build_id}"})))
        current = found.current
        name = current.labels.get(f"{LABEL}.step", "")
        names = [s.name for s in self.plan.steps]
        if name not in names:
            raise TfWizardError(
                _("build {id} had not started its first step when its front end stopped "
                  "(last container: {container})").format(id=self.build_id,
                                                          container=name or "?"),
                _("Build it again; `tfwizard clean` removes what is left."))
        index = names.index(name)
        step = self.plan.steps[index]
        self.stepper.last_step = name
        self.parser.enter(step.phase)
        yield PhaseChanged(self.parser.phase, name)
        seen = self.record.step_line_counts(name)
        # not "step NAME: ...": that line marks where the step's output starts in the log
        if found.running:
            text = _("re-attached to step {step}, container {container} running; the record "
                     "holds its first {stdout} stdout and {stderr} stderr lines")
        else:
            text = _("re-attached to step {step}, container {container} ended ({status}); the "
                     "record holds its first {stdout} stdout and {stderr} stderr lines")
        yield self.log.say(text.format(step=name, container=current.name,
                                       status=current.status, stdout=seen[STDOUT],
                                       stderr=seen[STDERR]))
        async for event in self.stepper.follow(step, current, seen):
            yield event
        async for event in self._after_step(step):
            yield event
        if not self._step_succeeded():
            return
        rest = self.plan.steps[index + 1:]
        if rest:
            mounts: list[Any] = []
            async for line in self.volumes.prepare(mounts):
                yield self.log.say(line)
            async for event in self._steps(rest, mounts):
                yield event
        elif self.parser.enter("package"):
            yield PhaseChanged("package", "copy")

    # -- results -------------------------------------------------------------------------------
    async def _read_bep(self) -> AsyncIterator[BuildEvent]:
        """Copy the BEP file out of the step's record volume into the record; say Bazel's
        authoritative exit."""
        assert self.record is not None
        data = None
        if self.stepper.last is not None:
            with contextlib.suppress(TfWizardError):
                data = await self.engine.call(_("copying the BEP file"),
                                              artifacts.read_archive_file,
                                              self.stepper.last.container, f"{RECORD}/bep.json")
        self._bep = artifacts.store_bep(self.record, data, mask=bool(
            self.record.secrets or self.secrets.names))
        if self._bep is not None and self._bep.exit_name:
            yield self.log.say(_("Bazel exit (BEP): {exit}").format(exit=self._bep.exit_name))

    async def _copy_wheels(self) -> list[Path]:
        """Copy fresh *.whl files from the plan's wheel_dir into out_dir (atomically)."""
        last = self.stepper.last
        assert last is not None and self.record is not None
        since = self.stepper.build_started_at or last.started_at
        wheel_dir = self.plan.wheel_dir
        out_dir = self.out_dir if self.out_dir is not None else self.record.path
        owner = artifacts.output_owner(self.plan.user)
        artifacts.make_out_dir(out_dir, owner)
        return await self.engine.call(
            _("copying the wheel out of {path}").format(path=wheel_dir),
            artifacts.extract_wheels, last.container, wheel_dir, out_dir, since,
            cancelled=self._cancelled.is_set, owner=owner)

    def _cleanup_sync(self) -> None:
        """Remove every container and per-build volume this build made (never raises)."""
        self.stepper.stop_now(keep=self.keep_containers and not self.cancelled)
        for vol in self.volumes.made:
            with contextlib.suppress(Exception):
                vol.remove(force=True)
        self.volumes.made.clear()


def build_blocking(plan: BuildPlan, *, out_dir: Path | None = None,
                   on_event: Callable[[BuildEvent], None] | None = None,
                   **kwargs: Any) -> BuildResult:
    """Run a build to the end without an event loop of one's own; returns the result."""
    result: BuildResult = run_blocking(BuildRunner(plan, out_dir=out_dir, **kwargs), on_event)
    return result
