"""Lines for round 14's signatures in wordings no corpus excerpt holds: other Docker
versions, clients and registries, other shells and CUDA APIs of the same failures, each
written from the tool's message format as resources/knowledge/sources.toml cites it. The
build and runtime wording tests run them with the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # the docker CLI before 1.13
    ("docker-daemon-unreachable", ["Cannot connect to the Docker daemon. Is the docker daemon "
                                   "running on this host?"]),
    # Docker Desktop's CLI on Windows with the engine stopped
    ("docker-daemon-unreachable", [
        "error during connect: Get \"http://%2F%2F.%2Fpipe%2Fdocker_engine/v1.24/version\": "
        "open //./pipe/docker_engine: The system cannot find the file specified."]),
    # docker-py (tfwizard's own client library) with no socket
    ("docker-daemon-unreachable", [
        "docker.errors.DockerException: Error while fetching server API version: ('Connection "
        "aborted.', FileNotFoundError(2, 'No such file or directory'))"]),
    # Docker 28's words, and docker-py's
    ("docker-socket-permission-denied", [
        "permission denied while trying to connect to the docker API at "
        "unix:///var/run/docker.sock"]),
    ("docker-socket-permission-denied", [
        "docker.errors.DockerException: Error while fetching server API version: ('Connection "
        "aborted.', PermissionError(13, 'Permission denied'))"]),
    # Docker Hub's newer wording, and another registry's code through BuildKit
    ("docker-pull-rate-limited", [
        "Error response from daemon: toomanyrequests: You have reached your unauthenticated "
        "pull rate limit. https://www.docker.com/increase-rate-limit"]),
    ("docker-pull-rate-limited", [
        "ERROR: failed to solve: nvidia/cuda:12.3.2-base-ubuntu22.04: failed to resolve source "
        "metadata for docker.io/nvidia/cuda:12.3.2-base-ubuntu22.04: failed to authorize: "
        "failed to fetch oauth token: unexpected status from GET request to "
        "https://auth.docker.io/token?scope=repository%3Anvidia%2Fcuda%3Apull: 429 Too Many "
        "Requests: toomanyrequests: too many failed login attempts"]),
    # Docker Hub's answer for a base image that is not on it
    ("base-image-tag-missing", [
        "Error response from daemon: pull access denied for tf-base, repository does not exist "
        "or may require 'docker login': denied: requested access to the resource is denied"]),
    # the registry's message alone, as Docker 20.10's API gives it to docker-py (tfwizard's
    # line after a refused pull)
    ("base-image-tag-missing", ["The build image 127.0.0.1:5000/tf/x:1 is not on this machine "
                                "and cannot be pulled: manifest unknown"]),
    # a shell in the wheel step without patchelf
    ("patchelf-missing", ["/bin/sh: 1: patchelf: not found"]),
    # Bazel's remote cache upload, with --verbose_failures
    ("remote-cache-unusable", ["DEBUG: Upload to remote cache failed: 403 Forbidden"]),
    # xcode-select's error on another Xcode path
    ("xcode-not-found", ["xcode-select: error: no developer tools were found at "
                         "'/Applications/Xcode-beta.app', and no install could be requested"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"docker-daemon-unreachable", "docker-socket-permission-denied",
             "docker-pull-rate-limited", "patchelf-missing", "download-failed"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a permission refused on another file
    "mkdir: cannot create directory '/var/run/docker': Permission denied",
    # a tool that names patchelf without failing
    "Requirement already satisfied: patchelf in /usr/local/lib/python3.11/site-packages",
    # pip's own throttling words are not a registry's code
    "WARNING: Retrying (Retry(total=4)) after connection broken by 'ReadTimeoutError': too many",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    # the runtime API's name of the same error (CuPy, PyTorch)
    (["cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorLaunchTimeout: the launch "
      "timed out and was terminated"], "cuda-launch-timeout"),
    # jax's warning through Python's logging, with a timestamp
    (["WARNING:2026-01-02 03:04:05,678:jax._src.xla_bridge:969: An NVIDIA GPU may be present "
      "on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu."],
     "jaxlib-without-cuda"),
    # protobuf's check for a runtime older than the gencode of the same major version
    (["google.protobuf.runtime_version.VersionError: Detected incompatible Protobuf "
      "Gencode/Runtime versions when loading tensorflow/core/framework/tensor.proto: gencode "
      "5.28.3 runtime 5.26.1. Runtime version cannot be older than the linked gencode "
      "version. See Protobuf version guarantees at "
      "https://protobuf.dev/support/cross-version-runtime-guarantee."],
     "protobuf-runtime-older-than-gencode"),
    # NVIDIA's cuda-python loading the driver's library
    (["RuntimeError: Failed to dlopen libcuda.so.1"], "libcuda-not-found"),
]
