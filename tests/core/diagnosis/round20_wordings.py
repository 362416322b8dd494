"""Round 20's build signatures, written from the tools' own formats for two causes the
corpus had only held-out excerpts of (their excerpts unread): a C++ standard header not
found (clang's, gcc's and gcc's Simplified Chinese words) and TensorFlow's SWIG wrapper
without swig."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    ("cxx-std-headers-missing", [
        "In file included from tensorflow/core/platform/mutex.h:19:",
        "external/com_google_absl/absl/base/internal/atomic_hook.h:18:10: fatal error: "
        "'atomic' file not found"]),
    ("cxx-std-headers-missing", [
        "./tensorflow/core/lib/core/status.h:19:10: fatal error: functional: No such file or "
        "directory"]),
    ("cxx-std-headers-missing", [
        "external/eigen_archive/Eigen/Core:19:10: 致命错误：cstddef：没有那个文件或目录"]),
    ("swig-missing", [
        "ERROR: /src/tensorflow/python/BUILD:5160:1: SWIGing tensorflow/python/tensorflow.i "
        "failed (Exit 127)",
        "tensorflow/tools/swig/swig.sh: line 25: swig: command not found"]),
    ("swig-missing", [
        "tensorflow/tools/swig/swig.sh: line 25: /usr/local/bin/swig: No such file or "
        "directory"]),
    ("swig-missing", ["/bin/bash: swig: command not found"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"cxx-std-headers-missing", "swig-missing"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a header a compiler is too old for, or a library's own header, is not the standard
    # library missing
    "tensorflow/core/platform/path.cc:18:10: fatal error: filesystem: No such file or directory",
    "xla/tsl/util/span.h:20:10: fatal error: 'span' file not found",
    "third_party/gpus/cuda/include/cuda.h:3:10: fatal error: 'cuda_runtime.h' file not found",
    "src/main.cc:3:10: fatal error: arrayfire.h: No such file or directory",
    "src/main.cc:3:10: fatal error: 'string_view.h' file not found",
    # swig that runs, and its name in a path
    "SWIG: Using swig 3.0.12 from /usr/bin/swig",
    "INFO: From SWIGing tensorflow/python/tensorflow.i:",
    "bash: swiglib: command not found",
]
