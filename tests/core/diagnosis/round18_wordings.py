"""Lines for round 18's signatures and widenings in wordings no corpus excerpt holds: other
shells and Java's words for a missing patch program, another hermetic requirement, the
other ways Bazel on Windows says it has no bash or no MSVC, pip's other steps on the
tensorflow-gpu placeholder, each written from the tool's message format as
resources/knowledge/sources.toml cites it. The build and runtime wording tests run them with
the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # dash's words in a Debian container, and Java's when Bazel starts the program
    ("patch-command-missing", ["Error in fail: Error applying patch //third_party:zlib.patch:",
                               "/bin/sh: 1: patch: not found"]),
    ("patch-command-missing", ["java.io.IOException: Cannot run program \"patch\" (in "
                               "directory \"/root/.cache/bazel/external/zlib\"): error=2, "
                               "No such file or directory"]),
    # TensorFlow 1.x's own patch step on Linux with no patch installed
    ("patch-command-missing", [
        "Non-zero return code(127) when executing 'patch -p1 -d /w/external/eigen_archive "
        "-i /w/third_party/eigen.patch':",
        "Stderr: /bin/bash: patch: command not found"]),
    # another requirement of the hermetic Python
    ("hermetic-python-requirement-build-failed", [
        "ERROR: An error occurred during the fetch of repository 'pypi_h5py':"]),
    # the client's log line alone; an action's bash on a machine without MSYS2
    ("bazel-sh-not-set", ["[bazel ERROR src/main/cpp/blaze_util_windows.cc:1453] bash.exe "
                          "not found on PATH"]),
    ("bazel-sh-not-set", ["ERROR: C:/w/BUILD:3:8: Executing genrule //:gen failed: "
                          "(Exit -1): bash.exe failed: error executing command"]),
    # the arm64 variant of the missing-MSVC script, and its environment
    ("msvc-build-tools-not-found", [
        "ERROR: C:/w/BUILD:1:10: Compiling main.cc failed: (Exit 1): "
        "vc_installation_error_arm64.bat failed: error executing command"]),
    ("msvc-build-tools-not-found", ["    SET LIB=msvc_not_found"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"patch-command-missing", "hermetic-python-requirement-build-failed",
             "bazel-sh-not-set", "msvc-build-tools-not-found"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a patch that did not apply: the program ran
    "Non-zero return code(256) when executing 'patch -p1 -d /w/external/x -i /w/x.patch':",
    "Stderr: patching file src/x.cc",
    "Hunk #1 FAILED at 10.",
    # a fetch of another repository
    "ERROR: An error occurred during the fetch of repository 'local_config_cuda':",
    # a command that failed on its own, with its status
    "ERROR: C:/w/BUILD:3:8: Executing genrule //:gen failed: (Exit 1): bash.exe failed: "
    "error executing command",
    "    SET INCLUDE=C:\\BuildTools\\VC\\Tools\\MSVC\\14.29.30133\\include",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    # pip on the nightly placeholder, and the install step of an older pip
    (["  Downloading tf_nightly_gpu-2.12.0.tar.gz (2.6 kB)"], "tensorflow-gpu-package-removed"),
    (["  Running setup.py install for tensorflow-gpu ... error"],
     "tensorflow-gpu-package-removed"),
]
