"""Lines for session 21's changes, in the tools' own formats: configure.py's refusals of a
path it asked for (python, gcc, clang, the C compiler; read in its releases through public
code search), rocm_configure.bzl's traceback through its search for ROCm, cuDNN's failed
start as TensorFlow's conv op names it when a paste is cut after "because cuDNN", and a
Keras newer than the TensorFlow importing tensorflow.python.trackable from Keras 2's own
modules (not Keras 3). Data only: BUILD runs in test_round7_build_signatures.py's tests and
RUNTIME in test_runtime_wordings_r7.py's, found by wordings.py.

(Generic build lines tried this session and dropped: Bazel's error lines at a place in a
BUILD file and its errors with no place, Nix's and Spack's words for a build they ran that
failed, and a compile error in a header of any suffix or a fatal one; see the corpus
README, round 37.)
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    ("configure-bad-answer", ["Invalid python path: python cannot be found."]),
    ("configure-bad-answer", ["/usr/lib/python3 is not executable.  Is it the python binary?"]),
    ("configure-bad-answer", ["Invalid gcc path. /usr/bin/gcc-7 cannot be found"]),
    ("configure-bad-answer", ["Invalid C compiler path. /opt/cc/bin/cc cannot be found."]),
    # rocm_configure.bzl's Starlark traceback through its search for the ROCm installation
    # (Bazel 6 and newer add the column), as cuda_configure.bzl's is read
    ("rocm-config-failed", [
        '\tFile "/src/tf/third_party/gpus/rocm_configure.bzl", line 395, column 30, in '
        "_get_rocm_config"]),
    ("rocm-config-failed", [
        '\tFile "/src/tf/third_party/gpus/rocm_configure.bzl", line 372, in '
        "_exec_find_rocm_config"]),
]
#: the ids BUILD_NEAR_MISSES must not give
NOT_BUILD = {"configure-bad-answer", "rocm-config-failed"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    "/usr/bin/python3 is not executable",  # another tool's words, without configure's question
    "WARNING: the python path /usr/bin/python3.9 cannot be found in PATH",
    # the repository rule's own frame: a failure under it need not be the search's
    '\tFile "/src/tf/third_party/gpus/rocm_configure.bzl", line 547, column 35, in '
    "_create_local_rocm_repository",
]

#: (a program's lines, the id diagnosed first)
RUNTIME: list[tuple[list[str], str]] = [
    # TensorFlow's conv op, cut where a terminal or a page ended the line
    (["tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution "
      "algorithm. This is probably because cuDNN"], "cudnn-handle-failed"),
    # Keras 2's dtensor module on a TensorFlow before the module moved (not Keras 3)
    (["  File \"/v/site-packages/keras/dtensor/lazy_variable.py\", line 26, in <module>",
      "ModuleNotFoundError: No module named 'tensorflow.python.trackable'"],
     "keras-newer-than-tf"),
]
