"""The one place docker SDK and requests exceptions become tfwizard errors with advice.

Also the few engine helpers the runner needs: connecting, finding or pulling an image,
telling a local engine from a remote one, and reading a container's multiplexed
stdout/stderr stream fast.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import struct
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import DockerUnavailable, ImageMissing, TfWizardError

START_HINT = ("Is the Docker daemon running? Try `sudo systemctl start docker`, "
              "or set DOCKER_HOST to the engine you use.")
PERMISSION_HINT = ("Your user may not use the Docker socket. Add it to the docker group "
                   "(`sudo usermod -aG docker $USER`, then log out and in), or use rootless "
                   "Docker and set DOCKER_HOST.")


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


def translate(exc: BaseException, doing: str) -> TfWizardError:
    """A tfwizard error (with what to do next) for an exception from the docker SDK."""
    import docker.errors
    import requests.exceptions

    if isinstance(exc, TfWizardError):
        return exc
    if isinstance(exc, docker.errors.ImageNotFound):
        return ImageMissing(f"{doing}: image not found: {exc.explanation or exc}",
                            "Build or pull the image first, or set build.image in the recipe.")
    if isinstance(exc, docker.errors.APIError):
        text = str(exc.explanation or exc)
        if "could not select device driver" in text:
            return DockerUnavailable(
                f"{doing}: the engine cannot pass GPUs to containers: {text}",
                "Install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure "
                "--runtime=docker` and restart Docker (snap Docker is not supported).")
        if exc.status_code == 404:
            return TfWizardError(f"{doing}: not found: {text}")
        return TfWizardError(f"{doing}: the Docker engine refused: {text}")
    if isinstance(exc, docker.errors.DockerException) or isinstance(
            exc, (requests.exceptions.ConnectionError, ConnectionError, FileNotFoundError)):
        if _is_permission(exc):
            return DockerUnavailable(f"{doing}: permission denied on the Docker socket",
                                     PERMISSION_HINT)
        return DockerUnavailable(f"{doing}: cannot reach the Docker engine ({exc})", START_HINT)
    if isinstance(exc, requests.exceptions.RequestException):
        return DockerUnavailable(f"{doing}: talking to the Docker engine failed: {exc}",
                                 START_HINT)
    return TfWizardError(f"{doing}: {type(exc).__name__}: {exc}")


@contextlib.contextmanager
def docker_errors(doing: str) -> Iterator[None]:
    """Turn SDK exceptions raised inside the block into tfwizard errors."""
    try:
        yield
    except TfWizardError:
        raise
    except Exception as exc:
        raise translate(exc, doing) from exc


def connect(env: Mapping[str, str] | None = None, *, timeout: int = 60) -> Any:
    """A docker.DockerClient for DOCKER_HOST (or the default socket), checked with ping."""
    import docker

    environment = dict(os.environ if env is None else env)
    with docker_errors("connecting to Docker"):
        client = docker.DockerClient.from_env(environment=environment, timeout=timeout)
        client.ping()
    return client


def is_local_engine(client: Any) -> bool:
    """True when the engine shares this machine's file system (unix socket or npipe)."""
    base = str(getattr(client.api, "base_url", ""))
    return base.startswith(("http+docker://localhost", "http+docker://localunixsocket",
                            "http+docker://localnpipe"))


def ensure_image(client: Any, image: str, *, pull: bool = True) -> Any:
    """The image object; pulled if missing and `pull`; ImageMissing with advice otherwise."""
    import docker.errors

    try:
        return client.images.get(image)
    except docker.errors.ImageNotFound:
        pass
    except Exception as exc:
        raise translate(exc, f"looking up image {image}") from exc
    if pull:
        try:
            return client.images.pull(image)
        except Exception as exc:
            why = getattr(exc, "explanation", None) or str(exc)
            raise ImageMissing(
                f"The build image {image} is not on this machine and cannot be pulled: {why}",
                "Pull it where a registry is reachable (`docker pull IMAGE`, then `docker save`"
                " / `docker load`), build it yourself, or set build.image in the recipe to an "
                "image you have (`docker images`).") from exc
    raise ImageMissing(f"The build image {image} is not on this machine.",
                       "Pull or build it, or set build.image in the recipe.")


# -- fast multiplexed stream reading -----------------------------------------------------------

_HEADER = struct.Struct(">BxxxL")
STREAM_NAMES = {1: "stdout", 2: "stderr"}


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
    buf = b""
    while True:
        try:
            data = recv(chunk)
        except (OSError, ValueError):  # closed under us: the consumer stopped
            return
        if not data:
            return
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


def close_quietly(obj: Any) -> None:
    """Close a socket (shutting it down first, so a reader blocked in recv wakes up)."""
    with contextlib.suppress(Exception):
        if isinstance(obj, socket.socket):
            obj.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):
        obj.close()

