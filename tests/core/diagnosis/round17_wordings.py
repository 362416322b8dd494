"""Lines for round 17's signatures and widenings in wordings no corpus excerpt holds: the
other lines of Bazel's missing-MSVC script, other TensorFlow 1.x git targets, the placeholder
of tf-nightly-gpu, each written from the tool's message format as
resources/knowledge/sources.toml cites it. The build and runtime wording tests run them with
the earlier rounds' lists."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    # the missing-MSVC script's detail, when some of the tools were found
    ("msvc-build-tools-not-found", [
        "Visual C++ build tools seems to be installed at C:\\BuildTools\\VC",
        "But Bazel can't find the following tools:",
        "    cl.exe, link.exe, lib.exe"]),
    ("msvc-build-tools-not-found", [
        "The target you are compiling requires Visual C++ build tools."]),
    # configure's other generated git files
    ("configure-not-run", [
        "ERROR: /src/tensorflow/tensorflow/core/BUILD:1601:1: no such target "
        "'//tensorflow/tools/git:gen/head': target 'gen/head' not declared in package "
        "'tensorflow/tools/git'"]),
    # another rule set pinned by WORKSPACE, under Bazel 8
    ("bazel-version-mismatch", [
        "ERROR: /w/tensorflow/BUILD:12:1: no such package '@local_config_cuda//cuda': "
        "No repository visible as '@local_config_cuda' from main repository"]),
    # another builtin under static name resolution
    ("bazel-version-mismatch", [
        "builtin variable 'PACKAGE_NAME' is referenced before assignment."]),
    # an ambiguous select() in a pinned rule set of the newer Bazel's wording
    ("bazel-version-mismatch", [
        "ERROR: /x/external/zlib/BUILD.bazel:3:8: Illegal ambiguous match on configurable "
        "attribute \"copts\" in @zlib//:zlib:"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"msvc-build-tools-not-found", "bazel-version-mismatch"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a select() in the source's own package: its BUILD file's, not the Bazel's
    "ERROR: /w/litert/c/BUILD:648:18: Illegal ambiguous match on configurable attribute "
    "\"deps\" in //litert/c:api:",
    # Bazel's Windows setup naming the tools it did find
    "INFO: Found applicable config definition build:windows in file /w/.bazelrc: "
    "--copt=/W0 --host_copt=/W0",
    "Setting BAZEL_VC to C:\\BuildTools\\VC",
]

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    # the nightly's placeholder, as pip shows it
    (['      The "tf-nightly-gpu" package has been removed!'], "tensorflow-gpu-package-removed"),
    # Windows' STATUS_ILLEGAL_INSTRUCTION as a signed number
    (["ImportError: DLL load failed with error code -1073741795"], "cpu-instructions-missing"),
    # XLA of TF 1.x without a CUDA toolkit's ptxas
    (["tensorflow.python.framework.errors_impl.NotFoundError: /usr/local/cuda/bin/ptxas "
      "not found"], "ptxas-too-old"),
    # a rocm plugin of another release than jax
    (["ImportError: cannot import name 'gpu_triton' from 'jax._src.lib' "
      "(/venv/lib/python3.12/site-packages/jax/_src/lib/__init__.py)"],
     "jaxlib-version-mismatch"),
]
