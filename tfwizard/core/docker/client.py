"""The one place docker SDK and requests exceptions become tfwizard errors with advice.

Also the few engine helpers the runner needs: connecting, finding or pulling an image,
telling a local engine from a remote one, and reading a container's multiplexed
stdout/stderr stream fast.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import struct
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import DockerUnavailable, ImageMissing, TfWizardError
from ..i18n import _


def start_hint() -> str:
    """What to do when no Docker engine answers."""
    return _("Is the Docker daemon running? Try `sudo systemctl start docker`, or set "
             "DOCKER_HOST to the engine you use.")


def permission_hint() -> str:
    """What to do when this user may not use the Docker socket."""
    return _("Your user may not use the Docker socket. Add it to the docker group (`sudo "
             "usermod -aG docker $USER`, then log out and in), or use rootless Docker and set "
             "DOCKER_HOST.")


def gone_hint() -> str:
    """What to do when the engine went away during a build."""
    return _("Start Docker again (`sudo systemctl start docker`); the build's log is kept in "
             "its record. Then `tfwizard clean` removes what is left of the build, and you can "
             "build again.")

#: errno values of a write that failed because the output folder is full or too small
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _is_permission(exc: BaseException) -> bool:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, PermissionError) or getattr(cur, "errno", None) in (
                errno.EACCES, errno.EPERM):
            return True
        if "Permission denied" in str(cur):
            return True
        cur = cur.__cause__ or cur.__context__ or (cur.args[0] if cur.args and isinstance(
            cur.args[0], BaseException) else None)
    return False


#: engine refusals that are the machine's Docker setup, not the build: (what the engine
#: says, tfwizard's message, what to do), the texts as functions (read in the UI's language)
_ENGINE_SETUP = (
    ("could not select device driver",
     lambda: _("{doing}: the engine cannot pass GPUs to containers: {error}"),
     lambda: _("Install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure "
               "--runtime=docker` and restart Docker (snap Docker is not supported).")),
    ("could not find bridge",
     lambda: _("{doing}: Docker's default bridge network is gone: {error}"),
     lambda: _("Restart the Docker daemon (it makes docker0 again). A second dockerd started "
               "with `--bridge none` on this machine deletes docker0; give it a bridge of its "
               "own. A recipe with build.network = \"none\" needs no bridge.")),
)


def translate(exc: BaseException, doing: str, *, connected: bool = False) -> TfWizardError:
    """A tfwizard error (with what to do next) for an exception from the docker SDK.

    `connected`: the engine answered earlier (a build is under way), so a connection that
    fails now means the daemon went away, not that it was never started.
    """
    import docker.errors
    import requests.exceptions

    if isinstance(exc, TfWizardError):
        return exc
    if isinstance(exc, docker.errors.ImageNotFound):
        return ImageMissing(_("{doing}: image not found: {error}").format(
                                doing=doing, error=exc.explanation or exc),
                            _("Build or pull the image first, or set build.image in the "
                              "recipe."))
    if isinstance(exc, docker.errors.APIError):
        text = str(exc.explanation or exc)
        for needle, message, hint in _ENGINE_SETUP:
            if needle in text:
                return DockerUnavailable(message().format(doing=doing, error=text), hint())
        if exc.status_code == 404:
            return TfWizardError(_("{doing}: not found: {error}").format(doing=doing, error=text))
        return TfWizardError(_("{doing}: the Docker engine refused: {error}").format(
            doing=doing, error=text))
    transport = isinstance(exc, docker.errors.DockerException) or isinstance(
        exc, (requests.exceptions.ConnectionError, ConnectionError, FileNotFoundError))
    if not transport and not isinstance(exc, requests.exceptions.RequestException):
        return TfWizardError(f"{doing}: {type(exc).__name__}: {exc}")
    if transport and _is_permission(exc):
        return DockerUnavailable(
            _("{doing}: permission denied on the Docker socket").format(doing=doing),
            permission_hint())
    if connected:  # it answered before: it went away (both kinds of failure)
        return DockerUnavailable(
            _("{doing}: the Docker daemon went away ({error})").format(doing=doing, error=exc),
            gone_hint())
    if transport:
        return DockerUnavailable(
            _("{doing}: cannot reach the Docker engine ({error})").format(doing=doing, error=exc),
            start_hint())
    return DockerUnavailable(
        _("{doing}: talking to the Docker engine failed: {error}").format(doing=doing,
                                                                           error=exc),
        start_hint())


@contextlib.contextmanager
def docker_errors(doing: str, *, connected: bool = False) -> Iterator[None]:
    """Turn SDK exceptions raised inside the block into tfwizard errors."""
    try:
        yield
    except TfWizardError:
        raise
    except Exception as exc:
        raise translate(exc, doing, connected=connected) from exc


def output_error(exc: OSError, path: os.PathLike[str] | str) -> TfWizardError:
    """A tfwizard error for a failed write of a build output (the wheel) to `path`."""
    folder = os.path.dirname(os.fspath(path)) or "."
    if exc.errno in _FULL:
        return TfWizardError(
            _("copying the wheel to {path} failed: the folder is full or the file is too big "
              "({error}); nothing was left there").format(path=folder,
                                                          error=exc.strerror or exc),
            _("Free space there, or choose a folder with room (`tfwizard build --out DIR` or "
              "output.dir in the recipe), then build again: the Bazel disk cache makes it "
              "quick."))
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return TfWizardError(
            _("copying the wheel to {path} failed: not writable ({error})").format(
                path=folder, error=exc.strerror or exc),
            _("Choose a folder you may write to (`--out DIR` or output.dir in the recipe)."))
    return TfWizardError(
        _("copying the wheel to {path} failed: {error}").format(path=folder,
                                                                error=exc.strerror or exc),
        _("Check the output folder (`--out DIR` or output.dir in the recipe)."))


def connect(env: Mapping[str, str] | None = None, *, timeout: int = 60) -> Any:
    """A docker.DockerClient for DOCKER_HOST (or the default socket), checked with a ping
    whose API-Version header sets the client's API version, as the docker CLI negotiates
    it (the SDK's own "auto" asks GET /version, for which dockerd asks containerd and runc
    theirs: ~10 ms of a warm no-op build); "auto" when the engine sends no such header."""
    import docker
    from docker.constants import DEFAULT_DOCKER_API_VERSION

    environment = dict(os.environ if env is None else env)
    with docker_errors(_("connecting to Docker")):
        client = docker.DockerClient.from_env(environment=environment, timeout=timeout,
                                              version=DEFAULT_DOCKER_API_VERSION)
        api = client.api
        response = api._get(api.base_url + "/_ping")
        api._raise_for_status(response)
        version = response.headers.get("API-Version")
        if not version:
            client.close()
            return docker.DockerClient.from_env(environment=environment, timeout=timeout,
                                                version="auto")
        api._version = version
    return client


#: what an engine says when it cannot give a container an init process, at start: runc
#: cannot bind the daemon's docker-init binary to /sbin/docker-init (Docker 28: "error
#: mounting ... to rootfs at "/sbin/docker-init": stat ...: no such file or directory"), or
#: older daemons' PATH lookup of it fails; at create, docker-py refuses init for an engine
#: older than API 1.25
_NO_INIT = re.compile(r'to rootfs at "/sbin/docker-init"|'
                      r'exec: "docker-init": executable file not found|'
                      r"init param is not supported for API version")


def missing_init(exc: BaseException) -> bool:
    """True when `exc` (or what it was raised from) says the engine has no init binary."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text = str(getattr(cur, "explanation", None) or cur)
        if _NO_INIT.search(text):
            return True
        cur = cur.__cause__
    return False


