"""Round 9's signatures on wordings the corpus does not hold: other versions, tools,
quotes and prefixes of the same failures. Data only: the build lists run in
test_round7_build_signatures.py's tests, the runtime ones behind every prefix in
test_runtime_wordings_r7.py's, with the earlier rounds'.

Every line was written for these tests from the tools' own message formats (their sources,
as resources/knowledge/sources.toml cites them); none is copied from the corpus.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    ("bazel-outside-workspace", ["ERROR: The 'query' command is only supported from within "
                                 "a workspace (below a directory having a MODULE.bazel file)."]),
    ("bazel-under-qemu-emulation", ["FATAL: Failed to open Bazel as a zip file: (error: 22): "
                                    "Invalid argument"]),
    ("container-image-wrong-arch", [
        "WARNING: The requested image's platform (linux/arm64/v8) does not match the detected "
        "host platform (linux/amd64/v3) and no specific platform was requested"]),
    ("container-image-wrong-arch", ["standard_init_linux.go:228: exec user process caused: "
                                    "exec format error"]),
    ("container-image-wrong-arch", ["exec /usr/local/bin/bazel: exec format error"]),
    ("docker-gpu-driver", ["docker: Error response from daemon: unknown or invalid runtime "
                           "name: nvidia"]),
    ("configure-not-run", ["ERROR: Config value 'opt' is not defined in any .rc file"]),
    ("gcc-instead-of-clang", ["g++-12: error: unrecognized command-line option '-fobjc-arc'"]),
    ("xcode-not-found", ['xcrun: error: SDK "iphoneos17.0" cannot be located']),
    ("xcode-not-found", ["xcrun: error: unable to lookup item 'PlatformPath' in SDK "
                         "'macosx14.2'"]),
    ("compiler-version-unsupported", ["cc1: error: invalid feature modifier in "
                                      "'-march=armv8.6-a+i8mm+bf16'"]),
    ("compiler-version-unsupported", ["clang: error: the clang compiler does not support "
                                      "'-march=armv9-a+sve2'"]),
    ("compiler-version-unsupported", ["/bin/sh: 1: gcc-13: not found"]),
    ("compiler-version-unsupported", ["bash: g++-11: command not found"]),
    ("remote-unavailable", ["ERROR: /w/core/BUILD:3:1: Compiling core/a.cc failed: Unexpected "
                            "IO error.: Connect to cache.lan:8080 [cache.lan/10.0.0.5] failed: "
                            "Connection refused"]),
    ("remote-deadline-exceeded", ["ERROR: /w/core/BUILD:3:1: Linking core/liba.so failed: "
                                  "Unexpected IO error.: Exhausted retry attempts (5)"]),
    # a Bazel of another version: the Starlark interpreter's own words
    ("bazel-version-mismatch", ["ERROR: /src/third_party/py/python_repo.bzl:20:9: name "
                                "'PyRuntimeInfo' is not defined"]),
    ("bazel-version-mismatch", ["2025/02/02 10:00:00 could not download Bazel: HTTP GET "
                                "https://releases.bazel.build/8.1.0rc1/release/bazel-8.1.0rc1-"
                                "linux-arm64 failed with error 404"]),
]

#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    "WARNING: Config value 'opt' is not defined in any .rc file",  # an old Bazel's warning
    # a 404 for a plain release is a mirror's or proxy's, not the version's
    "2025/02/02 10:00:00 could not download Bazel: HTTP GET https://releases.bazel.build/"
    "7.4.1/release/bazel-7.4.1-linux-arm64 failed with error 404",
    "/bin/sh: 1: clang-17: not found",  # clang: clang-lld-missing's business, not gcc's age
    "NameError: name 'tf_version' is not defined",  # Python, in configure.py
    "Error: 'struct' value has no field or method 'hdrs'",  # a macro's own struct
    "The requested image's platform matches",
]
NOT_BUILD = {"configure-not-run", "bazel-version-mismatch", "compiler-version-unsupported",
             "container-image-wrong-arch"}

#: (lines, the id diagnosed first)
RUNTIME = [
    (["E0000 00:00:1700000000.000000 12 cuda_driver.cc:152] failed call to cuInit: "
      "CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized"], "fabric-manager-not-running"),
    (["RuntimeError: CUDA error: system not yet initialized"], "fabric-manager-not-running"),
    (["node7:2211:2290 [3] include/shm.h:48 NCCL WARN Error while creating shared memory "
      "segment /dev/shm/nccl-Xy12Ab (size 4194304)"], "container-shm-too-small"),
    (["    [[ CUDA Driver UNAVAILABLE (cuInit(0) returned 804) ]]"], "compat-not-supported"),
    (["error: Distribution `tensorflow==2.15.1 @ registry+https://pypi.org/simple` can't be "
      "installed because it doesn't have a source distribution or wheel for the current "
      "platform"], "no-wheel-for-python"),
    (["hint: You're using CPython 3.14 (`cp314`), but `tensorflow` (v2.20.0) only has wheels "
      "with the following Python ABI tags: `cp39`, `cp310`, `cp311`, `cp312`, `cp313`"],
     "no-wheel-for-python"),
]
