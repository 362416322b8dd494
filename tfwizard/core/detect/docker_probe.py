"""Docker: is the engine reachable, which version, and can it pass GPUs through."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from typing import Any

from ..host import DockerInfo
from ..i18n import _

#: detection must stay fast; a daemon that needs longer than this is reported as not answering
DOCKER_TIMEOUT = 2


def _default_socket() -> str:
    """The socket the docker SDK uses when DOCKER_HOST is unset (the SDK is the authority)."""
    try:
        from docker.constants import DEFAULT_UNIX_SOCKET
    except ImportError:  # reported separately as "docker SDK not installed"
        return _("the default Docker socket")
    return DEFAULT_UNIX_SOCKET.replace("http+unix://", "unix://")

#: returns a docker SDK client (``docker.DockerClient``) or raises what the SDK raises
DockerClientFactory = Callable[[], Any]


def probe_docker(
    *, env: Mapping[str, str], client_factory: DockerClientFactory | None = None
) -> DockerInfo:
    """Describe the Docker engine named by ``env`` (DOCKER_HOST, or the local socket)."""
    host = env.get("DOCKER_HOST") or _default_socket()
    info = DockerInfo(host=host)
    factory = client_factory or _default_factory(env)
    client = None
    try:
        client = factory()
        version = client.version()
        details = client.info()
    except ImportError as exc:
        info.status = "error"
        info.message = _(
            "the docker Python package cannot be imported ({error}), so tfwizard cannot talk "
            "to Docker. Install it: pip install 'docker>=7' (reinstalling tfwizard also does)."
        ).format(error=exc)
        return info
    except Exception as exc:
        return _failed(info, exc, env)
    finally:
        _close(client)
    info.status = "ok"
    info.server_version = _str(version.get("Version")) if isinstance(version, dict) else None
    info.api_version = _str(version.get("ApiVersion")) if isinstance(version, dict) else None
    if isinstance(details, dict):
        runtimes = details.get("Runtimes")
        info.runtimes = sorted(str(k) for k in runtimes) if isinstance(runtimes, dict) else []
        info.nvidia_runtime = "nvidia" in info.runtimes
        cdi = details.get("CDISpecDirs")
        info.cdi_spec_dirs = [str(d) for d in cdi] if isinstance(cdi, list) else []
        options = details.get("SecurityOptions")
        info.rootless = isinstance(options, list) and any(
            "name=rootless" in str(o) for o in options
        )
        info.root_dir = _str(details.get("DockerRootDir"))
        info.engine_cpus = _positive(details.get("NCPU"))
        info.engine_ram_bytes = _positive(details.get("MemTotal"))
    answers = (_("Docker {version} (API {api}) answers at {host} (rootless).") if info.rootless
               else _("Docker {version} (API {api}) answers at {host}."))
    info.message = answers.format(version=info.server_version or _("(version unknown)"),
                                  api=info.api_version or "?", host=host)
    return info


def _default_factory(env: Mapping[str, str]) -> DockerClientFactory:
    def make() -> Any:
        import docker  # lazy: the SDK costs ~100 ms to import

        return docker.from_env(timeout=DOCKER_TIMEOUT, environment=dict(env))

    return make


def _failed(info: DockerInfo, exc: BaseException, env: Mapping[str, str]) -> DockerInfo:
    """Turn an SDK failure into a status and a message that says what to do next."""
    cause = _os_error(exc)
    text = str(exc)
    docker_host = env.get("DOCKER_HOST")
    socket = _socket_path(info.host or _default_socket())
    if isinstance(cause, PermissionError) or "Permission denied" in text:
        info.status = "permission_denied"
        info.message = _(
            "permission denied on the Docker socket {socket}: add yourself to the "
            "docker group: sudo usermod -aG docker $USER, then log in again."
        ).format(socket=socket or info.host)
    elif _timed_out(exc, text):
        info.status = "error"
        info.message = _(
            "Docker at {host} did not answer within {seconds} s. Is the daemon "
            "busy or hung? Check with `docker info`."
        ).format(host=info.host, seconds=DOCKER_TIMEOUT)
    elif docker_host:
        info.status = "not_running"
        info.message = _(
            "DOCKER_HOST is set to {host}, but no Docker engine answers there "
            "({reason}). Start that engine, fix the address, or unset "
            "DOCKER_HOST to use the local socket."
        ).format(host=docker_host, reason=_reason(cause, text))
    elif isinstance(cause, (FileNotFoundError, ConnectionRefusedError)):
        if not _docker_installed(env):
            info.status = "not_installed"
            info.message = _(
                "Docker is not installed (no {socket} and no `docker` on PATH). Install "
                "Docker Engine: https://docs.docker.com/engine/install/"
            ).format(socket=socket)
        else:
            info.status = "not_running"
            if isinstance(cause, FileNotFoundError):
                not_running = _("the Docker daemon is not running ({socket} is missing). "
                                "Start it: sudo systemctl start docker")
            else:
                not_running = _("the Docker daemon is not running ({socket} refuses). "
                                "Start it: sudo systemctl start docker")
            info.message = not_running.format(socket=socket)
    else:
        info.status = "error"
        info.message = _("cannot talk to Docker at {host}: {reason}").format(
            host=info.host, reason=_reason(cause, text))
    return info


def _os_error(exc: BaseException) -> OSError | None:
    """The OSError at the bottom of the SDK's exception chain (docker -> requests -> urllib3)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno is not None:
            return current
        nested = [a for a in current.args if isinstance(a, BaseException)]
        current = current.__cause__ or current.__context__ or (nested[0] if nested else None)
    return None


def _timed_out(exc: BaseException, text: str) -> bool:
    return isinstance(_os_error(exc), TimeoutError) or "timed out" in text.lower()


def _reason(cause: OSError | None, text: str) -> str:
    if cause is not None and cause.strerror:
        return cause.strerror
    return text.splitlines()[0] if text else _("no reason given")


def _socket_path(host: str) -> str | None:
    return host.removeprefix("unix://") if host.startswith("unix://") else None


def _docker_installed(env: Mapping[str, str]) -> bool:
    path = env.get("PATH", "")
    return any(shutil.which(name, path=path) for name in ("docker", "dockerd"))


def _close(client: Any) -> None:
    close = getattr(client, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # closing a broken connection must not hide the result
            pass


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


def _positive(value: Any) -> int | None:
    """A count `docker info` gives (NCPU, MemTotal), None when absent or not a number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None
