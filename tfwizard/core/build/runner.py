"""The containerized build: a BuildPlan executed step by step in Docker, as events.

    runner = BuildRunner(plan, out_dir=Path("wheels"))
    async for event in runner.events():
        ...                       # PhaseChanged, LogLines, Progress, DiagnosisEvent, Artifact
    runner.result                 # the BuildResult also carried by the Finished event

Each plan step runs in its own container (docker SDK only: argv lists, no shell), as the
plan's uid:gid, never privileged, without capabilities (`cap_drop=ALL`,
no-new-privileges), with no Docker socket inside, labelled with the plan's labels and the
build id. What the steps share lives in volumes: the source (bind-mounted
checkout, or a per-build volume the fetch step clones into), Bazel's output root (a
per-build volume, so `bazel-bin` never holds a wheel from an earlier build and the package
step of older releases sees the build's outputs), the cache volumes (kept across builds)
and /record (a per-build volume where Bazel writes its BEP file, copied back through the
API: no step can write the record folder, whose plan.json `attach` runs). The wheel leaves
with `get_archive`, so a remote engine works too.

A front end that dies (SIGKILL included) leaves the step container running and the log on
disk; `BuildRunner.attach(build_id)` finds the build by its label, replays the record and
follows the container from the first line the record lacks (the engine's log keeps the
rest), then runs the steps still to come and copies the wheel out.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import os
import re
import secrets
import shlex
import tarfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from ..diagnosis_text import diagnosis_block
from ..errors import BuildCancelled, TfWizardError, UsageError
from ..fixes import record_context, resolve_diagnoses
from ..i18n import _
from ..recipe import parse_recipe
from ..safety import check_mount_source, check_output_dir
from ..secrets import redact, substitute
from ..vocab import BuildStatus, build_outcome
from . import dockerutil, preflight
from .diagnose import diagnose_stream
from .events import (
    STDERR,
    STDOUT,
    TFWIZARD,
    Artifact,
    BuildEvent,
    BuildResult,
    DiagnosisEvent,
    Finished,
    LineSplitter,
    LogLines,
    PhaseChanged,
    Progress,
    ThreadFeed,
)
from .plan import (
    LABEL,
    OUTPUT_USER_ROOT,
    RECORD,
    SRC,
    BuildPlan,
    Flag,
    Mount,
    Step,
    resolve_secrets,
    secret_references,
)
from .progress import BepSummary, ProgressParser, cache_summary, parse_bep
from .record import BuildRecord, atomic_write, builds_dir, new_build_id, record_path

T = TypeVar("T")

#: seconds between SIGINT and SIGKILL when a build is cancelled (the whole stop takes < 10 s)
CANCEL_GRACE_S = 5.0
#: the image's user for the prepare container that hands volumes to the build uid
ROOT = "0:0"
#: the only capabilities any tfwizard container gets back after dropping ALL: the prepare
#: container's, to chown the volumes' top folders (build steps get none)
PREPARE_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER")


#: container labels set when a step container is made (a step cannot change them)
PLAN_DIGEST_LABEL = f"{LABEL}.plan-sha256"
OUT_LABEL = f"{LABEL}.out"
RECORD_LABEL = f"{LABEL}.record"


#: where a step's secret files live in its container (see BuildRunner._secret_files)
SECRETS_DIR = "/.tfwizard-secrets"
#: the fixed wrapper of a step with secret environment variables: $1 is the file to source
#: (NAME='value' lines, shell-quoted); it is deleted, then the step runs with them exported
SOURCE_ENV_THEN_EXEC = 'set -a && . "$1" && set +a && rm -f "$1" && shift && exec "$@"'


def _uid_gid(user: str | None) -> tuple[int, int] | None:
    uid, _colon, gid = (user or "").partition(":")
    return (int(uid), int(gid)) if uid.isdigit() and gid.isdigit() else None


def _secrets_tar(files: Mapping[str, str], owner: tuple[int, int] | None) -> bytes:
    """A tar of SECRETS_DIR (mode 0700) with `files` (0600), owned by the step's user."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        entries = [(SECRETS_DIR.lstrip("/"), None)] + [
            (f"{SECRETS_DIR.lstrip('/')}/{name}", text.encode("utf-8"))
            for name, text in files.items()]
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.uid, info.gid = owner or (0, 0)
            info.mtime = int(time.time())
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o700
                tar.addfile(info)
            else:
                info.mode, info.size = 0o600, len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def plan_digest(plan_json: str) -> str:
    """The sha256 of plan.json's text, as `attach` checks it against the containers' label."""
    return hashlib.sha256(plan_json.encode("utf-8")).hexdigest()


def gpu_options(kind: str | None) -> dict[str, Any]:
    """create() keyword arguments that give a container the host's GPUs (None: none).

    Building needs no GPU (the plan says gpu_passthrough=None); verification steps do.
    """
    if kind == "nvidia":
        import docker.types

        return {"device_requests": [docker.types.DeviceRequest(count=-1,
                                                               capabilities=[["gpu"]])]}
    if kind == "rocm":
        # ROCm needs the compute (kfd) and render (dri) nodes; see the rocm-docker source
        return {"devices": ["/dev/kfd:/dev/kfd:rwm", "/dev/dri:/dev/dri:rwm"],
                "group_add": ["video"]}
    return {}


@dataclass
class _StepOutcome:
    exit_code: int | None
    container: Any
    started_at: float | None  # engine clock, epoch seconds
    bep: BepSummary | None = None


