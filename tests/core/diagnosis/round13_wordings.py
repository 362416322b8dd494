"""Lines for round 13's signatures in wordings no corpus excerpt holds: other Bazel
releases, tools, paths and prefixes of the same failures, each written from the tool's
message format as resources/knowledge/sources.toml cites it. The build and runtime wording
tests run them with the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # Bazel 6 on another platform constraint of bazel_tools
    ("bazel-version-mismatch", [
        "ERROR: /o/external/bazel_tools/platforms/BUILD:50:6: in alias rule "
        "@bazel_tools//platforms:x86_64: Constraints from @bazel_tools//platforms have been "
        "removed. Please use constraints from @platforms repository embedded in Bazel, or "
        "preferably declare dependency on https://github.com/bazelbuild/platforms."]),
    # Bazel 8 with WORKSPACE off, behind Buildkite's time prefix
    ("bazel-version-mismatch", [
        "(10:01:02) ERROR: error loading package 'external': Both --enable_bzlmod and "
        "--enable_workspace are disabled, but one of them must be enabled to fetch external "
        "dependencies."]),
    # Bazel 9 on another removed rule
    ("bazel-version-mismatch", [
        '\tFile "/virtual_builtins_bzl/bazel/exports.bzl", line 40, column 9, in '
        "_removed_rule_failure",
        "Error in fail: ",
        "         This rule has been removed from Bazel. Please add a `load()` statement for "
        "it."]),
    # lld-link's undefined symbol from another object
    ("link-error", ["lld-link: error: <root>: undefined symbol: TF_NewStatus"]),
    # Bazel 7's canonical name of the ROCm configuration repository
    ("rocm-config-failed", ["ERROR: An error occurred during the fetch of repository "
                            "'@@local_config_rocm':"]),
    # Bazelisk's other channels
    ("bazelisk-download-failed", [
        "2025/01/01 00:00:00 could not download Bazel: could not resolve the version "
        "'latest-9' to an actual version number: cannot resolve version \"latest-9\": there "
        "are not enough matching Bazel releases (8)"]),
    # Podman's CDI on another stale device
    ("docker-gpu-driver", ["Error: setting up CDI devices: failed to inject devices: failed to "
                           "stat CDI host device \"/dev/nvidia3\": no such file or directory"]),
    # another LLVM tool of a downloaded toolchain
    ("prebuilt-clang-libtinfo-missing", [
        "external/toolchains_llvm~~llvm~llvm_toolchain_llvm/bin/ld.lld: error while loading "
        "shared libraries: libtinfo.so.5: cannot open shared object file: No such file or "
        "directory"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"bazel-version-mismatch", "rocm-config-failed", "prebuilt-clang-libtinfo-missing",
             "bazelisk-download-failed"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    "INFO: Repository local_config_rocm instantiated at:",
    # another library a prebuilt tool lacks is not this one
    "clang: error while loading shared libraries: libz3.so.4: cannot open shared object file",
    # Bazelisk that cannot list the releases (the network's failure, not the version's)
    "2025/01/01 00:00:00 could not download Bazel: could not resolve the version 'latest' to "
    "an actual version number: could not list Bazel versions in GCS bucket: i/o timeout",
    "DEBUG: Rule 'rules_cc' indicated that a canonical reproducible form can be obtained",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    (["#3  0x00007f00 in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () "
      "from /usr/lib/x86_64-linux-gnu/libnccl.so.2"], "container-shm-too-small"),
    (["root@c0ffee:/# nvidia-smi", "Failed to initialize NVML: Unknown Error"],
     "container-lost-gpu-after-systemd-reload"),
]
