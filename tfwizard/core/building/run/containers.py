"""One step container: how it is made (least privilege, secrets in files), started, stopped.

Every container tfwizard makes runs as the plan's uid:gid (the prepare container as
root), never privileged, with every capability dropped (the prepare container gets back
only `PREPARE_CAPS`, to chown the volumes' top folders), no-new-privileges, no Docker
socket inside, with network only for steps that declare they need it, and a GPU only
where the plan asks for one and the step is not the prepare container. What a step is
for comes from its declared role (plan.Step.role), never from its name.

`Engine` runs docker SDK calls off the event loop, turning their errors into tfwizard
errors with advice (dockerutil). `StepSecrets` keeps resolved secrets out of a container's
Cmd and Env, which `docker inspect` shows anyone who may use the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import shlex
import tarfile
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ... import consent, secrets
from ...docker import client as dockerutil
from ...errors import BuildCancelled, TfWizardError, UsageError
from ...i18n import _, ngettext
from ...paths import LABEL
from ...secrets import redact, substitute
from ..plan.plan import BuildPlan, Step
from .artifacts import engine_time

T = TypeVar("T")

#: the image's user for the prepare container that hands volumes to the build uid
ROOT = "0:0"
#: the only capabilities any tfwizard container gets back after dropping ALL: the prepare
#: container's, to chown the volumes' top folders (build steps get none)
PREPARE_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER")
#: where a step's secret files live in its container (see StepSecrets.files_for)
SECRETS_DIR = "/.tfwizard-secrets"
#: the fixed wrapper of a step with secret environment variables: $1 is the file to source
#: (NAME='value' lines, shell-quoted); it is deleted, then the step runs with them exported
SOURCE_ENV_THEN_EXEC = 'set -a && . "$1" && set +a && rm -f "$1" && shift && exec "$@"'


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


def create_options(plan: BuildPlan, step: Step, *, name: str, labels: Mapping[str, str],
                   mounts: list[Any], user: str | None, argv: list[str],
                   environment: Mapping[str, str], init: bool,
                   mem_limit: str | None = None) -> dict[str, Any]:
    """The keyword arguments of `containers.create` for one step (a pure function)."""
    prepare = step.role == "prepare"
    options: dict[str, Any] = {
        "command": argv,
        "environment": dict(environment),
        "working_dir": step.workdir,
        "user": user or "",
        "labels": {**labels, f"{LABEL}.step": step.name},
        "mounts": mounts,
        "network_mode": plan.network_mode if step.needs_network else "none",
        "name": name,
        "detach": True,
        "stdin_open": False,
        "tty": False,
        "privileged": False,
        # least privilege: a build needs no capability (it writes files it owns); the
        # root prepare container only hands the volumes' top folders to the build uid
        "cap_drop": ["ALL"],
        "cap_add": list(PREPARE_CAPS) if prepare else None,
        "security_opt": ["no-new-privileges"],
        # a real PID 1 forwards SIGINT to Bazel and reaps its children (unless the engine
        # has no docker-init: then the step is PID 1)
        "init": init,
        **gpu_options(None if prepare else plan.gpu_passthrough),
    }
    if mem_limit:
        options["mem_limit"] = options["memswap_limit"] = mem_limit
    return options


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


class StepSecrets:
    """The ${ENV_VAR} secrets a plan refers to, resolved for its containers only."""

    def __init__(self, plan: BuildPlan, env: Mapping[str, str]) -> None:
        """The plan's references and their values in `env` (`check` says what is wrong)."""
        self.plan = plan
        self.names = secret_references(plan)
        self.values = {n: env[n] for n in self.names if n in env}
        #: where consent is read (consent.toml's folder, TFWIZARD_ALLOW_SECRETS)
        self._env = env

    def check(self) -> None:
        """UsageError when a reference is unset, holds more than one line (it goes into
        a file of lines: an rc file, an env file), or goes somewhere the user has not
        allowed (consent.SecretConsentRequired): before any container starts."""
        resolve_secrets(self.plan, self.values)  # UsageError naming the unset ones
        for name, value in self.values.items():
            if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
                raise UsageError(_("${{{name}}} holds a line break or a control character; a "
                                   "secret must be one line").format(name=name))
        if self.names:
            consent.require(consent.secret_uses(self.plan.flag_list, self.plan.container_env,
                                                self.values), self._env)

    def mask_values(self) -> list[str]:
        """What a log line or the BEP must not show: the resolved references, credentials
        written in the recipe, each also as the BEP's JSON writes it."""
        return secrets.with_json_forms([
            *(v for v in self.values.values() if len(v) >= 4),
            *secrets.credentials_in([*self.plan.flag_list, *self.plan.container_env.values()])])

    def resolve(self, text: str) -> str:
        """`text` with the references resolved (for the container only: never logged)."""
        return substitute(text, self.values)

    def is_secret(self, text: str) -> bool:
        """A ${ENV_VAR} reference, or a credential written as it is (a URL's user:password,
        a header or token value): what the secrets module would mask."""
        return any("${" + n + "}" in text for n in self.names) or redact(text) != text

    def files_for(self, step: Step, user: str | None) -> tuple[list[str], dict[str, str],
                                                               bytes | None]:
        """(argv, environment, a tar of the step's secret files or None) for a step.

        Resolved secrets never go into the container's Cmd or Env: Bazel flags that hold
        one go into an rc file passed with the startup option --bazelrc, environment
        variables that hold one (proxy credentials) into a file the step sources through a
        fixed `sh` wrapper, which deletes it before running the step. Both are put into the
        created container (put_archive: a tmpfs mount is not reachable before the start)
        in a folder only the step's user may read, and leave with the container.
        """
        argv = list(step.argv)
        env = {**self.plan.container_env, **step.env}
        secret_env = {k: self.resolve(v) for k, v in env.items() if self.is_secret(v)}
        env = {k: v for k, v in env.items() if k not in secret_env}
        rc: list[str] = []
        if argv[:1] == ["bazel"] and "build" in argv:
            at = argv.index("build")
            rc = [self.resolve(a) for a in argv[at + 1:] if self.is_secret(a)]
            argv = [a for i, a in enumerate(argv) if i <= at or not self.is_secret(a)]
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


