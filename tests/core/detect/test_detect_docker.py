"""Docker detection: fake SDK clients and failures, plus the real SDK against bad hosts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import docker.errors
import pytest

from tfwizard.core.detect.docker_probe import probe_docker
from tfwizard.core.host import DockerInfo, HostProfile


class FakeClient:
    def __init__(self, version: dict, info: dict) -> None:
        self._version, self._info = version, info
        self.closed = False

    def version(self) -> dict:
        return self._version

    def info(self) -> dict:
        return self._info

    def close(self) -> None:
        self.closed = True


def _sdk_error(cause: OSError) -> docker.errors.DockerException:
    """A DockerException chained the way docker -> requests -> urllib3 chain a socket error."""
    try:
        try:
            raise cause
        except OSError as exc:
            raise docker.errors.DockerException(
                f"Error while fetching server API version: ('Connection aborted.', {cause!r})"
            ) from exc
    except docker.errors.DockerException as exc:
        return exc


def _failing(exc: BaseException):
    def factory():
        raise exc

    return factory


def _probe(env: dict, factory) -> DockerInfo:
    info = probe_docker(env=env, client_factory=factory)
    profile = HostProfile(docker=info)
    assert HostProfile.from_json(profile.to_json()) == profile
    return info


def test_ok_with_nvidia_runtime_cdi_and_rootless() -> None:
    client = FakeClient(
        {"Version": "27.3.1", "ApiVersion": "1.47"},
        {
            "Runtimes": {"runc": {"path": "runc"}, "nvidia": {"path": "nvidia-container-runtime"}},
            "CDISpecDirs": ["/etc/cdi", "/var/run/cdi"],
            "SecurityOptions": ["name=seccomp,profile=builtin", "name=rootless", "name=cgroupns"],
        },
    )
    info = _probe({"DOCKER_HOST": "unix:///run/user/1000/docker.sock"}, lambda: client)
    assert (info.status, info.server_version, info.api_version) == ("ok", "27.3.1", "1.47")
    assert info.runtimes == ["nvidia", "runc"] and info.nvidia_runtime is True
    assert info.cdi_spec_dirs == ["/etc/cdi", "/var/run/cdi"]
    assert info.rootless is True and info.host == "unix:///run/user/1000/docker.sock"
    assert client.closed


def test_old_engine_without_cdi_field() -> None:
    client = FakeClient(
        {"Version": "20.10.24", "ApiVersion": "1.41"},
        {"Runtimes": {"runc": {}}, "SecurityOptions": ["name=seccomp,profile=default"]},
    )
    info = _probe({}, lambda: client)
    assert (info.nvidia_runtime, info.cdi_spec_dirs, info.rootless) == (False, [], False)


def test_sdk_not_installed() -> None:
    info = _probe({}, _failing(ImportError("No module named 'docker'")))
    assert info.status == "error" and "pip install" in info.message


def test_permission_denied_advises_docker_group() -> None:
    info = _probe({}, _failing(_sdk_error(PermissionError(13, "Permission denied"))))
    assert info.status == "permission_denied"
    assert "sudo usermod -aG docker $USER, then log in again" in info.message


def test_socket_missing_advises_starting_the_daemon(tmp_path: Path) -> None:
    (tmp_path / "docker").write_text("#!/bin/sh\n")
    (tmp_path / "docker").chmod(0o755)
    env = {"PATH": str(tmp_path)}
    info = _probe(env, _failing(_sdk_error(FileNotFoundError(2, "No such file or directory"))))
    assert info.status == "not_running"
    assert "Start it: sudo systemctl start docker" in info.message


def test_socket_missing_and_no_docker_binary_is_not_installed(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    info = _probe(env, _failing(_sdk_error(FileNotFoundError(2, "No such file or directory"))))
    assert info.status == "not_installed" and "docs.docker.com" in info.message


def test_timeout_and_unknown_errors() -> None:
    info = _probe({}, _failing(docker.errors.DockerException("Read timed out. (read timeout=2)")))
    assert info.status == "error" and "did not answer" in info.message
    info = _probe({}, _failing(RuntimeError("something odd")))
    assert info.status == "error" and "something odd" in info.message


@pytest.mark.parametrize("host", ["unix:///nonexistent/docker.sock", "tcp://127.0.0.1:1"])
def test_real_sdk_docker_host_unreachable(host: str) -> None:
    info = _probe({"DOCKER_HOST": host, "PATH": ""}, None)
    assert info.status == "not_running"
    assert f"DOCKER_HOST is set to {host}" in info.message and "unset DOCKER_HOST" in info.message


@pytest.mark.docker
@pytest.mark.skipif(shutil.which("docker") is None, reason="no Docker on this machine")
def test_real_engine() -> None:
    info = probe_docker(env=dict(os.environ))
    assert info.status == "ok", info.message
    assert info.server_version and info.api_version and "runc" in info.runtimes
