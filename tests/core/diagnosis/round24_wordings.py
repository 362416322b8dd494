"""Round 24's wordings: the signatures written from the round's tuning misses, in the other
wordings of the same tools that the round's excerpts do not show.

Build: lld under its own name; clang's and gcc's words for stopping after too many errors;
GitHub's rate limit as its API and wget say it; an archive that is not one (bsdtar, GNU tar
with gzip); MSVC's internal compiler error in its two wordings; the shell's 127 for a
genrule or TensorFlow's API extraction; Bazel's words for a build that stops in its
repository mapping or toolchain resolution, and for a genrule's failed shell command.
Runtime: dyld's "Expected in:" a library of macOS itself (dyld 2's path, dyld 3/4's UUID
before it)."""

from __future__ import annotations

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    (["ImportError: dlopen(/v/lib/python3.9/site-packages/jaxlib/xla_extension.so, 0x0002): "
      "Symbol not found: __ZNSt3__117bad_function_callD1Ev",
      "  Referenced from: <7B6D1B0C-1E7A-3C2B-9D4E-0F1A2B3C4D5E> /v/lib/python3.9/site-"
      "packages/jaxlib/xla_extension.so",
      "  Expected in:     <8A3F2C1D-4B5E-3F6A-9B8C-7D6E5F4A3B2C> /usr/lib/libc++.1.dylib"],
     "import-macos-too-old"),
    (["ImportError: dlopen(/u/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so,"
      " 6): Symbol not found: _aligned_alloc",
      "  Referenced from: /u/site-packages/tensorflow/python/../libtensorflow_framework.2.dylib",
      "  Expected in: /usr/lib/libSystem.B.dylib"], "import-macos-too-old"),
]

#: (the id diagnosed first, lines) for a build's log
BUILD: list[tuple[str, list[str]]] = [
    ("link-error", ["lld: error: undefined symbol: hipModuleLaunchKernel"]),
    ("compile-error", ["a.cc:1:1: warning: unused", "fatal error: too many errors emitted, "
                       "stopping now [-ferror-limit=]"]),
    ("compile-error", ["compilation terminated due to -fmax-errors=5."]),
    ("compile-error", ["compilation terminated due to -Wfatal-errors."]),
    ("download-failed", ['{"message":"API rate limit exceeded for 203.0.113.7. (But here\'s '
                         'the good news: Authenticated requests get a higher rate limit.)"}']),
    ("download-failed", ["curl: (22) The requested URL returned error: 403 rate limit "
                         "exceeded"]),
    ("download-failed", ["gzip: stdin: not in gzip format",
                         "tar: Child returned status 1"]),
    ("download-failed", ["tar: This does not look like a tar archive"]),
    ("compiler-version-unsupported", [
        "external/eigen_archive/Eigen/src/Core/Product.h(97): fatal error C1001: Internal "
        "compiler error."]),
    ("python-not-on-path", [
        "ERROR: /src/tensorflow/core/BUILD:1:1: Executing genrule //tensorflow/core/util:"
        "version_info_gen failed: (Exit 127): bash failed: error executing command"]),
    ("build-failed", ["ERROR: Error computing the main repository mapping: no such package "
                      "'@python//': No platform declared for host OS linux on arch ppc64le"]),
    ("build-failed", ["ERROR: /w/app/BUILD:3:8: While resolving toolchains for target "
                      "//app:bin: No matching toolchains found for types "
                      "@io_bazel_rules_go//go:toolchain."]),
    ("build-failed", ["ERROR: /w/BUILD:9:8: error executing shell command: '/bin/bash -c "
                      "bazel-out/k8-opt/bin/gen --out $@' failed (Exit 1)"]),
]
#: ids the near misses below must not get
NOT_BUILD = {"link-error", "download-failed", "compiler-version-unsupported",
             "python-not-on-path"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # ld.lld's warning, and lld's name inside a path
    "ld.lld: warning: undefined symbol: foo",
    "/opt/rocm/llvm/bin/clang-lld: error: unable to execute command: Killed",
    # a rate limit that is not GitHub refusing a download (a registry's own wording)
    "toomanyrequests: You have reached your pull rate limit.",
    # tar listing an archive fine; gzip's other answer
    "tar: Removing leading `/' from member names",
    # MSVC's other fatal errors (C1083 is a missing include)
    "a.cc(3): fatal error C1083: Cannot open include file: 'x.h': No such file or directory",
    # a genrule that failed otherwise, or another action with the shell's 127
    "ERROR: /src/BUILD:1:1: Executing genrule //x:y failed: (Exit 1): bash failed",
]
