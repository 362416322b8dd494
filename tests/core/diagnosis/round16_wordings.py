"""Lines for round 16's signatures in wordings no corpus excerpt holds: other gcc
releases, JDKs, Windows shells, CUDA and ROCm paths of the same failures, each written from
the tool's message format as resources/knowledge/sources.toml cites it. The build and
runtime wording tests run them with the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # older gcc, a versioned driver
    ("gcc-cc1plus-missing", ["gcc-11: error trying to exec 'cc1plus': execvp: No such file or "
                             "directory"]),
    # JDK 17's strong encapsulation under a distribution's Bazel
    ("bazel-jdk-too-new", [
        "FATAL: bazel crashed due to an internal error. Printing stack trace:",
        "java.lang.reflect.InaccessibleObjectException: Unable to make field private final "
        "byte[] java.lang.String.value accessible: module java.base does not \"opens "
        "java.lang\" to unnamed module @1b6d3586"]),
    # rules_jvm_external's and the sh toolchain's words
    ("bazel-sh-not-set", ["Error in fail: Please set the BAZEL_SH environment variable to the "
                          "path of MSYS2 bash. This is typically `c:\\msys64\\usr\\bin\\bash.exe`."]),
    ("bazel-sh-not-set", ["Error in fail: No suitable shell toolchain found:"]),
    # another CUDA 11 name in an older toolkit
    ("cuda-toolkit-too-old", ['/src/gemm.cu(42): error: identifier "CUBLAS_COMPUTE_32F" is '
                              "undefined"]),
    # ROCm's versioned folder
    ("rocm-config-failed", ["/bin/sh: 1: /opt/rocm-5.7.0/bin/hipcc: not found"]),
    # another template variable of cc_configure
    ("bazel-version-mismatch", ["ERROR: Toolchain identifier '%{toolchain_identifier}' is "
                                "illegal (does not match '[a-zA-Z_][\\.\\- \\w]*')"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"gcc-cc1plus-missing", "bazel-jdk-too-new", "bazel-sh-not-set"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # the JVM's error in a program Bazel runs, not Bazel's crash
    "Exception in thread \"main\" java.lang.ExceptionInInitializerError",
    "INFO: Found applicable config definition build:windows in file /w/.bazelrc: "
    "--action_env=BAZEL_SH",
    "echo @echo off > run.bat",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    # a custom op built with the other C++ ABI
    (["tensorflow.python.framework.errors_impl.NotFoundError: /w/zero_out.so: undefined "
      "symbol: _ZN10tensorflow8internal21CheckOpMessageBuilder9NewStringB5cxx11Ev"],
     "tf-addon-abi-mismatch"),
]