def oom_killed(container: Any) -> bool:
    """True when the engine says the container's memory limit killed a process in it."""
    state = (getattr(container, "attrs", None) or {}).get("State", {})
    return bool(state.get("OOMKilled"))


def is_local_engine(client: Any) -> bool:
    """True when the engine shares this machine's file system (unix socket or npipe)."""
    from ..host import engine_is_local

    return engine_is_local(str(getattr(client.api, "base_url", "")))


def run_short(client: Any, image: str, entrypoint: list[str], command: list[str], *,
              user: str | None, timeout_s: float,
              environment: Mapping[str, str] | None = None) -> tuple[int | None, str]:
    """Run one short container of `image` and remove it: argv only, no network, no
    capabilities, no privileges, tfwizard's labels. Its exit code and output (stdout and
    stderr); TfWizardError when it runs past `timeout_s`. The caller wraps it in
    docker_errors (what it was doing)."""
    import secrets

    import requests.exceptions

    from ..paths import LABEL, own_labels

    container = client.containers.create(
        image, entrypoint=entrypoint, command=command, user=user or "", network_mode="none",
        privileged=False, cap_drop=["ALL"], security_opt=["no-new-privileges"],
        environment=dict(environment or {}), labels=own_labels(**{f"{LABEL}.step": "probe"}),
        name=f"tfwizard-probe-{secrets.token_hex(4)}", detach=True)
    try:
        container.start()
        try:
            code = container.wait(timeout=timeout_s).get("StatusCode")
        except requests.exceptions.ReadTimeout as exc:  # the container hangs
            raise TfWizardError(_("looking inside image {image} took more than {timeout:g} "
                                  "s").format(image=image, timeout=timeout_s)) from exc
        return code, container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
    finally:
        container.remove(force=True)


