"""Round 19's widenings in wordings no excerpt holds (a header by an absolute path, a bind
of Bazel's own tools, the driver's JIT on another PTX ISA), for the wording tests."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    ("bazel-undeclared-inclusion", [
        "ERROR: /w/external/zlib/BUILD.bazel:9:11: Compiling adler32.c failed: absolute path "
        "inclusion(s) found in rule '@@zlib//:zlib':"]),
    ("bazel-version-mismatch", [
        "ERROR: /root/.cache/bazel/_bazel_root/1/external/bazel_tools/tools/jdk/BUILD:12:1: "
        "no such target '//external:jdk-default': target 'jdk-default' not declared in "
        "package 'external'"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"bazel-version-mismatch"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a bind the source's own BUILD file names: the source's WORKSPACE, not the Bazel
    "ERROR: /w/tensorflow/core/BUILD:12:1: no such target '//external:zlib': target 'zlib' "
    "not declared in package 'external'",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    (["ptxas application ptx input, line 12; fatal   : Unsupported .version 8.4; current "
      "version is '8.0'"], "unsupported-ptx-version"),
]