class Engine:
    """A docker client used from the event loop: each call in a thread, errors translated."""

    def __init__(self, client: Any) -> None:
        """Wrap `client` (docker.DockerClient)."""
        self.client = client
        #: the engine answered once: from then on a lost connection means it went away
        self.connected = False

    async def call(self, doing: str, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        """`fn(*args, **kw)` in the default executor; `doing` names it in an error."""
        loop = asyncio.get_running_loop()
        connected = self.connected

        def run() -> T:
            with dockerutil.docker_errors(doing, connected=connected):
                return fn(*args, **kw)

        return await loop.run_in_executor(None, run)

    async def call_cancellable(self, doing: str, fn: Callable[[], T],
                               cancel: asyncio.Event) -> T:
        """`call` in a thread of its own that a cancel does not wait for.

        For engine calls that can stall with nothing to interrupt (an image pull from a
        registry that does not answer): when `cancel` is set, BuildCancelled at once; the
        thread ends when the call returns or times out, and its result is dropped.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        connected = self.connected

        def deliver(setter: Callable[[Any], None], value: Any) -> None:
            if not future.done():
                setter(value)

        def run() -> None:
            try:
                with dockerutil.docker_errors(doing, connected=connected):
                    value = fn()
            except BaseException as exc:  # noqa: BLE001 - crosses to the loop as data
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(deliver, future.set_exception, exc)
            else:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(deliver, future.set_result, value)

        # a daemon thread: asyncio.run's executor shutdown must not wait for a stalled pull
        threading.Thread(target=run, name=f"tfwizard {doing}", daemon=True).start()
        waiter = asyncio.ensure_future(cancel.wait())
        try:
            waiters: set[asyncio.Future[Any]] = {future, waiter}
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not future.done():
            future.cancel()
            raise BuildCancelled(_("cancelled by the user while {doing}").format(doing=doing))
        return future.result()


def started_at(container: Any) -> float | None:
    """When the container started, engine clock (epoch seconds); reloads its attrs."""
    container.reload()
    return engine_time(container.attrs.get("State", {}).get("StartedAt", ""))


def create_container(client: Any, image: str, options: dict[str, Any],
                     files: bytes | None, step: Step) -> tuple[Any, bool]:
    """Create a step container (retried without init on an engine with no docker-init)
    and put its secret files in; returns (container, made with init)."""
    import docker.errors

    try:
        container = client.containers.create(image, **options)
    except docker.errors.DockerException as exc:
        if not (options.get("init") and dockerutil.missing_init(exc)):
            raise
        options = {**options, "init": False}  # an engine too old for init: PID 1 is the step
        container = client.containers.create(image, **options)
    if files is not None:
        try:
            if not container.put_archive("/", files):
                raise TfWizardError(_("the engine refused the {step} step's secret "
                                      "files").format(step=step.name))
        except BaseException:
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise
    return container, bool(options.get("init"))


def secret_references(plan: BuildPlan) -> list[str]:
    """Names of the ${ENV_VAR} secrets the plan needs at container start."""
    return secrets.references([*plan.flag_list, *plan.container_env.values()])


def resolve_secrets(plan: BuildPlan, env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """(bazel flags, container env) with ${ENV_VAR} references replaced, for starting the
    container only: never write the result to a record or a log."""
    missing = [n for n in secret_references(plan) if n not in env]
    if missing:
        raise UsageError(ngettext("the recipe refers to an unset environment variable: {names}",
                                  "the recipe refers to unset environment variables: {names}",
                                  len(missing)).format(names=", ".join(missing)),
                         ngettext("export it before building", "export them before building",
                                  len(missing)))
    return ([secrets.substitute(f, env) for f in plan.flag_list],
            {k: secrets.substitute(v, env) for k, v in plan.container_env.items()})
