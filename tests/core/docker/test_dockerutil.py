"""dockerutil: engine errors become advice; the multiplexed stream is cut into frames."""

from __future__ import annotations

import pytest

from tfwizard.core.docker import client as dockerutil
from tfwizard.core.errors import DockerUnavailable


def test_unreachable_engine_says_what_to_do():
    with pytest.raises(DockerUnavailable) as err:
        dockerutil.connect({"DOCKER_HOST": "unix:///nonexistent/docker.sock"}, timeout=2)
    assert "systemctl start docker" in str(err.value) and "DOCKER_HOST" in str(err.value)


def test_permission_denied_gets_docker_group_advice():
    import docker.errors

    exc = docker.errors.DockerException("Error while fetching server API version: "
                                        "('Connection aborted.', PermissionError(13, "
                                        "'Permission denied'))")
    translated = dockerutil.translate(exc, "connecting to Docker")
    assert isinstance(translated, DockerUnavailable)
    assert "docker group" in str(translated)


def test_gpu_runtime_missing_is_explained():
    import docker.errors

    exc = docker.errors.APIError("500", explanation='could not select device driver "" with '
                                 "capabilities: [[gpu]]")
    assert "NVIDIA Container Toolkit" in str(dockerutil.translate(exc, "starting"))


def test_a_vanished_default_bridge_says_restart_docker():
    import docker.errors

    # verbatim from this project's CI, after a second dockerd started with --bridge none
    exc = docker.errors.APIError("500", explanation=(
        "failed to create endpoint tfwizard-test-own-9297d192-61001-warm on network bridge: "
        "adding interface veth275c29d to bridge docker0 failed: could not find bridge "
        "docker0: route ip+net: no such network interface"))
    translated = dockerutil.translate(exc, "starting the build container")
    assert isinstance(translated, DockerUnavailable)
    assert "Restart the Docker daemon" in translated.hint
    assert "--bridge none" in translated.hint


def test_frames_are_cut_from_big_reads():
    import struct

    def frame(stream, data):
        return struct.pack(">BxxxL", stream, len(data)) + data

    wire = frame(1, b"out\n") + frame(2, b"err\n") + frame(1, b"x" * 100)
    chunks = [wire[:3], wire[3:17], wire[17:], b""]

    class Sock:
        def recv(self, n):
            return chunks.pop(0)

    batches = list(dockerutil.read_frames(Sock()))
    assert [f for b in batches for f in b] == [(1, b"out\n"), (2, b"err\n"), (1, b"x" * 100)]


def test_only_the_engines_missing_init_words_mean_no_init():
    """Issue 15 item 9: the retry without init took any engine error containing "init"."""
    import docker.errors
    import requests

    def api_error(text):
        response = requests.Response()
        response.status_code = 500
        return docker.errors.APIError("500 Server Error", response=response, explanation=text)

    # Docker 28's words (seen from a real dockerd with --init-path pointing nowhere)
    real = api_error('failed to create shim task: OCI runtime create failed: runc create '
                     'failed: unable to start container process: error during container init: '
                     'error mounting "/run/x/docker-init" to rootfs at "/sbin/docker-init": '
                     'stat /run/x/docker-init: no such file or directory: unknown')
    assert dockerutil.missing_init(real)
    translated = dockerutil.translate(real, "starting the build container")
    try:
        raise translated from real
    except Exception as exc:  # noqa: BLE001 - the runner sees the translated error
        assert dockerutil.missing_init(exc)
    assert dockerutil.missing_init(
        docker.errors.InvalidVersion("init param is not supported for API version < 1.25"))
    for other in ("error during container init: mkdir /x: permission denied",
                  "initialization failed", "OCI runtime create failed: init: no such process"):
        assert not dockerutil.missing_init(api_error(other)), other


@pytest.mark.parametrize(("output", "free"), [
    # GNU coreutils, BusyBox and a df that puts a long device name on a line of its own
    ("Filesystem     1024-blocks     Used Available Capacity Mounted on\n"
     "overlay          102687672 61234567  36187040      63% /\n", 36187040 * 1024),
    ("Filesystem           1024-blocks    Used Available Capacity Mounted on\n"
     "overlay                 20961280  4183040  16778240  20% /\n", 16778240 * 1024),
    ("Filesystem 1024-blocks Used Available Capacity Mounted on\n"
     "/dev/mapper/vg0-docker--data--root--volume\n"
     "                 515928320 90123456 399574528      19% /\n", 399574528 * 1024),
    ("df: unrecognized option: P\n", None),
    ("", None),
])
def test_df_s_available_blocks_are_the_free_bytes(output, free):
    from tfwizard.core.docker.imagefacts import df_available

    assert df_available(output) == free
