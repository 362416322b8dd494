"""Warm builds: a persistent workspace per recipe and a build container that
stays up between builds, so Bazel's server, output base and analysis cache stay warm.

    ws = workspace_for(plan, recipe_id="/path/r.toml")   # identity: recipe, release, ref, backend
    warm = WarmContainer(client, plan, ws, idle_s=1800)
    warm.ensure()                                        # volumes + container, reused if there
    warm.configure(on_output)                            # skipped when its inputs are unchanged
    result = warm.build(on_output)                       # `bazel build` through the exec API
    warm.copy_wheel(result, out_dir)                     # the BEP's named output, or None

The pieces, each tested against a real engine (tests/docker/test_warm.py); the shell
they run is resources/scripts/warm-*.sh:

- The workspace (workspace.py): volumes keyed by (recipe, release, ref or source folder,
  backend), labelled so that `tfwizard clean` finds them.
- The warm container runs IDLE_LOOP as its command: it exits (and so stops the Bazel
  server) once the deadline file in the state volume has passed and no exec of ours is
  busy. Every exec moves the deadline on when it starts and when it ends: no daemon of
  tfwizard's has to live for the timeout to work.
- Every command runs through the docker SDK's low-level exec API (exec_create /
  exec_start / exec_inspect) with the build's user, environment and working folder, in
  EXEC_WRAPPER: the exec is a session leader (runc makes it one), the wrapper records its
  pid as the process group to signal; `cancel()` sends SIGINT to that group (Bazel's
  client asks its server to stop the command; the server stays up, warm), SIGKILL after
  the grace period.
- `./configure` runs only when its output in the source folder is not this workspace's
  own: the sha256 of its inputs (argv, configure environment, container environment,
  image) differs from the one stored after its last success, or .tf_configure.bazelrc
  differs from the copy of what that run wrote (another recipe built the same checkout
  meanwhile: warmconfigure.py).
- The wheel is the wheel target's named output in this build's own BEP file (a new file
  per build, `--build_event_json_file` is not an option analysis depends on): a failed
  build names no output, so no wheel can come out of it, whatever bazel-bin still holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import secrets
import tarfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...docker import client as dockerutil
from ...errors import TfWizardError, UsageError
from ...i18n import _
from ...paths import LABEL
from ...resources import shell_script
from ..plan.plan import OUTPUT_USER_ROOT, RECORD, SRC, BuildPlan, Step
from ..run.containers import secret_references
from .bep import MASK_VAR, BuildReport, bep_wheels, new_mark, report_script
from .configure import (
    CONFIGURE_IF_CHANGED,
    IF_CHANGED,
    SKIP_LINE,
    configure_check,
    configure_digest,
)
from .secrets import RC_VAR, WarmSecrets
from .workspace import (
    SPEC_LABEL,
    WORKSPACE_LABEL,
    Workspace,
    ensure_volumes,
    workspace_for,
    workspace_mounts,
)

# from bep.py, configure.py and workspace.py: the warm build's names, found here by the
# callers that drive a warm container
__all__ = ["IF_CHANGED", "SKIP_LINE", "WORKSPACE_LABEL", "Workspace", "bep_wheels",
           "configure_digest", "workspace_for"]

#: the idle timeout of a warm container when neither recipe nor command line says otherwise
DEFAULT_IDLE_S = 30 * 60
#: the state volume's files (mounted at RECORD, where the plan's BEP flag already points)
DEADLINE = "deadline"
BEP_FLAG = "--build_event_json_file="
#: seconds between SIGINT and SIGKILL on cancel
CANCEL_GRACE_S = 5.0
#: how often the idle loop looks at the deadline
IDLE_POLL_S = 2

#: the warm container's command: $1 the state folder, $2 the idle timeout in seconds, $3
#: Bazel's output root, $4 the poll interval; it exits once the deadline has passed and no
#: exec of ours is busy (resources/scripts/warm-idle-loop.sh)
IDLE_LOOP = shell_script("warm-idle-loop.sh")

#: every exec: $1 state folder, $2 idle seconds, $3 token, then the command; marks the exec
#: busy and moves the deadline on (warm-exec.sh)
EXEC_WRAPPER = shell_script("warm-exec.sh")

#: cancel: $1 the signal, $2 the busy file; signals the recorded process group
#: (warm-signal.sh)
SIGNAL_GROUP = shell_script("warm-signal.sh")

#: one build in one exec: $1 this build's BEP file, $2 how many of the next arguments are
#: the configure command (0: none), then that command, then the build command; clears
#: earlier builds' BEP files, configures when needed (warmconfigure.py), then builds
#: (warm-build.sh)
BUILD_SCRIPT = shell_script("warm-ours.sh", "warm-build.sh", IF=IF_CHANGED, SKIP=SKIP_LINE)


@dataclass
class ExecResult:
    """How one command in the warm container ended: exit code, time, output lines."""

    exit_code: int | None
    seconds: float
    output: list[str]
    cancelled: bool = False
    bep_lines: list[str] | None = None  # the build's own BEP file (build() only)
    report: list[str] | None = None  # stdout from the report mark on (exec(report_mark=))
    wheel_sha256: dict[str, str] = field(default_factory=dict)  # build() only
    wheel_cached: set[str] = field(default_factory=set)  # kept sha256 reused (build())

    @property
    def skipped(self) -> bool:
        """Whether the command said it had nothing to do (configure inputs unchanged)."""
        return SKIP_LINE in self.output


OnOutput = Callable[[str, str], None]  # (channel "stdout" | "stderr", line)


class WarmContainer:
    """A workspace's long-lived build container and the commands run in it."""

    def __init__(self, client: Any, plan: BuildPlan, workspace: Workspace, *,
                 idle_s: int = DEFAULT_IDLE_S, cancel_grace_s: float = CANCEL_GRACE_S,
                 secrets: Mapping[str, str] | None = None) -> None:
        """`secrets`: the values of the plan's ${ENV} references (warmsecrets.py: they go
        into each exec's environment only); a plan with references needs them, and every
        caller passes warmsecrets.secret_values(plan, env)."""
        if secrets is None and secret_references(plan):
            raise UsageError(
                _("the recipe refers to ${{ENV}} secrets ({names}), but the warm container "
                  "was given no values for them").format(
                      names=", ".join(secret_references(plan))),
                _("Set them in the environment of the command, or build with `--fresh`."))
        self.client = client
        self.plan = plan
        self.workspace = workspace
        self.idle_s = int(idle_s)
        self.cancel_grace_s = cancel_grace_s
        self.secrets = WarmSecrets(plan, secrets or {})
        self.container: Any = None
        self._token: str | None = None
        self._exec_id: str | None = None
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._found: list[Any] = []  # what find() saw, for the ensure() that follows

    # -- the container -----------------------------------------------------------------------
    def mounts(self) -> list[Any]:
        """The container's mounts: the workspace volumes, the caches, the record."""
        return workspace_mounts(self.plan, self.workspace)

    def spec_digest(self) -> str:
        """What the container was made with; another value means a new container."""
        plan = self.plan
        data = json.dumps({"image": plan.image, "user": plan.user or "",
                           "env": plan.container_env, "network": plan.network_mode,
                           "mounts": [dict(m) for m in self.mounts()], "idle": self.idle_s,
                           "loop": IDLE_LOOP, "poll": IDLE_POLL_S},
                          sort_keys=True)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]

    def find(self) -> Any | None:
        """The workspace's container on the engine (any state), or None: one inspect by
        its name (no list), kept for the ensure() that follows."""
        import docker.errors

        with dockerutil.docker_errors(_("looking for the warm build container")):
            try:
                found = self.client.containers.get(self.workspace.container_name)
            except docker.errors.NotFound:
                found = None
        if found is not None and found.labels.get(WORKSPACE_LABEL) != self.workspace.key:
            found = None  # a container of that name that is not this workspace's
        self._found = [found]
        return found

    def reusable(self, current: Any, digest: str | None = None) -> bool:
        """Whether `current` (what find() returned) is running with this spec: then
        ensure() reuses it without another engine call."""
        return current is not None and current.status == "running" and \
            current.labels.get(SPEC_LABEL) == (digest or self.spec_digest())

    def ensure(self) -> bool:
        """The running warm container, reused when it is up with the same spec; True when
        it was reused, False when it was (re)made. The volumes are kept either way. Uses
        what find() just saw when it was called before (one inspect per build)."""
        digest = self.spec_digest()
        current = self._found.pop() if self._found else self.find()
        self._found = []
        if current is not None:
            if self.reusable(current, digest):
                self.container = current
                return True
            with dockerutil.docker_errors(_("removing the stopped warm build container")):
                current.remove(force=True)
        ensure_volumes(self.client, self.plan, self.workspace)
        plan = self.plan
        with dockerutil.docker_errors(_("starting the warm build container")):
            self.container = self.client.containers.run(
                plan.image, ["sh", "-c", IDLE_LOOP, "sh", RECORD, str(self.idle_s),
                             OUTPUT_USER_ROOT, str(IDLE_POLL_S)],
                name=self.workspace.container_name, detach=True,
                labels=self.workspace.labels(**{SPEC_LABEL: digest,
                                                f"{LABEL}.step": "warm"}),
                environment=self.secrets.container_env(), working_dir=SRC, user=plan.user or "",
                mounts=self.mounts(), network_mode=plan.network_mode, stdin_open=False,
                tty=False, privileged=False, cap_drop=["ALL"],
                security_opt=["no-new-privileges"], init=True)
        return False

    # -- commands ----------------------------------------------------------------------------
    def exec(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
             workdir: str = SRC, on_output: OnOutput | None = None,
             token: str | None = None, report_mark: str | None = None) -> ExecResult:
        """Run argv in the warm container (blocking), streaming lines to on_output;
        `token` names the exec's busy file (default: a new one); stdout from a line with
        `report_mark` on goes to the result's `report`, not to on_output."""
        from ...streams import LineSplitter

        if self.container is None:
            raise TfWizardError(_("the warm build container is not started"))
        api = self.client.api
        token = token or secrets.token_hex(6)
        wrapped = ["sh", "-c", EXEC_WRAPPER, "sh", RECORD, str(self.idle_s), token, *argv]
        t0 = time.perf_counter()
        with dockerutil.docker_errors(_("running a command in the warm build container")):
            exec_id = api.exec_create(self.container.id, wrapped, stdout=True, stderr=True,
                                      environment=self.secrets.exec_env(env),
                                      workdir=workdir, user=self.plan.user or "")["Id"]
            with self._lock:
                self._token, self._exec_id = token, exec_id
            if self._cancelled.is_set():  # cancelled before it started
                return ExecResult(None, 0.0, [], cancelled=True)
            splitters = {0: LineSplitter(), 1: LineSplitter()}
            lines: list[str] = []
            report: list[str] | None = None

            def emit(channel: str, got: list[str]) -> None:
                nonlocal report
                if report_mark and channel == "stdout":
                    if report is None:
                        at = next((i for i, line in enumerate(got) if report_mark in line),
                                  None)
                        if at is not None:
                            report, got = got[at:], got[:at]
                            head = report[0][:report[0].find(report_mark)]
                            got = got + ([head] if head else [])
                    else:
                        report.extend(got)
                        return
                lines.extend(got)
                if on_output is not None:
                    for line in got:
                        on_output(channel, line)

            for out, err in api.exec_start(exec_id, stream=True, demux=True):
                if out:
                    emit("stdout", splitters[0].feed(out))
                if err:
                    emit("stderr", splitters[1].feed(err))
            emit("stdout", splitters[0].flush())
            emit("stderr", splitters[1].flush())
            info = api.exec_inspect(exec_id)
        with self._lock:
            self._token = self._exec_id = None
        code = info.get("ExitCode")
        return ExecResult(None if code is None else int(code), time.perf_counter() - t0, lines,
                          cancelled=self._cancelled.is_set(), report=report)

    def start(self, argv: Sequence[str], *, env: dict[str, str] | None = None,
              workdir: str = SRC, token: str) -> str:
        """Start argv in the warm container and return at once (a detached exec: it
        outlives this process); its exec id. cancel() stops it, `exit_code` says how it
        ended. Its output goes where argv sends it (nobody reads the exec's streams)."""
        if self.container is None:
            raise TfWizardError(_("the warm build container is not started"))
        api = self.client.api
        wrapped = ["sh", "-c", EXEC_WRAPPER, "sh", RECORD, str(self.idle_s), token, *argv]
        with dockerutil.docker_errors(_("running a command in the warm build container")):
            exec_id = api.exec_create(self.container.id, wrapped, stdout=False, stderr=False,
                                      environment=self.secrets.exec_env(env),
                                      workdir=workdir, user=self.plan.user or "")["Id"]
            api.exec_start(exec_id, detach=True)
        self.adopt(token, exec_id)
        return str(exec_id)

    def adopt(self, token: str, exec_id: str) -> None:
        """Make cancel() stop an exec started detached (by this or an earlier process)."""
        with self._lock:
            self._token, self._exec_id = token, exec_id

    def exit_code(self, exec_id: str) -> tuple[bool, int | None]:
        """(running, exit code) of an exec of this container."""
        with dockerutil.docker_errors(_("running a command in the warm build container")):
            info = self.client.api.exec_inspect(exec_id)
        code = info.get("ExitCode")
        return bool(info.get("Running")), None if code is None else int(code)

    def cancel(self) -> None:
        """Stop the running exec: SIGINT to its process group, SIGKILL after the grace
        period. Thread-safe; returns once the exec has ended (or was never started)."""
        self._cancelled.set()
        with self._lock:
            token, exec_id = self._token, self._exec_id
        if token is None or exec_id is None:
            return
        busy = f"{RECORD}/busy.{token}"
        api = self.client.api
        for sig, wait_s in (("INT", self.cancel_grace_s), ("KILL", 5.0)):
            with contextlib.suppress(Exception):
                kid = api.exec_create(self.container.id, ["sh", "-c", SIGNAL_GROUP, "sh",
                                                          sig, busy],
                                      user=self.plan.user or "")["Id"]
                api.exec_start(kid)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                with contextlib.suppress(Exception):
                    if not api.exec_inspect(exec_id).get("Running"):
                        return
                time.sleep(0.2)

    @property
    def cancelled(self) -> bool:
        """Whether cancel() was called (a cancelled container refuses new commands)."""
        return self._cancelled.is_set()

    def _step(self, name: str) -> Step:
        for step in self.plan.steps:
            if step.name == name:
                return step
        raise TfWizardError(_("the plan has no {step} step").format(step=name))

    def has_source(self) -> bool:
        """The source volume holds a checkout (a recipe with source_dir always has one)."""
        if self.plan.source_kind == "dir":
            return True
        run = self.exec(["test", "-e", f"{SRC}/.git"], workdir="/")
        return run.exit_code == 0

    def fetch(self, on_output: OnOutput | None = None) -> ExecResult | None:
        """Clone the source into its volume once (None when it is already there)."""
        if self.has_source():
            return None
        result: ExecResult | None = None
        for step in self.plan.steps:
            if step.phase != "fetch":
                continue
            result = self.exec(step.argv, env=step.env, workdir=step.workdir,
                               on_output=on_output)
            if result.exit_code != 0:
                break
        return result

    def configure(self, on_output: OnOutput | None = None) -> ExecResult:
        """./configure, unless the source's configure output is what its last successful run
        wrote for these inputs (then the result's `skipped` is True)."""
        return self.exec(self._configure_argv(), env=self._step("configure").env,
                         workdir=self._step("configure").workdir, on_output=on_output)

    def _configure_argv(self, *, with_env: bool = False) -> list[str]:
        """The configure-if-changed command; `with_env`: BUILD_SCRIPT's form (IF_CHANGED,
        then configure behind `env -u RC_VAR -u MASK_VAR K=V...`, for an exec whose own environment is
        the build step's: its secret rc lines are Bazel's, not configure's)."""
        step = self._step("configure")
        check = configure_check(self.plan, step)
        if with_env:
            return [IF_CHANGED, *check, "env", "-u", RC_VAR, "-u", MASK_VAR,
                    *[f"{k}={v}" for k, v in sorted(step.env.items())], *step.argv]
        return ["sh", "-c", CONFIGURE_IF_CHANGED, "sh", *check, *step.argv]

    def configure_first(self, step: Step, on_output: OnOutput | None = None
                        ) -> tuple[list[str], ExecResult | None]:
        """configure-if-changed before `step` (the build, or `bazel test`): in the same
        folder, the command to put in front of the step's own exec (one round trip);
        elsewhere, run now in an exec of its own, with its result when it failed."""
        if self._step("configure").workdir == step.workdir:
            return self._configure_argv(with_env=True), None
        first = self.configure(on_output)
        return [], (first if first.exit_code != 0 or first.cancelled else None)

    def build(self, on_output: OnOutput | None = None, *,
              configure: bool = False, tag: str = "") -> ExecResult:
        """The plan's `bazel build`, writing the BEP to a file of this build's own;
        `configure`: configure-if-changed first, in the same exec (one round trip); `tag`:
        an argument the exec carries for `--attach` (warmattach.build_tag). The BEP file
        is removed by the next build's exec, not by an exec of its own."""
        step = self._step("build")
        token = secrets.token_hex(6)
        bep = f"{RECORD}/bep-{token}.json"
        argv = [bep_flag(a, bep) for a in step.argv]
        if not any(a.startswith(BEP_FLAG) for a in argv):
            at = argv.index("build") + 1
            argv.insert(at, BEP_FLAG + bep)
        conf: list[str] = []
        if configure:
            conf, failed = self.configure_first(step, on_output)
            if failed is not None:
                return failed
        argv, secret_env = self.secrets.build(argv)
        mark = new_mark()
        result = self.exec(["sh", "-c", report_script(BUILD_SCRIPT), "sh", mark, tag or "-",
                            bep, str(len(conf)), *conf, *argv], env={**step.env, **secret_env},
                           workdir=step.workdir, on_output=on_output, token=token,
                           report_mark=mark)
        if result.report is not None:  # the BEP came with the output: no archive call
            got = BuildReport.parse(result.report, mark)
            result.bep_lines, result.wheel_sha256 = got.bep_lines, got.sha256
            result.wheel_cached = got.cached
        else:  # configure failed, or the exec was killed before its report
            data = self.read_file(bep)
            result.bep_lines = data.decode("utf-8", "replace").splitlines() if data else []
        return result

    def read_file(self, path: str) -> bytes | None:
        """A file's bytes from inside the container, or None when it is not there."""
        import docker.errors

        try:
            stream, _stat = self.container.get_archive(path)
        except docker.errors.NotFound:
            return None
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    fh = tar.extractfile(member)
                    return fh.read() if fh else None
        return None

    def copy_wheel(self, result: ExecResult, out_dir: Path, *,
                   sums: Path | None = None) -> Path | None:
        """The wheel this build named in its BEP, copied to out_dir; None when the build
        failed or named none (never an older file that bazel-bin still holds). `sums`:
        the kept sha256 of output wheels (wheelsums.py), so an unchanged one is not hashed
        again."""
        from ..run.artifacts import wheel_member_name
        from .wheelsums import remember, same_wheel

        if result.exit_code != 0 or not result.bep_lines:
            return None
        paths = bep_wheels(result.bep_lines, self.plan.bazel_target)
        if not paths:
            return None
        kept = out_dir / Path(paths[-1]).name
        if same_wheel(kept, result.wheel_sha256.get(paths[-1]), sums):
            return kept  # this build's wheel has these very bytes (a no-op rebuild)
        import docker.errors

        try:
            stream, _stat = self.container.get_archive(paths[-1])
        except docker.errors.NotFound:
            return None
        out_dir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            for member in tar.getmembers():
                name = wheel_member_name(member)
                fh = tar.extractfile(member) if name else None
                if name is None or fh is None:
                    continue
                target = out_dir / name
                tmp = out_dir / f".{name}.{secrets.token_hex(4)}.tmp"
                data = fh.read()
                tmp.write_bytes(data)
                tmp.replace(target)
                if sums is not None:
                    remember(target, hashlib.sha256(data).hexdigest(), sums)
                return target
        return None

    def stop(self) -> None:
        """Remove the container (the volumes stay)."""
        if self.container is not None:
            with contextlib.suppress(Exception):
                self.container.remove(force=True)
            self.container = None


def bep_flag(arg: str, path: str) -> str:
    """arg, with a --build_event_json_file= flag pointed at path."""
    return BEP_FLAG + path if arg.startswith(BEP_FLAG) else arg