@dataclass
class BuildRunner:
    """Run one BuildPlan. Use `events()` once; `cancel()` may be called from any thread."""

    plan: BuildPlan
    out_dir: Path | None = None  # where the wheel goes; None: the record folder
    recipe_text: str | None = None
    client: Any = None
    env: Mapping[str, str] | None = None
    data_root: Path | None = None  # default: record.data_dir(env)
    build_id: str = field(default_factory=new_build_id)
    cancel_grace_s: float = CANCEL_GRACE_S
    pull: bool = True
    keep_containers: bool = False  # leave the step containers for inspection (benchmarks)
    mem_limit: str | None = None  # cap each step container's memory ("4g"); None: no cap

    def __post_init__(self) -> None:
        self.record: BuildRecord | None = None
        self.result: BuildResult | None = None
        self.parser = ProgressParser()
        self._cancelled = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancel_async: asyncio.Event | None = None
        self._containers: list[Any] = []
        self._volumes: list[Any] = []  # per-build volumes, removed at the end
        self._running: Any = None
        self._started = time.monotonic()
        # plan.json as written to the record; its digest (and where the record and the wheel
        # go) ride on the containers' labels, which no step can change: `attach` runs a plan
        # only when it still has that digest
        self._plan_json = self.plan.to_json()
        self._labels = {**self.plan.labels, f"{LABEL}.build": self.build_id,
                        PLAN_DIGEST_LABEL: plan_digest(self._plan_json),
                        OUT_LABEL: str(self.out_dir) if self.out_dir is not None else "",
                        RECORD_LABEL: str(record_path(self.build_id, root=self.data_root,
                                                        env=self.env))}
        self._local = True
        self._secrets: list[str] = []
        self._secret_env: dict[str, str] = {}
        self._last: _StepOutcome | None = None
        self._last_step = ""
        self._bep: BepSummary | None = None
        self._build_started_at: float | None = None
        self._connected = False  # the engine answered once: a lost connection = it went away
        self._attach = False  # set by BuildRunner.attach: follow a build a dead front end left
        self._detached = False
        self._found: FoundBuild | None = None
        self._oom = False
        self._init = True  # False once the engine turns out to have no docker-init
        self._said: list[LogLines] = []  # said where no event could be yielded (_say_soon)

    # -- control -----------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the build: SIGINT to the running step, SIGKILL after the grace period."""
        self._cancelled.set()
        loop, ev = self._loop, self._cancel_async
        if loop is not None and ev is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(ev.set)

    def detach(self) -> None:
        """Let the front end leave without stopping the build (`tfwizard build --attach`).

        Call it, then stop iterating `events()`: the containers run on, the log so far stays
        in the record, result.json still says "running".
        """
        self._detached = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # -- helpers -------------------------------------------------------------------------------
    async def _call(self, doing: str, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        loop = asyncio.get_running_loop()

        def run() -> T:
            with dockerutil.docker_errors(doing, connected=self._connected):
                return fn(*args, **kw)

        return await loop.run_in_executor(None, run)

    async def _call_cancellable(self, doing: str, fn: Callable[..., T], *args: Any) -> T:
        """`_call` in a thread of its own that a cancel does not wait for.

        For engine calls that can stall with nothing to interrupt (an image pull from a
        registry that does not answer): on cancel, BuildCancelled at once; the thread ends
        when the call returns or times out, and its result is dropped.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def deliver(setter: Callable[[Any], None], value: Any) -> None:
            if not future.done():
                setter(value)

        def run() -> None:
            try:
                with dockerutil.docker_errors(doing, connected=self._connected):
                    value = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - crosses to the loop as data
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(deliver, future.set_exception, exc)
            else:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(deliver, future.set_result, value)

        # a daemon thread: asyncio.run's executor shutdown must not wait for a stalled pull
        threading.Thread(target=run, name=f"tfwizard {doing}", daemon=True).start()
        assert self._cancel_async is not None
        cancel = asyncio.ensure_future(self._cancel_async.wait())
        try:
            waiters: set[asyncio.Future[Any]] = {future, cancel}
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
        if not future.done():
            future.cancel()
            raise BuildCancelled(_("cancelled by the user while {doing}").format(doing=doing))
        return future.result()

    def _log(self, channel: str, lines: list[str]) -> LogLines:
        assert self.record is not None
        if self.record.secrets:  # front ends see what the record keeps: masked
            lines = [redact(line, self.record.secrets) for line in lines]
        first = self.record.append(channel, lines)
        return LogLines(channel, tuple(lines), first)

    def _say(self, *lines: str) -> LogLines:
        # an error's message and hint are two lines: each gets its tag in the record
        return self._log(TFWIZARD, [part for line in lines for part in line.split("\n")])

    # -- the build -----------------------------------------------------------------------------
    async def events(self) -> AsyncIterator[BuildEvent]:
        """The build as events; the last one is always Finished (unless the consumer leaves)."""
        self._loop = asyncio.get_running_loop()
        self._cancel_async = asyncio.Event()
        if self._cancelled.is_set():
            self._cancel_async.set()
        self._started = time.monotonic()
        if self._attach:
            assert self.record is not None  # reopened (and locked) by BuildRunner.attach
        else:
            self.record = BuildRecord.create(self.build_id, root=self.data_root, env=self.env)
            self.record.lock()  # held while this process follows the build (see --attach)
        status: BuildStatus = "error"
        message, exit_code, bep, wheel = "", None, None, None
        clean = False
        try:  # from the first yield on: a consumer that leaves anywhere frees the record
            if not self._attach:
                if self.recipe_text is not None:
                    self.record.write_recipe(self.recipe_text)
                self.record.write_plan(self._plan_json)
                # what `tfwizard build --attach` needs if this process dies
                self.record.write_result({"build_id": self.build_id, "status": "running",
                                          "out_dir": str(self.out_dir) if self.out_dir else None,
                                          "pid": os.getpid()})
            yield Artifact("record", str(self.record.path))
            if self._attach:
                for replayed in self._replay():
                    yield replayed
            if self._attach:
                yield self._say(_("tfwizard build --attach {id}: following the build its "
                                  "front end left").format(id=self.build_id))
            else:
                yield self._say(_("tfwizard build {id}: TensorFlow {release} ({backend}) in "
                                  "{image}").format(id=self.build_id, release=self.plan.release,
                                                    backend=self.plan.backend,
                                                    image=self.plan.image),
                                _("record: {path}").format(path=self.record.path))
            try:
                # paths checked before any Docker work (not after a multi-hour build)
                if self.out_dir is not None:
                    problem = check_output_dir(self.out_dir)
                    if problem:
                        raise UsageError(
                            _("the output folder {path} {problem}").format(path=self.out_dir,
                                                                           problem=problem),
                            _("Choose another folder with `--out DIR` or output.dir in the "
                              "recipe."))
                for m in self.plan.mounts:
                    problem = check_mount_source(m.source) if m.kind == "bind" else None
                    if problem:
                        raise UsageError(
                            _("{source} (mounted at {target}) {problem}").format(
                                source=m.source, target=m.target, problem=problem),
                            _("Point tensorflow.source_dir / network.distdir at a folder of "
                              "your own."))
                steps = self._resume_steps() if self._attach else self._run_steps()
                async for event in steps:
                    yield event
                outcome = self._last
                exit_code = outcome.exit_code if outcome else None
                bep = self._bep
                if self.cancelled:
                    status, message = "cancelled", _("cancelled by the user")
                elif exit_code != 0:
                    status = "failed"
                    message = _("step {step} exited with {code}").format(step=self._last_step,
                                                                          code=exit_code)
                    if self._oom:
                        message = _("step {step} was killed (exit {code}): out of memory (the "
                                    "container's memory limit); lower build.jobs in the recipe "
                                    "(e.g. halve it), or give the build more memory").format(
                            step=self._last_step, code=exit_code)
                    elif exit_code == 137:
                        message = _("step {step} was killed (exit {code}): most likely out of "
                                    "memory; lower build.jobs in the recipe (e.g. halve it), or "
                                    "give the build more memory").format(step=self._last_step,
                                                                         code=exit_code)
                elif not self.plan.wheel_dir:  # a plan that makes no wheel (tfwizard fetch)
                    status = "succeeded"
                    message = _("every step passed (this plan makes no wheel)")
                else:
                    wheels = await self._copy_wheels()
                    if wheels:
                        wheel = str(wheels[-1])
                        for w in wheels:
                            yield Artifact("wheel", str(w))
                        status, message = "succeeded", _("wheel: {path}").format(path=wheel)
                    else:
                        status = "failed"
                        message = _("the build produced no wheel in {path}").format(
                            path=self.plan.wheel_dir)
            except BuildCancelled as exc:
                status, message = "cancelled", exc.message
            except TfWizardError as exc:
                status, message = ("cancelled", _("cancelled by the user")) if self.cancelled \
                    else ("error", str(exc))
            yield self._say(build_outcome(status, message))
            findings: list[DiagnosisEvent] = []
            if status != "cancelled":
                # a build that succeeded is looked at for warnings (a remote cache Bazel
                # could not use), one that failed for everything
                findings = self._diagnose(exit_code, warnings_only=status == "succeeded")
                for f in findings:
                    yield f
            await self._cleanup()
            clean = True
            cache = cache_summary(self.parser.stats, disk_cache="disk" in self.plan.cache_volumes,
                                  remote_cache=any(f.startswith("--remote_cache=")
                                                   for f in self.plan.flag_list))
            self.result = BuildResult(
                build_id=self.build_id, status=status, record_dir=str(self.record.path),
                wheel=wheel, exit_code=exit_code,
                bazel_exit=bep.exit_name if bep else None, message=message,
                elapsed_s=round(time.monotonic() - self._started, 2),
                actions=self.parser.stats.total_actions or self.parser.total,
                cache_hits=self.parser.stats.cache_hits,
                findings=tuple(f.id for f in findings),
                cache=cache.to_dict() if cache is not None else None)
            self.record.write_result({**self.result.to_dict(),
                                      "stats": self.parser.stats.__dict__,
                                      "image_id": self.plan.image_id,
                                      "image_digest": self.plan.image_digest})
            yield Finished(self.result)
        finally:
            if not clean and self._detached:
                # the front end leaves on purpose: the build runs on, to be re-attached
                with contextlib.suppress(Exception):
                    self.record.append(TFWIZARD, [
                        _("front end detached; the build runs on: `tfwizard build --attach "
                          "{id}` follows it again").format(id=self.build_id)])
            elif not clean:
                # the consumer left (Ctrl-C, task cancelled): stop and remove synchronously,
                # since this loop may not run another callback
                self._cancelled.set()
                self._cleanup_sync()
                if self.result is None:
                    with contextlib.suppress(Exception):
                        self.record.append(TFWIZARD,
                                           [_("build cancelled: the front end stopped")])
                        self.record.write_result({
                            "build_id": self.build_id, "status": "cancelled",
                            "record_dir": str(self.record.path),
                            "message": _("the front end stopped before the build ended"),
                            "elapsed_s": round(time.monotonic() - self._started, 2)})
            self.record.close()
            self.record.unlock()

    async def _setup_engine(self) -> None:
        """Secrets resolved, the engine connected (local or remote)."""
        plan = self.plan
        # fail before anything starts when a ${ENV_VAR} the recipe refers to is unset
        self._secret_env = dict(os.environ if self.env is None else self.env)
        resolve_secrets(plan, self._secret_env)
        self._secrets = secret_references(plan)
        for name in self._secrets:
            value = self._secret_env[name]
            if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
                # it goes into a file of lines (an rc file, an env file): one line only
                raise UsageError(_("${{{name}}} holds a line break or a control character; a "
                                   "secret must be one line").format(name=name))
        if self.record is not None:
            # resolved values reach only the step's own files; the record masks them
            self.record.secrets = tuple(self._secret_env[n] for n in self._secrets)
        if self.client is None:
            self.client = await self._call(_("connecting to Docker"), dockerutil.connect,
                                           self.env)
        self._local = dockerutil.is_local_engine(self.client)

    async def _run_steps(self) -> AsyncIterator[BuildEvent]:
        plan = self.plan
        await self._setup_engine()
        yield PhaseChanged("prepare")
        yield self._say(_("checking image {image}").format(image=plan.image))
        # a pull can stall on a registry that does not answer: cancel must not wait for it
        image = await self._call_cancellable(
            _("finding image {image}").format(image=plan.image),
            lambda: dockerutil.ensure_image(self.client, plan.image, pull=self.pull))
        self._connected = True
        # before any step: the image has what the plan runs and names (seconds, not hours)
        yield self._say(await self._call(_("looking inside image {image}").format(
            image=plan.image), self._check_image, image))
        mounts: list[Any] = []
        async for event in self._prepare_volumes(mounts):
            yield event
        async for event in self._prepare_container(mounts):
            yield event
        async for event in self._steps(plan.steps, mounts):
            yield event

    def _check_image(self, image: Any) -> str:
        """Record the image's ID and digest in plan.json; stop when it lacks what the plan
        needs (preflight.missing_in_image). Returns the line to log."""
        plan = self.plan
        plan.image_id, plan.image_digest = preflight.image_identity(image, plan.image)
        assert self.record is not None
        # the plan now names the image it runs: its containers (none made yet) carry the
        # digest of this text, which is what `attach` will read back
        self._plan_json = plan.to_json()
        self._labels[PLAN_DIGEST_LABEL] = plan_digest(self._plan_json)
        self.record.write_plan(self._plan_json)
        try:
            missing = preflight.missing_in_image(self.client, plan)
        except TfWizardError as exc:  # no /bin/sh to look with: the steps themselves will tell
            return _("image {id}: not looked inside ({error})").format(
                id=plan.image_digest or plan.image_id, error=exc.message)
        if missing:
            raise TfWizardError("\n".join(f.message for f in missing),
                                _("`tfwizard check --preflight RECIPE` checks this before a "
                                  "build."))
        return _("image {id}: what the plan needs is there").format(
            id=plan.image_digest or plan.image_id)

    async def _steps(self, steps: list[Step], mounts: list[Any]) -> AsyncIterator[BuildEvent]:
        """Run `steps` in order until one fails; then the package phase."""
        for step in steps:
            if self.cancelled:
                raise BuildCancelled(_("cancelled by the user"))
            self._last_step = step.name
            self.parser.enter(step.phase)
            yield PhaseChanged(self.parser.phase, step.name)
            # not translated: record.step_line_counts finds where a step starts by this line
            yield self._say(f"step {step.name}: " + " ".join(step.argv))
            async for event in self._run_step(step, mounts):
                yield event
            if step.name == "build":
                self._bep = await self._read_bep()
                if self._bep is not None and self._bep.exit_name:
                    yield self._say(_("Bazel exit (BEP): {exit}").format(
                        exit=self._bep.exit_name))
            if self._last is None or self._last.exit_code != 0:
                return
        if self.parser.enter("package"):
            yield PhaseChanged("package", "copy")

    # -- re-attaching ----------------------------------------------------------------------------
    @classmethod
    def attach(cls, build_id: str | None = None, *, client: Any = None,
               env: Mapping[str, str] | None = None, data_root: Path | None = None,
               out_dir: Path | None = None, **kwargs: Any) -> BuildRunner:
        """A runner that follows a build its front end left (killed, crashed, detached).

        The build is found by its containers' `io.tfwizard.build` label (None: the one
        build running on the engine), its record by its id (else where the containers'
        labels say). Its plan.json runs only if it still has the digest the containers'
        labels carry (no step can change a label), else UsageError. `events()` then
        replays the record, follows the step container from the first line the record
        lacks, runs the steps still to come, and copies the wheel out; or, if the build
        ended meanwhile, reports how and still copies the wheel. Raises UsageError when there is nothing to attach to, or when
        another live tfwizard process follows the build.
        """
        if client is None:
            client = dockerutil.connect(env)
        builds = find_builds(client, build_id)
        if build_id is None:
            # the running builds whose record is in this data folder (others are not ours)
            base = builds_dir(data_root, env)
            running = [b for b in builds if b.running and (base / b.build_id).is_dir()]
            if not running:
                raise UsageError(_("no tfwizard build is running on this Docker engine"),
                                 _("`tfwizard build RECIPE` starts one; `tfwizard clean` "
                                   "removes what finished builds left."))
            if len(running) > 1:
                raise UsageError(_("several tfwizard builds are running: {ids}").format(
                                     ids=", ".join(b.build_id for b in running)),
                                 _("Name one: `tfwizard build --attach BUILD_ID`."))
            found = running[0]
        elif not builds:
            raise UsageError(
                _("build {id} has no containers on this Docker engine").format(id=build_id),
                _("It ended and was cleaned up: `tfwizard diagnose {id}` reads its log.").format(
                    id=build_id))
        else:
            found = builds[0]
        path = found.record_dir(data_root, env)
        if path is None:
            raise UsageError(
                _("build {id} is running, but its record folder is not on this machine").format(
                    id=found.build_id),
                _("Set TFWIZARD_DATA_DIR as the build had it, or follow the container with "
                  "`docker logs -f {container}`.").format(container=found.current.name))
        record = BuildRecord.reopen(path)
        if not record.lock():
            raise UsageError(
                _("build {id} is still followed by another tfwizard process").format(
                    id=found.build_id),
                _("Use that window or terminal, or stop it first."))
        try:
            text = (path / "plan.json").read_text("utf-8")
            digest = found.label(PLAN_DIGEST_LABEL)
            if digest is None:
                raise UsageError(
                    _("build {id} was started by an older tfwizard: its plan cannot be "
                      "checked, so tfwizard runs nothing from it").format(id=found.build_id),
                    _("Let it finish and read its record, or stop it with `tfwizard clean` "
                      "and build again."))
            if plan_digest(text) != digest:
                # never run what was read back from a place something else could write
                raise UsageError(
                    _("build {id}: its plan.json changed after the build started (it no "
                      "longer matches the digest its containers carry); tfwizard runs "
                      "nothing from it").format(id=found.build_id),
                    _("Something wrote into the build record {path}. Stop the build with "
                      "`tfwizard clean`, look at what changed, and build again.").format(
                        path=path))
            plan = plan_from_dict(json.loads(text))
        except (OSError, ValueError, TypeError, KeyError) as exc:
            record.unlock()
            raise UsageError(_("{path}: the build's plan cannot be read ({error})").format(
                path=path, error=exc)) from None
        except UsageError:
            record.unlock()
            raise
        labelled_out = found.label(OUT_LABEL)  # the label, not a file in the record
        if out_dir is None and labelled_out:
            out_dir = Path(labelled_out)
        runner = cls(plan, out_dir=out_dir, client=client, env=env,
                     data_root=data_root, build_id=found.build_id, **kwargs)
        # the steps still to come carry the digest of the plan the build started with
        runner._labels[PLAN_DIGEST_LABEL] = digest
        runner.record = record
        runner._attach = True
        runner._found = found
        return runner

    def _replay(self) -> list[LogLines]:
        """The record's history as LogLines events (for the front end; not logged again)."""
        assert self.record is not None
        out: list[LogLines] = []
        first, channel, lines = 1, "", list[str]()
        for ch, text in self.record.replay():
            if ch != channel and lines:
                out.append(LogLines(channel, tuple(lines), first))
                first += len(lines)
                lines = []
            channel = ch
            lines.append(text)
        if lines:
            out.append(LogLines(channel, tuple(lines), first))
        return out

    async def _resume_steps(self) -> AsyncIterator[BuildEvent]:
        assert self.record is not None
        found = self._found
        assert found is not None
        await self._setup_engine()
        self._connected = True
        # what this build made is removed at its end, as if this process had made it
        self._containers.extend(found.containers)
        self._volumes.extend(await self._call(
            _("listing the build's volumes"), lambda: self.client.volumes.list(
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
        self._last_step = name
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
        yield self._say(text.format(step=name, container=current.name, status=current.status,
                                    stdout=seen[STDOUT], stderr=seen[STDERR]))
        async for event in self._follow_step(step, current, seen):
            yield event
        if name == "build":
            self._bep = await self._read_bep()
            if self._bep is not None and self._bep.exit_name:
                yield self._say(_("Bazel exit (BEP): {exit}").format(exit=self._bep.exit_name))
        if self._last is None or self._last.exit_code != 0:
            return
        rest = self.plan.steps[index + 1:]
        if rest:
            mounts: list[Any] = []
            async for event in self._prepare_volumes(mounts):
                yield event
            async for event in self._steps(rest, mounts):
                yield event
        elif self.parser.enter("package"):
            yield PhaseChanged("package", "copy")

    async def _follow_step(self, step: Step, container: Any,
                           seen: Mapping[str, int]) -> AsyncIterator[BuildEvent]:
        """The output of a step container that may have run unwatched: from its first
        line the record lacks (the engine's log keeps it all), live until it exits."""
        follower = await self._call(_("following the container's log"),
                                    dockerutil.LogFollower, self.client, container.id)
        splitters: dict[int, LineSplitter] = {1: _SkippingSplitter(seen.get(STDOUT, 0)),
                                              2: _SkippingSplitter(seen.get(STDERR, 0))}
        self._running = container
        watcher = asyncio.ensure_future(self._watch_cancel(container))
        try:
            feed: ThreadFeed[list[tuple[int, bytes]]] = ThreadFeed(follower.frames,
                                                                   stop=follower.close)
            async for event in self._drain(feed, splitters, step, container, quiet=False):
                yield event
            await self._stopped(watcher)
        finally:
            watcher.cancel()
            follower.close()
            self._running = None
        for event in self._exited(step, quiet=False):
            yield event

    # -- volumes -----------------------------------------------------------------------------
    def _mounts(self) -> list[Any]:
        import docker.types

        plan = self.plan
        out = []
        for m in plan.mounts:
            out.append(docker.types.Mount(m.target, m.source, type=m.kind,
                                          read_only=m.read_only))
        return out

    async def _volume(self, name: str, purpose: str, per_build: bool) -> Any:
        import docker.errors

        def get_or_create() -> Any:
            try:
                return self.client.volumes.get(name)
            except docker.errors.NotFound:
                labels = {**(self._labels if per_build else self.plan.labels),
                          f"{LABEL}.volume": purpose}
                return self.client.volumes.create(name=name, labels=labels)

        vol = await self._call(_("creating volume {name}").format(name=name), get_or_create)
        if per_build:
            self._volumes.append(vol)
        return vol

    async def _prepare_volumes(self, mounts: list[Any]) -> AsyncIterator[BuildEvent]:
        """Fill `mounts` with the steps' mounts (volumes made, uploads done), saying what
        takes long (an upload of a checkout to a remote engine) before it starts."""
        import docker.types

        plan = self.plan
        for purpose, name in plan.cache_volumes.items():
            await self._volume(name, f"{purpose}-cache", per_build=False)
        mounts[:] = self._mounts()
        for i, m in enumerate(mounts):
            if not self._local and m["Type"] == "bind":
                # a remote engine cannot see this machine's folders: upload them into volumes
                name = f"tfwizard-upload-{self.build_id}-{i}"
                yield self._say(_("remote engine: uploading {source} into volume {volume} (for "
                                  "{target})").format(source=m["Source"], volume=name,
                                                      target=m["Target"]))
                mounts[i] = await self._upload_bind(m, name)
        if plan.source_kind != "dir":
            name = f"tfwizard-src-{self.build_id}"
            await self._volume(name, "source", per_build=True)
            mounts.append(docker.types.Mount(SRC, name, type="volume"))
        name = f"tfwizard-out-{self.build_id}"
        await self._volume(name, "output-root", per_build=True)
        mounts.append(docker.types.Mount(OUTPUT_USER_ROOT, name, type="volume"))
        # never the record folder itself: a step could rewrite what `attach` reads there.
        # Bazel writes only the BEP file, copied back through the API (_read_bep)
        name = f"tfwizard-record-{self.build_id}"
        await self._volume(name, "record", per_build=True)
        mounts.append(docker.types.Mount(RECORD, name, type="volume"))

    async def _upload_bind(self, mount: Any, name: str) -> Any:
        """A per-build volume `name` holding a copy of a host folder (for a remote engine)."""
        import docker.types

        source, target = mount["Source"], mount["Target"]
        await self._volume(name, "upload", per_build=True)
        user = (self.plan.user or "").split(":")
        owner = (int(user[0]), int(user[1])) if len(user) == 2 and all(
            p.isdigit() for p in user) else None
        await self._call(_("uploading {source} to the engine").format(source=source),
                         _upload_folder, self.client,
                         self.plan.image, Path(source), name,
                         {**self._labels, f"{LABEL}.step": "upload"}, owner)
        return docker.types.Mount(target, name, type="volume",
                                  read_only=bool(mount.get("ReadOnly")))

    async def _prepare_container(self, mounts: list[Any]) -> AsyncIterator[BuildEvent]:
        """Hand the volumes to the build uid: a root container chowns their top folders."""
        user = self.plan.user
        if not user or user.split(":")[0] == "0":
            return
        targets = [m["Target"] for m in mounts if m["Type"] == "volume"]
        if not targets:
            return
        step = Step("prepare", "prepare", ("chown", user, *targets), workdir="/",
                    needs_network=False)
        yield self._say(_("handing volumes to uid {user}: {volumes}").format(
            user=user, volumes=" ".join(targets)))
        async for event in self._run_step(step, mounts, user=ROOT, quiet=True):
            yield event
        if self._last is None or self._last.exit_code != 0:
            code = self._last.exit_code if self._last else None
            raise TfWizardError(
                _("could not prepare the volumes (chown exited {code})").format(code=code),
                _("The build image needs `chown`; see the log for details."))
        self._last = None

    # -- one container -------------------------------------------------------------------------
    def _create(self, step: Step, mounts: list[Any], user: str | None) -> Any:
        import docker.errors

        plan = self.plan
        argv, env, files = self._secret_files(step, user)
        kwargs: dict[str, Any] = {
            "command": argv,
            "environment": env,
            "working_dir": step.workdir,
            "user": user or "",
            "labels": {**self._labels, f"{LABEL}.step": step.name},
            "mounts": mounts,
            "network_mode": plan.network_mode if step.needs_network else "none",
            "name": f"tfwizard-{self.build_id}-{step.name}",
            "detach": True,
            "stdin_open": False,
            "tty": False,
            "privileged": False,
            # least privilege: a build needs no capability (it writes files it owns); the
            # root prepare container only hands the volumes' top folders to the build uid
            "cap_drop": ["ALL"],
            "cap_add": list(PREPARE_CAPS) if step.name == "prepare" else None,
            "security_opt": ["no-new-privileges"],
            # a real PID 1 forwards SIGINT to Bazel and reaps its children (unless the engine
            # has no docker-init: then the step is PID 1, see _start)
            "init": self._init,
            **gpu_options(plan.gpu_passthrough if step.name not in ("prepare",) else None),
        }
        if self.mem_limit:
            kwargs["mem_limit"] = kwargs["memswap_limit"] = self.mem_limit
        try:
            container = self.client.containers.create(plan.image, **kwargs)
        except docker.errors.DockerException as exc:
            if not (self._init and dockerutil.missing_init(exc)):
                raise
            self._init = False  # an engine too old for init: run the step as PID 1 (_start)
            kwargs["init"] = False
            container = self.client.containers.create(plan.image, **kwargs)
        if files is not None:
            try:
                if not container.put_archive("/", files):
                    raise TfWizardError(_("the engine refused the {step} step's secret "
                                          "files").format(step=step.name))
            except BaseException:
                with contextlib.suppress(Exception):
                    container.remove(force=True)
                raise
        return container

    def _is_secret(self, text: str) -> bool:
        """A ${ENV_VAR} reference, or a credential written as it is (a URL's user:password,
        a header or token value): what the secrets module would mask."""
        return any("${" + n + "}" in text for n in self._secrets) or redact(text) != text

    def _secret_files(self, step: Step, user: str | None) -> tuple[list[str], dict[str, str],
                                                                   bytes | None]:
        """(argv, environment, a tar of the step's secret files or None) for a step.

        Resolved secrets never go into the container's Cmd or Env, which `docker inspect`
        shows anyone who may use the engine (and `ps` shows on it): Bazel flags that hold
        one go into an rc file passed with the startup option --bazelrc, environment
        variables that hold one (proxy credentials) into a file the step sources through a
        fixed `sh` wrapper, which deletes it before running the step. Both are put into the
        created container (put_archive: a tmpfs mount is not reachable before the start)
        in a folder only the step's user may read, and leave with the container.
        """
        argv = list(step.argv)
        env = {**self.plan.container_env, **step.env}
        secret_env = {k: self._secret(v) for k, v in env.items() if self._is_secret(v)}
        env = {k: v for k, v in env.items() if k not in secret_env}
        rc: list[str] = []
        if argv[:1] == ["bazel"] and "build" in argv:
            at = argv.index("build")
            rc = [self._secret(a) for a in argv[at + 1:] if self._is_secret(a)]
            argv = [a for i, a in enumerate(argv) if i <= at or not self._is_secret(a)]
            if rc:
                # the rc file is read after the workspace's; announcing it would print the
                # secrets in the engine's log of the container
                rc.append("--noannounce_rc")
                argv.insert(1, f"--bazelrc={SECRETS_DIR}/bazelrc")
        if secret_env:
            argv = ["sh", "-c", SOURCE_ENV_THEN_EXEC, "tfwizard-secrets", f"{SECRETS_DIR}/env",
                    *argv]
        if not rc and not secret_env:
            return argv, env, None
        files = {}
        if rc:
            # quoted as Bazel's rc tokenizer reads it (POSIX shell words)
            files["bazelrc"] = "".join(f"build {shlex.quote(flag)}\n" for flag in rc)
        if secret_env:
            files["env"] = "".join(f"{k}={shlex.quote(v)}\n" for k, v in secret_env.items())
        return argv, env, _secrets_tar(files, _uid_gid(user))

    def _no_init_found(self) -> None:
        self._init = False
        self._say_soon(_("this Docker engine has no docker-init: the steps run as PID 1 (a "
                         "cancel may stop the build less cleanly)"))

    async def _start(self, step: Step, mounts: list[Any], user: str | None) -> tuple[Any, Any]:
        """A started step container and the socket attached to it before the start.

        An engine without docker-init refuses to start a container made with init; that
        container goes and the step is made again without one.
        """
        while True:
            had_init = self._init
            container = await self._call(
                _("creating the {step} container").format(step=step.name), self._create, step,
                mounts, user)
            if had_init and not self._init:
                self._no_init_found()
            self._containers.append(container)
            sock = await self._call(_("attaching to the container"),
                                    self.client.api.attach_socket, container.id,
                                    params={"stdout": 1, "stderr": 1, "stream": 1})
            try:
                await self._call(_("starting the {step} container").format(step=step.name),
                                 container.start)
                return container, sock
            except TfWizardError as exc:
                dockerutil.close_quietly(sock)
                if not (self._init and dockerutil.missing_init(exc)):
                    raise
                self._no_init_found()
                self._containers.remove(container)
                await self._call(_("removing the {step} container").format(step=step.name),
                                 container.remove, force=True)

    async def _run_step(self, step: Step, mounts: list[Any], *, user: str | None = None,
                        quiet: bool = False) -> AsyncIterator[BuildEvent]:
        container, sock = await self._start(step, mounts,
                                            user if user is not None else self.plan.user)
        for event in self._take_said():
            yield event
        raw = dockerutil.raw_socket(sock)
        splitters = {1: LineSplitter(), 2: LineSplitter()}
        self._running = container
        watcher = asyncio.ensure_future(self._watch_cancel(container))
        try:
            feed: ThreadFeed[list[tuple[int, bytes]]] = ThreadFeed(
                lambda: dockerutil.read_frames(raw), stop=lambda: dockerutil.close_quietly(raw))
            async for event in self._drain(feed, splitters, step, container, quiet=quiet):
                yield event
            await self._stopped(watcher)
        finally:
            watcher.cancel()
            dockerutil.close_quietly(raw)
            dockerutil.close_quietly(sock)
            self._running = None
        for event in self._exited(step, quiet=quiet):
            yield event

    async def _drain(self, feed: ThreadFeed[list[tuple[int, bytes]]],
                     splitters: dict[int, LineSplitter], step: Step, container: Any, *,
                     quiet: bool) -> AsyncIterator[BuildEvent]:
        """A step container's output as events until it ends; then its exit goes into
        self._last (and the build's start time and the OOM mark) for the caller."""
        async for batch in feed:
            for event in self._lines(batch, splitters, quiet):
                yield event
            for event in self._take_said():  # e.g. "cancelling: sent SIGINT ..."
                yield event
        for n, splitter in splitters.items():
            lines = splitter.flush()
            if lines:
                for event in self._emit(n, lines, quiet):
                    yield event
        status = await self._call(_("waiting for the {step} container").format(
            step=step.name), container.wait)
        code = status.get("StatusCode")
        started = await self._call(_("inspecting the container"), self._started_at, container)
        if step.name == "build":
            self._build_started_at = started
        self._last = _StepOutcome(code, container, started)
        self._oom = dockerutil.oom_killed(container)  # attrs fresh from _started_at's reload

    def _exited(self, step: Step, *, quiet: bool) -> list[BuildEvent]:
        """The "step ... exited" line for the step _drain() just finished (after what was
        said while it stopped)."""
        said = self._take_said()
        code = self._last.exit_code if self._last is not None else None
        if quiet and code == 0:
            return said
        return [*said, self._say(_("step {step} exited with {code}").format(step=step.name,
                                                                            code=code))]

    def _say_soon(self, *lines: str) -> None:
        """Say lines from where no event can be yielded (the cancel watcher, an engine
        call): they go to the record now and to the front end with the next events."""
        self._said.append(self._say(*lines))

    def _take_said(self) -> list[BuildEvent]:
        said, self._said = self._said, []
        return list(said)

    async def _stopped(self, watcher: asyncio.Future[None]) -> None:
        """After a step ended: when a cancel is stopping it, let the watcher finish saying
        how (SIGINT, then SIGKILL) before the step's end is reported."""
        if self.cancelled and not watcher.done():
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(watcher), self.cancel_grace_s + 5)

    def _secret(self, text: str) -> str:
        """${ENV_VAR} references resolved for the container only (never logged/recorded)."""
        return substitute(text, {name: self._secret_env[name] for name in self._secrets})

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
        events: list[BuildEvent] = [self._log(channel, lines)]
        if quiet:
            return events
        progress: Progress | None = None
        before = self.parser.phase
        feed = self.parser.feed
        for line in lines:
            p = feed(line)
            if p is not None:
                progress = p
        if self.parser.phase != before:
            events.append(PhaseChanged(self.parser.phase, self._last_step))
        if progress is not None:
            events.append(progress)
        return events

    @staticmethod
    def _started_at(container: Any) -> float | None:
        container.reload()
        text = container.attrs.get("State", {}).get("StartedAt", "")
        return _parse_engine_time(text)

    async def _watch_cancel(self, container: Any) -> None:
        assert self._cancel_async is not None
        await self._cancel_async.wait()
        await self._stop_container(container)

    async def _stop_container(self, container: Any) -> None:
        """SIGINT (Bazel cancels cleanly), then SIGKILL after the grace period."""
        with contextlib.suppress(Exception):
            await self._call(_("interrupting the build"), container.kill, signal="SIGINT")
        self._say_soon(_("cancelling: sent SIGINT to the build container"))
        try:
            await asyncio.wait_for(self._call(_("waiting for the container"), container.wait),
                                   self.cancel_grace_s)
        except (asyncio.TimeoutError, TfWizardError):
            with contextlib.suppress(Exception):
                await self._call(_("killing the build container"), container.kill)
            self._say_soon(_("cancelling: killed the build container"))

    # -- results -------------------------------------------------------------------------------
    async def _read_bep(self) -> BepSummary | None:
        assert self.record is not None
        if self._last is not None:
            with contextlib.suppress(TfWizardError):
                data = await self._call(_("copying the BEP file"), _read_archive_file,
                                        self._last.container, f"{RECORD}/bep.json")
                if data is not None:
                    atomic_write(self.record.bep_path, data)
        path = self.record.bep_path
        if not path.is_file():
            return None
        if self.record.secrets or self._secrets:
            # BEP repeats the command line (with resolved headers): mask it on disk
            text = path.read_text(encoding="utf-8", errors="replace")
            masked = "\n".join(redact(line, self.record.secrets) for line in text.split("\n"))
            if masked != text:
                atomic_write(path, masked)
        with path.open(encoding="utf-8", errors="replace") as fh:
            return parse_bep(fh)

    async def _copy_wheels(self) -> list[Path]:
        """Copy fresh *.whl files from the plan's wheel_dir into out_dir (atomically)."""
        assert self._last is not None
        container = self._last.container
        since = self._build_started_at or self._last.started_at
        wheel_dir = self.plan.wheel_dir
        assert self.record is not None
        out_dir = self.out_dir if self.out_dir is not None else self.record.path
        owner = _output_owner(self.plan.user)
        try:
            if not out_dir.is_dir():
                out_dir.mkdir(parents=True, exist_ok=True)
                if owner is not None:
                    os.chown(out_dir, *owner)
        except OSError as exc:
            raise dockerutil.output_error(exc, out_dir / "x.whl") from exc
        return await self._call(_("copying the wheel out of {path}").format(path=wheel_dir),
                                _extract_wheels, container, wheel_dir, out_dir, since,
                                cancelled=self._cancelled.is_set, owner=owner)

    def _diagnose(self, exit_code: int | None, *,
                  warnings_only: bool = False) -> list[DiagnosisEvent]:
        assert self.record is not None
        self.record.close()
        if not self.record.log_path.is_file():
            return []
        # streamed from log.txt in big chunks: a multi-GB log in constant memory
        with self.record.log_path.open("rb") as fh:
            found = diagnose_stream(fh, exit_code=None if warnings_only else exit_code)
        if warnings_only:
            found = [d for d in found if d.severity == "warning"]
        if not found:
            return []
        # fixes as values for this build: half of the --jobs this plan ran, the recipe's
        # flags plus one (a "halve" in the recipe broke it)
        recipe = None
        with contextlib.suppress(TfWizardError):
            recipe = (parse_recipe(self.recipe_text, "recipe") if self.recipe_text is not None
                      else record_context(self.record.path)[0])
        found = resolve_diagnoses(found, recipe=recipe, plan=self.plan)
        events = [DiagnosisEvent(d.id, d.title, d.cause, d.next_step, tuple(d.lines),
                               dict(d.recipe_fix), d.fix_problem, d.severity,
                               tuple(d.excerpt)) for d in found]
        for d in found:
            self.record.append(TFWIZARD, diagnosis_block(d))
        return events

    # -- cleanup -------------------------------------------------------------------------------
    async def _cleanup(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._cleanup_sync)

    def _cleanup_sync(self) -> None:
        """Remove every container and per-build volume this build made (never raises)."""
        running = self._running
        if running is not None:
            with contextlib.suppress(Exception):
                running.kill(signal="SIGINT")
            with contextlib.suppress(Exception):
                running.wait(timeout=self.cancel_grace_s)
        for container in self._containers:
            if self.keep_containers and not self.cancelled:
                continue
            with contextlib.suppress(Exception):
                container.remove(force=True)
        self._containers.clear()
        for vol in self._volumes:
            with contextlib.suppress(Exception):
                vol.remove(force=True)
        self._volumes.clear()


def _parse_engine_time(text: str) -> float | None:
    """Epoch seconds of the engine's RFC 3339 time with nanoseconds."""
    if not text or text.startswith("0001-"):
        return None
    main, _dot, frac = text.rstrip("Z").partition(".")
    try:
        stamp = datetime.fromisoformat(main + "+00:00").timestamp()
    except ValueError:
        return None
    digits = "".join(ch for ch in frac if ch.isdigit())[:6]
    return stamp + (int(digits) / 10 ** len(digits) if digits else 0.0)


def _archive(container: Any, path: str) -> tarfile.TarFile:
    stream, _stat = container.get_archive(path)
    buf = io.BytesIO()
    for chunk in stream:
        buf.write(chunk)
    buf.seek(0)
    return tarfile.open(fileobj=buf, mode="r|*")


def _upload_folder(client: Any, image: str, folder: Path, volume: str,
                   labels: dict[str, str], owner: tuple[int, int] | None) -> None:
    """Copy a host folder into a volume through the API (put_archive into a helper
    container that is created, never started, and removed); no bind mount involved.
    Files are owned by `owner` (the build's uid:gid) when given, as a bind mount of the
    user's own checkout would be."""
    import tempfile

    import docker.types

    if not folder.is_dir():
        raise TfWizardError(_("{path}: no such folder to upload to the Docker engine").format(
            path=folder))

    def own(info: tarfile.TarInfo) -> tarfile.TarInfo:
        if owner is not None:
            info.uid, info.gid, info.uname, info.gname = owner[0], owner[1], "", ""
        return info

    helper = client.containers.create(
        image, command=["true"], labels=labels, network_mode="none", name=volume,
        mounts=[docker.types.Mount("/upload", volume, type="volume")])
    try:
        # spooled to disk, streamed to the engine: a TensorFlow checkout is gigabytes
        with tempfile.TemporaryFile() as fh:
            with tarfile.open(fileobj=fh, mode="w") as tar:
                for child in sorted(folder.iterdir()):
                    tar.add(child, arcname=child.name, filter=own)
            fh.seek(0)
            if not helper.put_archive("/upload", fh):
                raise TfWizardError(_("the engine refused the upload of {path}").format(
                    path=folder))
    finally:
        with contextlib.suppress(Exception):
            helper.remove(force=True)


def _read_archive_file(container: Any, path: str) -> bytes | None:
    import docker.errors

    try:
        tar = _archive(container, path)
    except docker.errors.NotFound:
        return None
    for member in tar:
        if member.isfile():
            fh = tar.extractfile(member)
            return fh.read() if fh else None
    return None


#: what a wheel file name from the container may look like (PEP 427 characters only)
_WHEEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+\-]{0,250}\.whl")
_COPY_CHUNK = 1 << 20


def wheel_member_name(member: tarfile.TarInfo) -> str | None:
    """The file name to give a tar member of the wheel folder, or None to skip it.

    Only regular files directly in the folder, named like a wheel: no links, devices or
    sub-folders, nothing with "/", "..", a leading "." or a control character, so no name
    from the container can reach outside the output folder.
    """
    if not member.isfile() or member.name.endswith("/"):
        return None
    parts = [p for p in member.name.split("/") if p not in ("", ".")]
    if len(parts) != 1 or not _WHEEL_NAME.fullmatch(parts[0]):
        return None
    return parts[0]


def _output_owner(user: str | None) -> tuple[int, int] | None:
    """(uid, gid) to give outputs when tfwizard runs as root for another build uid."""
    if not user or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    uid, _colon, gid = user.partition(":")
    if not (uid.isdigit() and gid.isdigit()) or (uid, gid) == ("0", "0"):
        return None
    return int(uid), int(gid)


class _ChunkReader(io.RawIOBase):
    """A read-only file over an iterator of byte chunks (tar streams without buffering)."""

    def __init__(self, chunks: Any) -> None:
        self._chunks = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


def _extract_wheels(container: Any, wheel_dir: str, out_dir: Path, since: float | None, *,
                    cancelled: Callable[[], bool] = lambda: False,
                    owner: tuple[int, int] | None = None) -> list[Path]:
    """Wheels in wheel_dir written after `since` (engine clock), copied into out_dir.

    Streamed (a GPU wheel is ~600 MB) to a temporary name, then renamed: a cancel, a full
    disk or a lost engine leave no partial wheel behind.
    """
    import docker.errors

    try:
        stream, _stat = container.get_archive(wheel_dir.rstrip("/") + "/.")
    except docker.errors.NotFound:
        return []
    tar = tarfile.open(fileobj=io.BufferedReader(_ChunkReader(stream), _COPY_CHUNK), mode="r|*")
    found: list[tuple[float, Path]] = []
    for member in tar:
        if cancelled():
            break
        name = wheel_member_name(member)
        # a wheel older than this build's Bazel step is stale: never hand it out
        if name is None or (since is not None and member.mtime + 2 < since):
            continue
        fh = tar.extractfile(member)
        if fh is None:
            continue
        target = out_dir / name
        tmp = out_dir / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            with tmp.open("xb") as out:
                while chunk := fh.read(_COPY_CHUNK):
                    if cancelled():
                        break
                    out.write(chunk)
            if cancelled():
                tmp.unlink(missing_ok=True)
                break
            if owner is not None:
                os.chown(tmp, *owner)
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise dockerutil.output_error(exc, target) from exc
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        found.append((member.mtime, target))
    if cancelled():
        for _mtime, path in found:  # all or nothing: a cancelled build hands out no wheel
            path.unlink(missing_ok=True)
        raise BuildCancelled(_("cancelled by the user while copying the wheel; nothing was "
                               "left in {path}").format(path=out_dir))
    return [p for _mtime, p in sorted(found)]


class _SkippingSplitter(LineSplitter):
    """A LineSplitter that drops its first `skip` lines (those the record already holds)."""

    def __init__(self, skip: int) -> None:
        super().__init__()
        self.skip = skip

    def _drop(self, lines: list[str]) -> list[str]:
        if self.skip and lines:
            n = min(self.skip, len(lines))
            self.skip -= n
            return lines[n:]
        return lines

    def feed(self, chunk: bytes) -> list[str]:
        return self._drop(super().feed(chunk))

    def flush(self) -> list[str]:
        return self._drop(super().flush())


@dataclass
class FoundBuild:
    """A build's containers on the engine, found by their `io.tfwizard.build` label."""

    build_id: str
    containers: list[Any]  # oldest first

    @property
    def current(self) -> Any:
        """The step container created last (the one running, if any is)."""
        steps = [c for c in self.containers if c.labels.get(f"{LABEL}.step") != "upload"]
        return (steps or self.containers)[-1]

    @property
    def running(self) -> bool:
        return any(c.status in ("running", "created", "restarting") for c in self.containers)

    def record_dir(self, data_root: Path | None = None,
                   env: Mapping[str, str] | None = None) -> Path | None:
        """The build's record folder: by id in the data folder, else where its containers'
        labels say the build put it (another TFWIZARD_DATA_DIR)."""
        path = record_path(self.build_id, root=data_root, env=env)
        if path.is_dir():
            return path
        for c in reversed(self.containers):
            src = Path(c.labels.get(RECORD_LABEL) or "")
            if src.name == self.build_id and src.is_dir():
                return src
        return None

    def label(self, name: str) -> str | None:
        """A label all the build's containers carry with one value, else None."""
        values = {c.labels.get(name) for c in self.containers}
        return values.pop() if len(values) == 1 else None


def find_builds(client: Any, build_id: str | None = None) -> list[FoundBuild]:
    """Builds with containers on the engine (all, or the one with `build_id`), newest first."""
    flt = f"{LABEL}.build" + (f"={build_id}" if build_id else "")
    with dockerutil.docker_errors(_("listing tfwizard's containers")):
        containers = client.containers.list(all=True, filters={"label": flt})
    by_id: dict[str, list[Any]] = {}
    for c in sorted(containers, key=lambda c: c.attrs.get("Created", "")):
        by_id.setdefault(c.labels.get(f"{LABEL}.build", ""), []).append(c)
    found = [FoundBuild(i, cs) for i, cs in by_id.items() if i]
    return sorted(found, key=lambda b: b.build_id, reverse=True)


def plan_from_dict(data: Mapping[str, Any]) -> BuildPlan:
    """The BuildPlan a record's plan.json holds (the inverse of BuildPlan.to_dict)."""
    import dataclasses

    def known(cls: Any, values: Mapping[str, Any]) -> dict[str, Any]:
        names = {f.name for f in dataclasses.fields(cls)}
        return {k: v for k, v in values.items() if k in names}

    kw = known(BuildPlan, data)
    kw["steps"] = [Step(**{**known(Step, s), "argv": tuple(s["argv"])}) for s in data["steps"]]
    kw["bazel_flags"] = [Flag(**known(Flag, f)) for f in data["bazel_flags"]]
    kw["mounts"] = [Mount(**known(Mount, m)) for m in data["mounts"]]
    return BuildPlan(**kw)


async def run_build(plan: BuildPlan, *, out_dir: Path | None = None, **kwargs: Any
                    ) -> AsyncIterator[BuildEvent]:
    """Shorthand: the events of `BuildRunner(plan, out_dir=out_dir, **kwargs)`."""
    async for event in BuildRunner(plan, out_dir=out_dir, **kwargs).events():
        yield event


def build_blocking(plan: BuildPlan, *, out_dir: Path | None = None,
                   on_event: Callable[[BuildEvent], None] | None = None,
                   **kwargs: Any) -> BuildResult:
    """Run a build to the end without an event loop of one's own; returns the result."""

    async def main() -> BuildResult:
        runner = BuildRunner(plan, out_dir=out_dir, **kwargs)
        async for event in runner.events():
            if on_event is not None:
                on_event(event)
        assert runner.result is not None
        return runner.result

    return asyncio.run(main())
