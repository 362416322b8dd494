"""Round 11's signatures on wordings the corpus does not hold: other versions, paths, tools
and prefixes of the same failures. Data only: the lists run in
test_round7_build_signatures.py's and test_runtime_wordings_r7.py's tests, with the earlier
rounds'.

Every line was written for these tests from the tools' own message formats (their sources,
as resources/knowledge/sources.toml cites them); none is copied from the corpus.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # git 1.7 cloning a dependency over HTTPS
    ("git-too-old", ["Cloning into 'abseil-cpp'...",
                     "error: RPC failed; result=22, HTTP code = 422",
                     "fatal: The remote end hung up unexpectedly"]),
    # a JDK without its cacerts, fetching any repository
    ("download-certificate-untrusted", [
        "ERROR: An error occurred during the fetch of repository 'rules_jvm_external': "
        "java.lang.RuntimeException: Unexpected error: java.security.InvalidAlgorithmParameter"
        "Exception: the trustAnchors parameter must be non-empty"]),
    # the runfiles tree of another Bazel, under bzlmod's main repository name
    ("bazel-version-mismatch", [
        'rsync: change_dir "/w/bazel-bin/tensorflow/tools/pip_package/build_pip_package.'
        'runfiles/_main/external" failed: No such file or directory (2)']),
    # nvcc 11.x on another line of Abseil's header, behind a CI time
    ("cuda-toolkit-too-old", [
        "12:00:01 external/com_google_absl/absl/strings/internal/str_format/bind.h:171:1: "
        "error: parse error in template argument list"]),
    # hipcc with a ROCM_PATH of another release; clang 17's newer words
    ("rocm-config-failed", ["failed to execute:/opt/rocm-6.2.0/lib/llvm/bin/clang++  -O3 "
                            "-x hip kernel.hip"]),
    ("rocm-config-failed", ["clang: error: cannot find ROCm device library; provide its path "
                            "via '--rocm-path' or '--rocm-device-lib-path', or pass "
                            "'-nogpulib' to build without ROCm device library"]),
    # Bazelisk asking GitHub's release downloads for a version with no arm64 Linux binary
    ("bazelisk-download-failed", [
        "2024/05/02 10:00:00 could not download Bazel: HTTP GET https://github.com/"
        "bazelbuild/bazel/releases/download/0.29.1/bazel-0.29.1-linux-arm64 failed with "
        "error 404"]),
    # g++ given the clang-only option
    ("gcc-instead-of-clang", ["g++-12: error: unrecognized command-line option "
                              "'-faligned-allocation'"]),
    # the disk cache's write, reported through the combined cache, is the local disk
    ("disk-full", ["WARNING: Writing to Remote Cache: No space left on device"]),
    # ... while the remote cache's own refusal stays its warning
    ("remote-cache-unusable", ["WARNING: Remote Cache: 507 Insufficient Storage"]),
    # jax's build script of another release
    ("pip-package-step-mismatch", ["build.py: error: unrecognized arguments: --enable_cuda "
                                   "--cuda_path=/usr/local/cuda"]),
    # Spack's sha256 check
    ("download-checksum-mismatch", [
        "==> Error: ChecksumError: sha256 checksum failed for /tmp/spack-stage/spack-stage-"
        "bazel-6.5.0-abc/bazel-6.5.0-dist.zip"]),
    # NumPy 2's headers, as clang says it, and gcc with its aka
    ("numpy-too-new-for-source", ["tensorflow/python/lib/core/ndarray_tensor.cc:70:15: error: "
                                  "use of undeclared identifier 'NPY_NTYPES'"]),
    ("numpy-too-new-for-source", ["tensorflow/python/lib/core/py_func.cc:120:20: error: no "
                                  "member named 'elsize' in '_PyArray_Descr'"]),
    ("numpy-too-new-for-source", ["tensorflow/python/lib/core/ndarray_tensor.cc:91:12: error: "
                                  "'PyArray_Descr' {aka 'struct _PyArray_Descr'} has no member "
                                  "named 'subarray'"]),
    # another script under bazel-bin, through another bash
    ("windows-path-backslashes-stripped", [
        "/usr/bin/bash: bazel-bintensorflowlitetoolspip_packagebuild_pip_package_with_bazel.sh:"
        " No such file or directory"]),
    # Nix quoting a builder's last lines
    ("build-failed", ["       > Target //jaxlib/tools:build_wheel failed to build",
                      "       > FAILED: Build did NOT complete successfully"]),
    ("oom-compiler-killed", ["       > Killed"]),
]

#: ids the near misses must not be diagnosed as
NOT_BUILD = {"bazelisk-download-failed", "windows-path-backslashes-stripped",
             "numpy-too-new-for-source", "git-too-old"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a release candidate (bazel-version-mismatch) and a mirror's 404 (download-failed)
    "could not download Bazel: HTTP GET https://releases.bazel.build/7.0.0/rc5/"
    "bazel-7.0.0rc5-linux-x86_64 failed with error 404",
    "could not download Bazel: HTTP GET https://mirror.example.com/bazel/6.5.0/"
    "bazel-6.5.0-linux-x86_64 failed with error 404",
    # a path with its slashes
    "bash: bazel-bin/tensorflow/tools/pip_package/build_pip_package: No such file or directory",
    # NumPy's new names are fine; a field NumPy 2 kept is not its change
    "ndarray_tensor.cc:70:15: error: 'NPY_NTYPES_LEGACY' was not declared in this scope",
    "py_func.cc:12:3: error: 'PyArray_Descr' has no member named 'typeobj'",
    # newer git's words for an HTTP error (not its age)
    "error: RPC failed; HTTP 500 curl 22 The requested URL returned error: 500",
]

#: (lines, the id diagnosed first)
RUNTIME = [
    # Node.js on Windows loading tfjs-node's binding: English and Simplified Chinese Windows
    (["Error: The specified module could not be found.",
      "\\\\?\\C:\\app\\node_modules\\@tensorflow\\tfjs-node\\lib\\napi-v8\\tfjs_binding.node"],
     "windows-dll-load-failed"),
    (["Error: 找不到指定的模块。"], "windows-dll-load-failed"),
    # macOS's dyld on another add-on and namespace
    (["ImportError: dlopen(/Users/me/venv/lib/python3.11/site-packages/tensorflow_text/python/"
      "ops/_regex_split_ops.dylib, 0x0002): symbol not found in flat namespace '__ZN3tsl6Status"
      "C1EN4absl12lts_2023080212StatusCodeENSt3__117basic_string_viewIcNS4_11char_traitsIcEE"
      "EENS_14SourceLocationE'"], "tf-addon-abi-mismatch"),
    # jax's check, wrapped by a terminal after "jax"
    (["RuntimeError: jaxlib is version 0.4.30, but this version of jax",
      "requires version >= 0.4.31."], "jaxlib-version-mismatch"),
    # Keras 3 on an old TensorFlow, from another Keras module (a Keras newer than the
    # TensorFlow: Keras 2.11-2.15 say the same, so since session 21 the line alone is not
    # read as Keras 3)
    (["  File \"/v/site-packages/keras/src/backend/tensorflow/trackable.py\", line 3, in "
      "<module>",
      "ModuleNotFoundError: No module named 'tensorflow.python.trackable'"],
     "keras-newer-than-tf"),
    # glibc 2.41 refusing TensorFlow's own framework library
    (["ImportError: libtensorflow_framework.so.2: cannot enable executable stack as shared "
      "object requires: Invalid argument"], "import-executable-stack-refused"),
    # libprotobuf's check, from another path and version
    (["[libprotobuf FATAL external/com_google_protobuf/src/google/protobuf/stubs/common.cc:83]"
      " This program requires version 3.21.9 of the Protocol Buffer runtime library, but the "
      "installed version is 3.6.1.  Please update your library."], "protobuf-runtime-too-old"),
]
