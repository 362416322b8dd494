"""The containerized build: a BuildPlan executed step by step in Docker, as events.

    runner = BuildRunner(plan, out_dir=Path("wheels"))
    async for event in runner.events():
        ...                       # PhaseChanged, LogLines, Progress, FindingEvent, Artifact
    runner.result                 # the BuildResult also carried by the Finished event

Each plan step runs in its own container (docker SDK only: argv lists, no shell), as the
plan's uid:gid, never privileged, with no Docker socket inside, labelled with the plan's
labels and the build id. What the steps share lives in volumes: the source (bind-mounted
checkout, or a per-build volume the fetch step clones into), Bazel's output root (a
per-build volume, so `bazel-bin` never holds a wheel from an earlier build and the package
step of older releases sees the build's outputs), the cache volumes (kept across builds)
and /record (the record folder for a local engine; a per-build volume copied back for a
remote one). The wheel leaves with `get_archive`, so a remote engine works too.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import tarfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from . import dockerutil
from .diagnose import diagnose
from .errors import BuildCancelled, TfWizardError
from .events import (
    STDERR,
    STDOUT,
    TFWIZARD,
    Artifact,
    BuildEvent,
    BuildResult,
    FindingEvent,
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
    Step,
    resolve_secrets,
    secret_references,
)
from .progress import BepSummary, ProgressParser, parse_bep
from .record import BuildRecord, atomic_write, new_build_id
from .secrets import redact

T = TypeVar("T")

#: seconds between SIGINT and SIGKILL when a build is cancelled (the whole stop takes < 10 s)
CANCEL_GRACE_S = 5.0
#: the image's user for the prepare container that hands volumes to the build uid
ROOT = "0:0"


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
        self._labels = {**self.plan.labels, f"{LABEL}.build": self.build_id}
        self._local = True
        self._record_bind = True
        self._secrets: list[str] = []
        self._secret_env: dict[str, str] = {}
        self._last: _StepOutcome | None = None
        self._last_step = ""
        self._bep: BepSummary | None = None
        self._build_started_at: float | None = None

    # -- control -----------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the build: SIGINT to the running step, SIGKILL after the grace period."""
        self._cancelled.set()
        loop, ev = self._loop, self._cancel_async
        if loop is not None and ev is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(ev.set)

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # -- helpers -------------------------------------------------------------------------------
    async def _call(self, doing: str, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        loop = asyncio.get_running_loop()

        def run() -> T:
            with dockerutil.docker_errors(doing):
                return fn(*args, **kw)

        return await loop.run_in_executor(None, run)

    def _log(self, channel: str, lines: list[str]) -> LogLines:
        assert self.record is not None
        if self.record.secrets:  # front ends see what the record keeps: masked
            lines = [redact(line, self.record.secrets) for line in lines]
        first = self.record.append(channel, lines)
        return LogLines(channel, tuple(lines), first)

    def _say(self, *lines: str) -> LogLines:
        return self._log(TFWIZARD, list(lines))

    # -- the build -----------------------------------------------------------------------------
    async def events(self) -> AsyncIterator[BuildEvent]:
        """The build as events; the last one is always Finished (unless the consumer leaves)."""
        self._loop = asyncio.get_running_loop()
        self._cancel_async = asyncio.Event()
        if self._cancelled.is_set():
            self._cancel_async.set()
        self._started = time.monotonic()
        self.record = BuildRecord.create(self.build_id, root=self.data_root, env=self.env)
        if self.recipe_text is not None:
            self.record.write_recipe(self.recipe_text)
        self.record.write_plan(self.plan.to_json())
        yield Artifact("record", str(self.record.path))
        status, message, exit_code, bep, wheel = "error", "", None, None, None
        clean = False
        try:
            yield self._say(f"tfwizard build {self.build_id}: TensorFlow {self.plan.release} "
                            f"({self.plan.backend}) in {self.plan.image}",
                            f"record: {self.record.path}")
            try:
                async for event in self._run_steps():
                    yield event
                outcome = self._last
                exit_code = outcome.exit_code if outcome else None
                bep = self._bep
                if self.cancelled:
                    status, message = "cancelled", "cancelled by the user"
                elif exit_code != 0:
                    status = "failed"
                    message = f"step {self._last_step} exited with {exit_code}"
                else:
                    wheels = await self._copy_wheels()
                    if wheels:
                        wheel = str(wheels[-1])
                        for w in wheels:
                            yield Artifact("wheel", str(w))
                        status, message = "succeeded", f"wheel: {wheel}"
                    else:
                        status = "failed"
                        message = f"the build produced no wheel in {self.plan.wheel_dir}"
            except BuildCancelled as exc:
                status, message = "cancelled", exc.message
            except TfWizardError as exc:
                status, message = ("cancelled", "cancelled by the user") if self.cancelled \
                    else ("error", str(exc))
            yield self._say(f"build {status}: {message}")
            findings: list[FindingEvent] = []
            if status in ("failed", "error"):
                findings = self._diagnose(exit_code)
                for f in findings:
                    yield f
            await self._cleanup()
            clean = True
            self.result = BuildResult(
                build_id=self.build_id, status=status, record_dir=str(self.record.path),
                wheel=wheel, exit_code=exit_code,
                bazel_exit=bep.exit_name if bep else None, message=message,
                elapsed_s=round(time.monotonic() - self._started, 2),
                actions=self.parser.stats.total_actions or self.parser.total,
                cache_hits=self.parser.stats.cache_hits,
                findings=tuple(f.id for f in findings))
            self.record.write_result({**self.result.to_dict(),
                                      "stats": self.parser.stats.__dict__})
            yield Finished(self.result)
        finally:
            if not clean:
                # the consumer left (Ctrl-C, task cancelled): stop and remove synchronously,
                # since this loop may not run another callback
                self._cancelled.set()
                self._cleanup_sync()
                if self.result is None:
                    with contextlib.suppress(Exception):
                        self.record.append(TFWIZARD, ["build cancelled: the front end stopped"])
                        self.record.write_result({
                            "build_id": self.build_id, "status": "cancelled",
                            "record_dir": str(self.record.path),
                            "message": "the front end stopped before the build ended",
                            "elapsed_s": round(time.monotonic() - self._started, 2)})
            self.record.close()

    async def _run_steps(self) -> AsyncIterator[BuildEvent]:
        plan = self.plan
        # fail before anything starts when a ${ENV_VAR} the recipe refers to is unset
        self._secret_env = dict(os.environ if self.env is None else self.env)
        resolve_secrets(plan, self._secret_env)
        self._secrets = secret_references(plan)
        if self.record is not None:
            # resolved values reach only the container; the record masks them
            self.record.secrets = tuple(self._secret_env[n] for n in self._secrets)
        if self.client is None:
            self.client = await self._call("connecting to Docker", dockerutil.connect, self.env)
        self._local = dockerutil.is_local_engine(self.client)
        # the container writes /record as the plan's uid: bind the record folder only when
        # that uid is ours (else a volume, copied back like for a remote engine)
        uid = (plan.user or "").split(":")[0]
        self._record_bind = self._local and (not uid or not hasattr(os, "getuid")
                                             or uid == str(os.getuid()))
        yield PhaseChanged("prepare")
        yield self._say(f"checking image {plan.image}")
        await self._call(f"finding image {plan.image}", dockerutil.ensure_image, self.client,
                         plan.image, pull=self.pull)
        mounts = await self._prepare_volumes()
        async for event in self._prepare_container(mounts):
            yield event
        for step in plan.steps:
            if self.cancelled:
                raise BuildCancelled("cancelled by the user")
            self._last_step = step.name
            self.parser.enter(step.phase)
            yield PhaseChanged(self.parser.phase, step.name)
            yield self._say(f"step {step.name}: " + " ".join(step.argv))
            async for event in self._run_step(step, mounts):
                yield event
            if step.name == "build":
                self._bep = await self._read_bep()
                if self._bep is not None and self._bep.exit_name:
                    yield self._say(f"Bazel exit (BEP): {self._bep.exit_name}")
            if self._last is None or self._last.exit_code != 0:
                return
        if self.parser.enter("package"):
            yield PhaseChanged("package", "copy")

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

        vol = await self._call(f"creating volume {name}", get_or_create)
        if per_build:
            self._volumes.append(vol)
        return vol

    async def _prepare_volumes(self) -> list[Any]:
        import docker.types

        plan = self.plan
        for purpose, name in plan.cache_volumes.items():
            await self._volume(name, f"{purpose}-cache", per_build=False)
        mounts = self._mounts()
        if plan.source_kind != "dir":
            name = f"tfwizard-src-{self.build_id}"
            await self._volume(name, "source", per_build=True)
            mounts.append(docker.types.Mount(SRC, name, type="volume"))
        name = f"tfwizard-out-{self.build_id}"
        await self._volume(name, "output-root", per_build=True)
        mounts.append(docker.types.Mount(OUTPUT_USER_ROOT, name, type="volume"))
        if self._record_bind:
            assert self.record is not None
            mounts.append(docker.types.Mount(RECORD, str(self.record.path), type="bind"))
        else:
            name = f"tfwizard-record-{self.build_id}"
            await self._volume(name, "record", per_build=True)
            mounts.append(docker.types.Mount(RECORD, name, type="volume"))
        return mounts

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
        yield self._say(f"handing volumes to uid {user}: " + " ".join(targets))
        async for event in self._run_step(step, mounts, user=ROOT, quiet=True):
            yield event
        if self._last is None or self._last.exit_code != 0:
            code = self._last.exit_code if self._last else None
            raise TfWizardError(f"could not prepare the volumes (chown exited {code})",
                                "The build image needs `chown`; see the log for details.")
        self._last = None

    # -- one container -------------------------------------------------------------------------
    def _create(self, step: Step, mounts: list[Any], user: str | None) -> Any:
        import docker.errors

        plan = self.plan
        env = {k: self._secret(v) for k, v in {**plan.container_env, **step.env}.items()}
        kwargs: dict[str, Any] = {
            "command": [self._secret(a) for a in step.argv],
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
            "init": True,  # a real PID 1 forwards SIGINT to Bazel and reaps its children
            **gpu_options(plan.gpu_passthrough if step.name not in ("prepare",) else None),
        }
        try:
            return self.client.containers.create(plan.image, **kwargs)
        except docker.errors.APIError as exc:
            if "init" not in str(exc).lower():
                raise
            kwargs["init"] = False  # an engine without docker-init: run the step as PID 1
            return self.client.containers.create(plan.image, **kwargs)

    async def _run_step(self, step: Step, mounts: list[Any], *, user: str | None = None,
                        quiet: bool = False) -> AsyncIterator[BuildEvent]:
        container = await self._call(f"creating the {step.name} container", self._create,
                                     step, mounts, user if user is not None else self.plan.user)
        self._containers.append(container)
        sock = await self._call("attaching to the container", self.client.api.attach_socket,
                                container.id, params={"stdout": 1, "stderr": 1, "stream": 1})
        raw = dockerutil.raw_socket(sock)
        splitters = {1: LineSplitter(), 2: LineSplitter()}
        self._running = container
        watcher = asyncio.ensure_future(self._watch_cancel(container))
        try:
            await self._call(f"starting the {step.name} container", container.start)
            feed: ThreadFeed[list[tuple[int, bytes]]] = ThreadFeed(
                lambda: dockerutil.read_frames(raw), stop=lambda: dockerutil.close_quietly(raw))
            async for batch in feed:
                for event in self._lines(batch, splitters, quiet):
                    yield event
            tail = [(n, s.flush()) for n, s in splitters.items()]
            for n, lines in tail:
                if lines:
                    for event in self._emit(n, lines, quiet):
                        yield event
            status = await self._call(f"waiting for the {step.name} container", container.wait)
            code = status.get("StatusCode")
            started = await self._call("inspecting the container", self._started_at, container)
        finally:
            watcher.cancel()
            dockerutil.close_quietly(raw)
            dockerutil.close_quietly(sock)
            self._running = None
        if step.name == "build":
            self._build_started_at = started
        self._last = _StepOutcome(code, container, started)
        if not quiet or code != 0:
            yield self._say(f"step {step.name} exited with {code}")

    def _secret(self, text: str) -> str:
        """${ENV_VAR} references resolved for the container only (never logged/recorded)."""
        for name in self._secrets:
            text = text.replace("${" + name + "}", self._secret_env[name])
        return text

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
            await self._call("interrupting the build", container.kill, signal="SIGINT")
        self._say("cancelling: sent SIGINT to the build container")
        try:
            await asyncio.wait_for(self._call("waiting for the container", container.wait),
                                   self.cancel_grace_s)
        except (asyncio.TimeoutError, TfWizardError):
            with contextlib.suppress(Exception):
                await self._call("killing the build container", container.kill)
            self._say("cancelling: killed the build container")

    # -- results -------------------------------------------------------------------------------
    async def _read_bep(self) -> BepSummary | None:
        assert self.record is not None
        if not self._record_bind and self._last is not None:
            with contextlib.suppress(TfWizardError):
                data = await self._call("copying the BEP file", _read_archive_file,
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
        out_dir.mkdir(parents=True, exist_ok=True)
        return await self._call(f"copying the wheel out of {wheel_dir}", _extract_wheels,
                                container, wheel_dir, out_dir, since)

    def _diagnose(self, exit_code: int | None) -> list[FindingEvent]:
        assert self.record is not None
        self.record.close()
        if not self.record.log_path.is_file():
            return []
        texts = [text for _, text in self.record.replay()]
        found = diagnose(texts, exit_code=exit_code)
        events = [FindingEvent(d.id, d.title, d.cause, d.next_step, tuple(d.lines),
                               dict(d.recipe_fix)) for d in found]
        for d in found:
            self.record.append(TFWIZARD, [f"diagnosis {d.id}: {d.title} (log lines "
                                          f"{', '.join(map(str, d.lines[:5]))})",
                                          f"  cause: {d.cause}", f"  next: {d.next_step}"])
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
    main, _, frac = text.rstrip("Z").partition(".")
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


def _extract_wheels(container: Any, wheel_dir: str, out_dir: Path,
                    since: float | None) -> list[Path]:
    """Wheels in wheel_dir written after `since` (engine clock), copied into out_dir."""
    import docker.errors

    try:
        tar = _archive(container, wheel_dir.rstrip("/") + "/.")
    except docker.errors.NotFound:
        return []
    found: list[tuple[float, Path]] = []
    for member in tar:
        name = os.path.basename(member.name)
        if not member.isfile() or not name.endswith(".whl") or name.startswith("."):
            continue
        # a wheel older than this build's Bazel step is stale: never hand it out
        if since is not None and member.mtime + 2 < since:
            continue
        fh = tar.extractfile(member)
        if fh is None:
            continue
        target = out_dir / name
        atomic_write(target, fh.read())
        found.append((member.mtime, target))
    return [p for _, p in sorted(found)]


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