def ensure_image(client: Any, image: str, *, pull: bool = True) -> Any:
    """The image object; pulled if missing and `pull`; ImageMissing with advice otherwise."""
    import docker.errors

    try:
        return client.images.get(image)
    except docker.errors.ImageNotFound:
        pass
    except Exception as exc:
        raise translate(exc, _("looking up image {image}").format(image=image)) from exc
    if pull:
        try:
            return client.images.pull(image)
        except Exception as exc:
            why = getattr(exc, "explanation", None) or str(exc)
            raise ImageMissing(
                _("The build image {image} is not on this machine and cannot be pulled: "
                  "{error}").format(image=image, error=why), _pull_hint(str(why))) from exc
    raise ImageMissing(_("The build image {image} is not on this machine.").format(image=image),
                       _("Pull or build it, or set build.image in the recipe."))


def _pull_hint(answer: str) -> str:
    """What to do about a pull that failed: the failure catalogue's next step when it knows
    the engine's or registry's words (a rate limit, a tag that is gone), else the general
    one (the catalogue owns what each such answer means)."""
    from ..diagnosis.build import diagnose

    known = [d for d in diagnose(answer.splitlines())
             if d.severity == "error" and d.speaker == "docker"]
    return known[0].next_step if known else _(
        "Pull it where a registry is reachable (`docker pull IMAGE`, then `docker save` / "
        "`docker load`), build it yourself, or set build.image in the recipe to an image you "
        "have (`docker images`).")


# -- fast multiplexed stream reading -----------------------------------------------------------

_HEADER = struct.Struct(">BxxxL")


def raw_socket(response_socket: Any) -> Any:
    """The object to read a hijacked attach stream from (a socket or a SocketIO)."""
    return getattr(response_socket, "_sock", response_socket)


def read_frames(sock: Any, *, chunk: int = 1 << 16,
                ) -> Iterator[list[tuple[int, bytes]]]:
    """Yield batches of (stream, payload) from a multiplexed (non-tty) Docker stream.

    Reads big chunks and cuts frames out of a buffer in Python, one batch per read,
    instead of two small reads per frame: a build can print a million lines.
    """
    recv = sock.recv if hasattr(sock, "recv") else sock.read

    def chunks() -> Iterator[bytes]:
        while True:
            try:
                data = recv(chunk)
            except (OSError, ValueError):  # closed under us: the consumer stopped
                return
            if not data:
                return
            yield data

    return frames_of(chunks())


def frames_of(chunks: Iterator[bytes]) -> Iterator[list[tuple[int, bytes]]]:
    """Batches of (stream, payload) cut out of chunks of a multiplexed stream."""
    buf = b""
    for data in chunks:
        buf = buf + data if buf else data
        batch: list[tuple[int, bytes]] = []
        pos, end = 0, len(buf)
        while end - pos >= 8:
            stream, size = _HEADER.unpack_from(buf, pos)
            if end - pos - 8 < size:
                break
            batch.append((stream, buf[pos + 8:pos + 8 + size]))
            pos += 8 + size
        buf = buf[pos:]
        if batch:
            yield batch


class LogFollower:
    """A container's whole output from its first line, then live until it exits.

    The engine's `logs?follow=1` reads the log driver's file and follows it, so nothing
    printed while no one was attached is lost and nothing comes twice (an attach with
    logs=1 replays, then attaches: a line printed in between can go missing).
    """

    def __init__(self, client: Any, container_id: str) -> None:
        api = client.api
        # the low-level GET keeps the stream ids (APIClient.logs drops them)
        self._response = api._get(api._url("/containers/{0}/logs", container_id),
                                  params={"stdout": 1, "stderr": 1, "follow": 1},
                                  stream=True, timeout=None)
        api._raise_for_status(self._response)
        self._sock: Any = None
        with contextlib.suppress(Exception):
            self._sock = raw_socket(api._get_raw_response_socket(self._response))

    def frames(self) -> Iterator[list[tuple[int, bytes]]]:
        """The container's log as batches of (stream, payload) frames, live."""
        def chunks() -> Iterator[bytes]:
            try:
                # chunk_size=None: each HTTP chunk as it arrives, not a full 64 KiB buffer
                yield from self._response.iter_content(chunk_size=None)
            except Exception:  # closed under us (cancel, or the engine went away)
                return

        return frames_of(chunks())

    def close(self) -> None:
        """Stop following (unblocks a reader in frames())."""
        if self._sock is not None:
            close_quietly(self._sock)
        close_quietly(self._response)


def close_quietly(obj: Any) -> None:
    """Close a socket (shutting it down first, so a reader blocked in recv wakes up)."""
    with contextlib.suppress(Exception):
        if isinstance(obj, socket.socket):
            obj.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        obj.close()

