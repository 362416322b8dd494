"""Lines written from the speaking tools' sources (session 20): a build's words for a CUDA
toolkit or cuDNN newer than the release's (the toolkit's headers and the compilers), for a
build without bash where its commands look for it and a sandbox Bazel cannot prepare, and
for pip's refusals of a lock file's requirements; a program's words for a PTX compiler that
does not know the GPU and for a package made for Keras 3 under Keras 2 (sources.toml's
cuda-toolkit-too-new-s20, bazel-bash-sandbox-s20, pip-require-hashes-s20, gpu-min-cc-s20
and keras3-layout-s20). Data only: BUILD runs in test_round7_build_signatures.py's tests
and RUNTIME in test_runtime_wordings_r7.py's, found by wordings.py; NOT_THESE in
test_runtime_wordings_r7.py's near-miss test.

The #error texts are NVIDIA/cccl v3.0.0's and NVIDIA/thrust cuda-11.0's, in gcc's, nvcc's
and clang's frames; Bazel's lines follow its DIE format and SandboxModule's message, pip's
its exceptions.py; the paths are plausible ones, the words are the sources'.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # CCCL 3.0 (CUDA 13) under a release that compiles CUDA code as C++14
    ("cuda-toolkit-too-new", [
        "/usr/local/cuda/include/thrust/detail/config/cpp_dialect.h:78:6: error: #error Thrust "
        "requires at least C++17. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this "
        "message."]),
    ("cuda-toolkit-too-new", [
        "/usr/local/cuda/include/cub/util_cpp_dialect.cuh(88): error: #error directive: CUB "
        "requires at least C++17. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this "
        "message."]),
    ("cuda-toolkit-too-new", [
        "/usr/local/cuda/include/cuda/std/__internal/cpp_dialect.h:40:6: error: #error libcu++ "
        "requires at least C++ 17. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this "
        "message."]),
    # CUDA 11.0's Thrust meeting the older CUB a release fetches itself
    ("cuda-toolkit-too-new", [
        "/usr/local/cuda-11.0/include/thrust/system/cuda/config.h:78:2: error: #error The "
        "version of CUB in your include path is not compatible with this release of Thrust. "
        "CUB is now included in the CUDA Toolkit, so you no longer need to use your own "
        "checkout of CUB. Define THRUST_IGNORE_CUB_VERSION_CHECK to ignore this."]),
    # CUDA 9.0's headers under a 2017 Eigen
    ("cuda-toolkit-too-new", [
        'external/eigen_archive/Eigen/Core:44:5: error: token ""__CUDACC_VER__ is no longer '
        'supported. Use __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, and __CUDACC_VER_BUILD__ '
        'instead."" is not valid in preprocessor expressions']),
    # clang compiling CUDA 13 and CUDA 12 with wrappers older than them
    ("cuda-toolkit-too-new", [
        "/usr/lib/llvm-18/lib/clang/18/include/__clang_cuda_runtime_wrapper.h:166:10: fatal "
        "error: 'texture_fetch_functions.h' file not found"]),
    ("cuda-toolkit-too-new", [
        "/usr/lib/clang/15.0.7/include/__clang_cuda_texture_intrinsics.h:696:13: error: no "
        "template named 'texture'"]),
    # nvcc with CUDA 12, which removed texture references
    ("cuda-toolkit-too-new", [
        "src/geometryTransform.cu(180): error: texture is not a template",
        'src/geometryTransform.cu(274): error: identifier "cudaBindTextureToArray" is undefined']),
    ("cuda-toolkit-too-new", [
        "kernels.cc:88:3: error: 'cudaUnbindTexture' was not declared in this scope"]),
    # cuDNN 8 and 9 without what an older release calls (gcc, nvcc, MSVC, clang)
    ("cuda-toolkit-too-new", [
        "tensorflow/stream_executor/cuda/cuda_dnn.cc:1077:15: error: 'cudnnSetRNNDescriptor' "
        "was not declared in this scope; did you mean 'cudnnSetLRNDescriptor'?"]),
    ("cuda-toolkit-too-new", [
        "tensorflow/stream_executor/cuda/cuda_dnn.cc:2893:9: error: "
        "‘CUDNN_CONVOLUTION_FWD_SPECIFY_WORKSPACE_LIMIT’ was not declared in this scope"]),
    ("cuda-toolkit-too-new", [
        'kernels/rnn.cu(212): error: identifier "cudnnRNNForwardTraining" is undefined']),
    ("cuda-toolkit-too-new", [
        "cuda_dnn.cc(1312): error C3861: 'cudnnSetRNNDescriptor_v6': identifier not found"]),
    ("cuda-toolkit-too-new", [
        "cuda_dnn.cc:3151:7: error: use of undeclared identifier "
        "'cudnnGetConvolutionBackwardFilterAlgorithm'"]),
    # no bash at /bin/bash: the process wrapper, the sandbox, the client, a script's
    # shebang, env
    ("bash-missing", [
        "ERROR: /src/tensorflow/BUILD:1620:19: Executing genrule //tensorflow:tf_python_api_gen "
        "failed: (Exit 1): bash failed: error executing Genrule command (from target "
        "//tensorflow:tf_python_api_gen) /bin/bash -c ... (remaining 1 argument skipped)",
        'src/main/tools/process-wrapper-legacy.cc:80: "execvp(/bin/bash, ...)": No such file or '
        'directory']),
    ("bash-missing", [
        'src/main/tools/linux-sandbox-pid1.cc:584: "execvp(/bin/bash, 0x27e105d0)": No such file '
        'or directory']),
    ("bash-missing", ["FATAL: execv of '/bin/bash' failed: (error: 2): No such file or directory"]),
    ("bash-missing", [
        "/bin/sh: bazel-out/k8-opt/bin/tensorflow/tools/pip_package/build_pip_package: /bin/bash: "
        "bad interpreter: No such file or directory"]),
    ("bash-missing", ["/usr/bin/env: ‘bash’: No such file or directory"]),
    ("bash-missing", ["env: can't execute 'bash': No such file or directory"]),
    # Bazel on Windows starting a genrule with a BAZEL_SH that is no bash (a missing file)
    ("bazel-sh-not-set", [
        "Action failed to execute: java.io.IOException: ERROR: src/main/native/windows/"
        'process.cc(202): CreateProcessW("C:\\tools\\msys64\\usr\\bin\\bash.exe" -c "source '
        "external/bazel_tools/tools/genrule/genrule-setup.sh; cp $(SRCS) $(OUTS)\")",
        " (error: 2)"]),
    # a name Bazel's build language predeclares in some release, missing from this Bazel
    ("bazel-version-mismatch", [
        "ERROR: /src/third_party/py/python_configure.bzl:3:1: name 'PyRuntimeInfo' is not defined"]),
    ("bazel-version-mismatch", [
        "ERROR: /src/tensorflow/core/BUILD:12:1: name 'cc_library' is not defined"]),
    ("bazel-version-mismatch", [
        "ERROR: /root/.cache/bazel/_bazel_root/0a1b/external/rules_foo/foo/repos.bzl:8:17: name "
        "'use_repo_rule' is not defined"]),
    # Bazel's loading phase missing a target (a failed build, no cause named)
    ("build-failed", [
        "ERROR: /w/external/xla/xla/tsl/BUILD:297:15: no such target '@platforms//cpu:riscv64': "
        "target 'riscv64' not declared in package 'cpu' defined by /w/external/platforms/cpu/"
        "BUILD"]),
    # a Docker build's step that failed, no cause named (classic builder, BuildKit)
    ("build-failed", ["The command '/bin/sh -c ./configure' returned a non-zero code: 2"]),
    ("build-failed", [
        'ERROR: failed to solve: process "/bin/sh -c bazel build //tensorflow/tools/pip_package:'
        'wheel" did not complete successfully: exit code: 1']),
    # Bazel 7.1.0's sandbox in a container, and sandboxfs
    ("bazel-sandbox-init-failed", [
        "ERROR: Failed to initialize sandbox: /root/.cache/bazel/_bazel_root/0a1b/sandbox/"
        "_moved_trash_dir -> /root/.cache/bazel/_bazel_root/0a1b/sandbox/stale-trash-0 (Invalid "
        "cross-device link)"]),
    ("bazel-sandbox-init-failed", ["ERROR: Failed to initialize sandbox: sandboxfs failed to start"]),
    # gas given a killed compiler's truncated output (gcc -pipe)
    ("oom-compiler-killed", [
        "{standard input}: Assembler messages:",
        "{standard input}:937239: Warning: end of file not at end of a line; newline inserted",
        "{standard input}: Error: open CFI at the end of file; missing .cfi_endproc directive"]),
    ("oom-compiler-killed", [
        "{standard input}: Error: open CFI at the end of file; missing .cfi_endproc directive"]),
    ("oom-compiler-killed", [
        "{standard input}: Assembler messages:",
        "{standard input}:160439: Warning: partial line at end of file ignored"]),
    # the whole build container killed (SIGKILL: 137) by its memory limit
    ("oom-compiler-killed", [
        "The command '/bin/sh -c bazel build //tensorflow/tools/pip_package:wheel' returned a "
        "non-zero code: 137"]),
    ("oom-compiler-killed", [
        '#12 ERROR: process "/bin/sh -c bazel build --config=cuda //tensorflow/tools/pip_package:'
        'wheel" did not complete successfully: exit code: 137']),
    ("oom-compiler-killed", ["    Last State:     Terminated", "      Reason:       OOMKilled"]),
    ("oom-compiler-killed", ["Error: Process completed with exit code 137."]),
    # pip's --require-hashes refusals, bare and as rules_python's whl_library frames them
    ("hermetic-python-lock-unhashed", [
        "ERROR: Hashes are required in --require-hashes mode, but they are missing from some "
        "requirements. Here is a list of those requirements along with the hashes their "
        "downloaded archives actually had. Add lines like these to your requirements files to "
        "prevent tampering. (If you did not enable --require-hashes manually, note that it "
        "turns on automatically when any package has a hash.)",
        "    ml-dtypes==0.5.1 --hash=sha256:0a7cfb0fe29fe5a9841b7c8ee6dffb52382c45acdf68f032145b"
        "75620acfbd6f"]),
    ("hermetic-python-lock-unhashed", [
        "===== stderr start =====",
        "ERROR: In --require-hashes mode, all requirements must have their versions pinned with "
        "==. These do not:",
        "    setuptools>=40.3.0 from https://files.pythonhosted.org/packages/x/setuptools-80.9.0-"
        "py3-none-any.whl (from tensorboard==2.20.0->-r /tmp/tmpa1b2c3 (line 1))"]),
    ("hermetic-python-lock-unhashed", [
        "ERROR: Can't verify hashes for these requirements because we don't have a way to hash "
        "version control repositories:"]),
    # the hash refusal explains the whl_library failure around it (nothing was built)
    ("download-checksum-mismatch", [
        "ERROR: An error occurred during the fetch of repository "
        "'rules_python++pip+pypi_312_numpy':",
        "Error in fail: whl_library pypi_312_numpy failed: Collecting numpy==2.1.3",
        " (ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have "
        "updated the package versions, please update the hashes. Otherwise, examine the package "
        "contents carefully; someone may have tampered with them."]),
]
#: the ids BUILD_NEAR_MISSES must not be diagnosed as
NOT_BUILD = {"cuda-toolkit-too-new", "bash-missing", "bazel-sandbox-init-failed",
             "hermetic-python-lock-unhashed", "oom-compiler-killed", "bazel-sh-not-set",
             "bazel-version-mismatch"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # CCCL 2.8's warnings: the build goes on
    "/usr/local/cuda/include/thrust/detail/config/cpp_dialect.h:131:13: warning: Thrust "
    "requires at least C++17. C++14 is deprecated but still supported. C++14 support will be "
    "removed in a future release. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this "
    "message. [-W#pragma-messages]",
    "warning: Thrust requires at least GCC 7.0. Define CCCL_IGNORE_DEPRECATED_COMPILER to "
    "suppress this message.",
    # an nvcc and headers of two toolkits (a mixed install, not a newer one)
    '/usr/local/cuda/include/cuda/std/__cccl/cuda_toolkit.h:39:8: error: #error "CUDA compiler '
    'and CUDA toolkit headers are incompatible, please check your include paths"',
    # clang's warning: the build goes on
    "clang: warning: CUDA version is newer than the latest supported version 12.5 "
    "[-Wunknown-cuda-version]",
    # a cuDNN older than the sources (the _v7 and _v8 functions are newer)
    "cuda_dnn.cc:1077:15: error: 'cudnnGetConvolutionForwardAlgorithm_v7' was not declared in "
    "this scope",
    "cuda_dnn.cc:1077:15: error: 'cudnnSetRNNDescriptor_v8' was not declared in this scope",
    # texture objects are current API; a texture of the sources' own
    'kernels.cu(12): error: identifier "cudaCreateTextureObject" is undefined',
    "error: texture is not a member of 'foo'",
    # other exit codes, and a container that was not killed
    "The command '/bin/sh -c ./configure' returned a non-zero code: 1",
    'ERROR: process "/bin/sh -c make" did not complete successfully: exit code: 1370',
    '            "OOMKilled": false,',
    # a macro of the project's own not loaded, a WORKSPACE rule written in a BUILD file
    "ERROR: /w/external/xla/xla/backends/gpu/codegen/triton/BUILD:639:20: name 'if_google' is "
    "not defined",
    "ERROR: /w/external/linux_opencv/BUILD.bazel:2:1: name 'new_local_repository' is not "
    "defined",
    # the names in a log line that is not an error
    "INFO: cudnnGetConvolutionForwardAlgorithm returned 2 algorithms",
    "/usr/local/cuda/include/texture_fetch_functions.h:12:1: warning: deprecated",
    # bash was there: the action's shell ran and its command failed
    "ERROR: /x/BUILD:3:8: Executing genrule //x:y failed (Exit 1): bash failed: error executing "
    "command /bin/bash -c ... (remaining 1 argument(s) skipped)",
    "/bin/bash: create_foo.pl: command not found",
    # a script with Windows line ends, another program missing, a glibc binary on musl
    "/bin/bash^M: bad interpreter: No such file or directory",
    "/usr/bin/env: 'bash\r': No such file or directory",
    'src/main/tools/process-wrapper-legacy.cc:80: "execvp(python3, ...)": No such file or '
    'directory',
    "env: can't execute '/root/.cache/bazel/external/go_sdk/bin/go': No such file or directory",
    # a tool of an action, not the genrule's shell, that Windows cannot start
    "ERROR: src/main/native/windows/process.cc(202): CreateProcessW(\"C:\\b\\protoc.exe\" "
    "--cpp_out=bazel-out)",
    # macOS's own sandbox failure, and Bazel 0.x's harmless warning
    "ERROR: Failed to initialize sandbox: getconf failed",
    "WARNING: Sandboxed execution is not supported on your system and thus hermeticity of "
    "actions cannot be guaranteed. See http://bazel.io/docs/bazel-user-manual.html#sandboxing "
    "for more information. You can turn off this warning via --ignore_unsupported_sandboxing.",
    # an assembler file of the sources' own that is missing its directive
    "third_party/xla/asm/memcpy_x86_64.S:88: Error: open CFI at the end of file; missing "
    ".cfi_endproc directive",
    # pip's warnings it recovers from, and rules_python's
    "  Previously-downloaded file /tmp/pip-cache/numpy-2.1.3.tar.gz has bad hash. "
    "Re-downloading.",
    "rules_python:pypi:create_whl_repos WARNING: Could not find a whl or an sdist with sha256="
    "1495132f30f722af1a091950088baea383fe39903db06b20e6936fd99402803e",
]

#: (a program's output, the id diagnosed first): XLA's PTX compilers refusing the GPU's
#: architecture
RUNTIME: list[tuple[list[str], str]] = [
    (["jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: Linked libnvptxcompiler is too old "
      "for sm_61."], "ptxas-too-old"),
    (["jax.errors.JaxRuntimeError: UNIMPLEMENTED: Loaded PTX assembler is too old for sm_120."],
     "ptxas-too-old"),
    # a package written for Keras 3 under the Keras 2 of TensorFlow 2.15 and older (alone:
    # the failed import says nothing more)
    (["Traceback (most recent call last):",
      '  File "/opt/venv/lib/python3.11/site-packages/seg3d/blocks.py", line 2, in <module>',
      "    from keras.src.legacy.backend import int_shape",
      "ModuleNotFoundError: No module named 'keras.src.legacy'"], "keras-newer-than-tf"),
    (["ModuleNotFoundError: No module named 'keras.ops'"], "keras-newer-than-tf"),
    # TensorFlow's hint under its out-of-memory error, posted alone
    (["Hint: If you want to see a list of allocated tensors when OOM happens, add "
      "report_tensor_allocations_upon_oom to RunOptions for current allocation info."],
     "gpu-out-of-memory"),
    # XLA without NCCL at a program's first collective: the library, not the operation
    (["2026-03-02 10:00:00.000000: W external/xla/xla/service/gpu/runtime/support.cc:58] "
      "Intercepted XLA runtime error:",
      "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:134: NCCL operation "
      "ncclGetUniqueId(&id) failed: Unable to load NCCL library. Multi-GPU collectives will not "
      "work."], "dlopen-failed"),
]

#: lines a program prints that keras-newer-than-tf may not take: Keras 2's own modules
#: missing under Keras 3 (the other way round), and no keras at all
NEAR_MISSES = [
    "ModuleNotFoundError: No module named 'keras.src.engine'",
    "ModuleNotFoundError: No module named 'keras.engine'",
    "ModuleNotFoundError: No module named 'keras'",
    "ModuleNotFoundError: No module named 'keras.operations'",
]
NOT_THESE = [(line, {"keras-newer-than-tf"}) for line in NEAR_MISSES]
