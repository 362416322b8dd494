"""Lines for round 15's signatures in wordings no corpus excerpt holds: other registries,
Bazel releases, remote caches and pip requirements of the same failures, each written from
the tool's message format as resources/knowledge/sources.toml cites it. The build and
runtime wording tests run them with the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # the registry's codes through docker and BuildKit
    ("registry-access-denied", ["Error response from daemon: Head "
                                "\"https://nvcr.io/v2/nvidia/tensorflow/manifests/24.01-tf2-py3\": "
                                "unauthorized: authentication required"]),
    ("registry-access-denied", [
        "ERROR: failed to solve: failed to fetch oauth token: unexpected status from POST "
        "request to https://ghcr.io/token: 403 Forbidden"]),
    ("registry-access-denied", ["denied: requested access to the resource is denied"]),
    # configure's crash behind ccache's clang, with Bazel's time prefix-free traceback
    ("configure-clang-version-unknown", [
        "WARNING: current clang installation is not a release version.",
        '  File "/src/tensorflow/configure.py", line 901, in disable_clang16_offsetof_extension',
        "AttributeError: 'NoneType' object has no attribute 'split'"]),
    # Bazel 7's words for an evicted input, and Bazel 6's with its missing local file
    ("remote-cache-evicted", [
        "(08:53:51) ERROR: /src/BUILD.bazel:43:8: GoCompilePkg x.a failed: Failed to fetch "
        "blobs because they do not exist remotely.: Missing digest: a72f/139666 for "
        "bazel-out/k8-fastbuild/bin/x.a"]),
    ("remote-cache-evicted", [
        "ERROR: /src/BUILD:1:10: Linking app failed: (Exit 34): 3 errors during bulk transfer:",
        "java.io.FileNotFoundException: /root/.cache/bazel/_bazel_root/1/execroot/w/bazel-out/"
        "k8-opt/bin/a.o (No such file or directory)"]),
    # a Bazel of the rules_cc era on another missing @bazel_tools symbol
    ("bazel-version-mismatch", [
        "Error: file '@bazel_tools//tools/cpp:toolchain_utils.bzl' does not contain symbol "
        "'use_cc_toolchain'"]),
    # JGit on a commit
    ("git-ref-not-found", ["ERROR: no such package '@x//': Invalid branch, tag, or commit: Ref "
                           "0123abcd can not be resolved"]),
    # a Bazel action the service broke off
    ("remote-unavailable", ["ERROR: /w/BUILD:2:8: Compiling a.cc failed (Exit 34). Note: Remote "
                            "connection/protocol failed with: execution failed"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"registry-access-denied", "remote-cache-evicted", "configure-clang-version-unknown"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # Python's and HTTP's own capitalised words are not a registry's code
    "PermissionError: [Errno 13] Permission denied: '/var/run/docker.sock'",
    "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://x/y",
    # a bulk transfer that failed for the network, not for a missing local file
    "ERROR: /w/BUILD:1:10: Linking app failed: (Exit 34): 1 errors during bulk transfer:",
    # configure's warning alone, where configure went on
    "WARNING: current clang installation is not a release version.",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    # NVIDIA's +nv builds, and a PyTorch-style local label, through pip
    (["ERROR: Could not find a version that satisfies the requirement "
      "nvidia-tensorflow[horovod]==1.15.5+nv22.12 (from versions: none)",
      "ERROR: No matching distribution found for nvidia-tensorflow[horovod]==1.15.5+nv22.12"],
     "wheel-not-on-index"),
    # tensorflow-io's plugins library
    (["NotImplementedError: unable to open file: libtensorflow_io_plugins.so, from paths: "
      "['/usr/lib/python3/dist-packages/tensorflow_io/python/ops/libtensorflow_io_plugins.so']"],
     "tf-addon-abi-mismatch"),
]
