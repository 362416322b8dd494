"""Lines for round 12's signatures, in wordings no corpus excerpt holds (other versions,
paths, tools and prefixes), each written from the tool's message format as
resources/knowledge/sources.toml cites it. The build and runtime wording tests run them with
the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # Bazel 0.3.0's Starlark on another rule of a .bzl file
    ("bazel-version-mismatch", [
        "expected ConfigurationTransition or NoneType for 'cfg' while calling attr.label "
        "but got string instead: data."]),
    # Bazel 0.1.0 without its built-in java tools, asked for another of them
    ("bazel-version-mismatch", [
        "ERROR: Loading of target '//tools/jdk:ijar' failed; build aborted: no such package "
        "'tools/jdk': BUILD file not found on package path."]),
    # a newer Bazel on another repository's crosstool
    ("bazel-version-mismatch", [
        "ERROR: The specified --crosstool_top '@local_config_sycl//crosstool:toolchain' is "
        "not a valid cc_toolchain_suite rule."]),
    ("bazel-version-mismatch", [
        "ERROR: /x/external/local_config_cc/BUILD:50:1: in cc_toolchain rule "
        "@local_config_cc//:cc-compiler-k8: attributes 'cpu' and 'compiler' have been "
        "deprecated, please remove them."]),
    # an old Bazel given a newer tool's options
    ("bazel-version-mismatch", ["ERROR: Unrecognized option: --output=jsonproto"]),
    # Bazel's checksum line cut by a terminal after the first hash (sha256 and a shorter one)
    ("download-checksum-mismatch", [
        "java.io.IOException: Error downloading [https://mirror.bazel.build/x.tar.gz] to /o/"
        "x.tar.gz: Checksum was 0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab"
        "cdef bu", "t wanted 1111"]),
    # the JDK's words for a proxy that wants credentials, fetching a repository
    ("download-failed", [
        "ERROR: An error occurred during the fetch of repository 'rules_cc': "
        "java.io.IOException: Unable to tunnel through proxy. Proxy returns \"HTTP/1.0 407 "
        "Proxy Authentication Required\""]),
    # the same exception in the fetch's error (every URL failed)
    ("download-failed", [
        "ERROR: An error occurred during the fetch of repository 'x': java.io.IOException: "
        "Error downloading [https://mirror.bazel.build/x.zip] to /o/x.zip: "
        "java.net.UnknownHostException: mirror.bazel.build"]),
    # MSVC's link through Bazel with another LNK code; ld on a broken archive
    ("link-error", [
        "ERROR: C:/src/tensorflow/python/BUILD:12:10: Linking of rule '//tensorflow/python:"
        "_pywrap_tensorflow_internal.so' failed (Exit 1120): link.exe failed: error executing "
        "command"]),
    ("link-error", ["/usr/lib/x86_64-linux-gnu/libnccl_static.a: file not recognized: "
                    "file format not recognized"]),
    # gcc exit status 4 in Bazel 5's format
    ("oom-compiler-killed", [
        "ERROR: /w/tensorflow/core/kernels/BUILD:3300:18: Compiling tensorflow/core/kernels/"
        "cwise_op_add.cc failed: (Exit 4): gcc failed: error executing command /usr/bin/gcc "
        "-U_FORTIFY_SOURCE -fstack-protector -Wall"]),
    # Homebrew's g++ given Apple clang's options
    ("gcc-instead-of-clang", ["g++-13: error: unrecognized command-line option "
                              "'-fapplication-extension'"]),
    # the traceback of python_configure in the old and new remote_config layout
    ("python-not-on-path", ['  File "/r/external/org_tensorflow/third_party/remote_config/'
                            'common.bzl", line 44, in get_python_bin',
                            '\t\twhich(repository_ctx, "python3")']),
    # clang 14 on GCC 14's headers
    ("compiler-version-unsupported", [
        "/usr/include/c++/14/bits/stl_algobase.h:1012:14: error: use of undeclared identifier "
        "'__builtin_clzg'"]),
    # autoconf in another CUDA dependency
    ("cuda-config-not-found", ["checking for nvcc... no"]),
    # an indented tail of a wrapper's output
    ("build-failed", ["    FAILED: Build did NOT complete successfully (3 packages loaded)"]),
    # new signatures, in other tools' and versions' words
    ("bazel-output-root-not-writable", [
        "FATAL: mkdir('/home/u/.cache/bazel/_bazel_u'): (error: 13): Permission denied"]),
    ("bazel-output-root-not-writable", [
        "FATAL: Output user root directory '/mnt/ro/bazel' must be readable and writable."]),
    ("bazel-meminfo-duplicate-entries", [
        "Server terminated abruptly (error code: 14, error message: 'Socket closed', log "
        "file: '/h/.cache/bazel/_bazel_h/0/server/jvm.out')",
        "java.lang.IllegalArgumentException: Multiple entries with same key: Writeback=0 and "
        "Writeback=0",
        "\tat com.google.devtools.build.lib.unix.ProcMeminfoParser.<init>(ProcMeminfo"
        "Parser.java:68)"]),
    ("pkgmgr-compiler-wrapper-in-bazel", [
        "Spack compiler must be run from Spack! Input 'SPACK_ENV_PATH' is missing."]),
    ("pkgmgr-compiler-wrapper-in-bazel", [
        "/opt/homebrew/Library/Homebrew/shims/super/cc:530:in `exec': No such file or "
        "directory - /opt/homebrew/Library/Homebrew/shims/super/clang++ (Errno::ENOENT)"]),
    ("setup-py-not-in-source-root", [
        "/usr/bin/python3.11: can't open file '/var/tmp/portage/tensorflow-2.15.0/work/"
        "setup.py': [Errno 2] No such file or directory"]),
    ("base-image-tag-missing", [
        "Error response from daemon: manifest for nvidia/cuda:11.0-cudnn8-devel-ubuntu18.04 "
        "not found: manifest unknown: manifest unknown"]),
    ("base-image-tag-missing", [
        "ERROR: failed to solve: tensorflow/tensorflow:2.99.0-gpu: docker.io/tensorflow/"
        "tensorflow:2.99.0-gpu: not found: manifest unknown: manifest unknown"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"bazel-version-mismatch", "link-error",
             "oom-compiler-killed", "bazel-output-root-not-writable",
             "bazel-meminfo-duplicate-entries", "base-image-tag-missing",
             "setup-py-not-in-source-root", "cuda-config-not-found"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a typo in an option, not a version
    "ERROR: Unrecognized option: --jobz=8",
    # gcc that succeeded, and another exit status (a compile error)
    "ERROR: /w/x/BUILD:1:1: Compiling x.cc failed: (Exit 1): gcc failed: error executing "
    "command /usr/bin/gcc -c x.cc",
    # a different errno for the output root is not this permission problem
    "FATAL: mkdir('/home/u/.cache/bazel/_bazel_u'): (error: 28): No space left on device",
    # a pull that worked
    "Status: Downloaded newer image for nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04",
    # autoconf finding nvcc
    "checking for nvcc... /usr/local/cuda/bin/nvcc",
    # a setup.py that ran
    "running bdist_wheel",
    "INFO: Reading /proc/meminfo: MemTotal=65536000 kB",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    (["RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use "
      "by process with pid 1234. Not attempting to load libtpu.so in this process."],
     "tpu-in-use"),
]
