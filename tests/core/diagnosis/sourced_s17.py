"""Bazel's, Bazelisk's, the toolchains', the configure phase's, jax's and TensorFlow's own
words added in session 17, as their sources word them (sources.toml's
bazel-rc-messages-s17, bazel-skew-messages-s17, toolchain-messages-s17,
configure-messages-s17 and tf-import-messages-s17). Data only: the lists run in
test_round7_build_signatures.py's and test_runtime_wordings_r7.py's tests, found by
wordings.py.

Every line was written for these tests from the speaking tool's format string, filled in
with plausible paths and values; ptxas's and nvlink's lines (closed tools) and gcc 15's C23
lines follow their words as printed in public threads.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # TensorFlow 1.x's hard import of the file configure writes; a Bazel older than the
    # rc file's try-import
    ("configure-not-run", ["Unexpected error reading .blazerc file "
                           "'/home/u/tensorflow/.tf_configure.bazelrc'"]),
    ("configure-not-run", ["FATAL: Unexpected error reading .blazerc file "
                           "'C:/src/tensorflow/.tf_configure.bazelrc'"]),
    ("bazel-version-mismatch", ["WARNING: while reading option defaults file "
                                "'/src/tensorflow/.bazelrc':",
                                "  invalid command name 'try-import'."]),
    # a startup option after the command
    ("bazel-startup-option-misplaced", [
        "ERROR: --output_user_root=/cache/bazel :: Unrecognized option: "
        "--output_user_root=/cache/bazel"]),
    ("bazel-startup-option-misplaced", ["ERROR: Unrecognized option: --host_jvm_args=-Xmx2g"]),
    ("bazel-startup-option-misplaced", ["ERROR: --nohome_rc :: Unrecognized option: "
                                        "--nohome_rc"]),
    # Bazel 8's empty glob, a .bzl across a subpackage (both eras), dropped operators,
    # Bazelisk's unreadable version
    ("bazel-version-mismatch", [
        "ERROR: /root/.cache/bazel/_bazel_root/abc/external/local_config_python/BUILD:9:6: "
        "Error in glob: glob pattern 'python_include/**/*.h' didn't match anything, but "
        "allow_empty is set to False (the default value of allow_empty can be set with "
        "--incompatible_disallow_empty_glob)."]),
    ("bazel-version-mismatch", [
        "ERROR: error loading package '': in /src/serving/workspace.bzl: Label "
        "'@org_tensorflow//third_party:nccl/nccl_configure.bzl' crosses boundary of "
        "subpackage '@org_tensorflow//third_party/nccl' (perhaps you meant to put the colon "
        "here: '@org_tensorflow//third_party/nccl:nccl_configure.bzl'?)"]),
    ("bazel-version-mismatch", [
        "ERROR: /src/tensorflow/BUILD:3:6: Label "
        "'//tensorflow/core:platform/default/build_config_root.bzl' is invalid because "
        "'tensorflow/core/platform' is a subpackage; perhaps you meant to put the colon "
        "here: '//tensorflow/core/platform:default/build_config_root.bzl'?"]),
    ("bazel-version-mismatch", ["Error: unsupported binary operation: depset + depset"]),
    ("bazel-version-mismatch", ["Error: unsupported binary operation: dict + dict"]),
    ("bazel-version-mismatch", ["unsupported operand type(s) for +: 'depset' and 'list'"]),
    ("bazel-version-mismatch", [
        "2025/01/06 10:00:00 could not download Bazel: could not resolve the version "
        "'bazel-6.5.0' to an actual version number: invalid version 'bazel-6.5.0'"]),
    # the toolkit's ptxas, nvlink and cuDNN headers older than what they are given; CUDA
    # 12.3's conditional graph nodes
    ("cuda-toolkit-too-old", ["ptxas /tmp/tmpxft_00001a2b_00000000-6_kernel.ptx, line 5; "
                              "fatal   : Unsupported .version 8.4; current version is '8.3'"]),
    ("cuda-toolkit-too-old", ["nvlink fatal   : Input file 'libcudadevrt.a:"
                              "cuda_device_runtime.o' newer than toolkit (129 vs 120)"]),
    ("cuda-toolkit-too-old", ["xla/stream_executor/cuda/cuda_dnn.cc:98:28: error: static "
                              "assertion failed: cuDNN needs to be version 8.9 or higher"]),
    ("cuda-toolkit-too-old", ["xla/stream_executor/cuda/cuda_command_buffer.cc:97:1: error: "
                              "‘CUgraphConditionalHandle’ does not name a type"]),
    ("cuda-toolkit-too-old", ["cuda_command_buffer.cc(41): error: identifier "
                              "\"cudaGraphConditionalHandle\" is undefined"]),
    # an assembler older than the instructions, an MSVC older than LLVM's minimum, gcc 15's C23
    ("compiler-version-unsupported", ["/tmp/ccRVbZKp.s:1569: Error: no such instruction: "
                                      "`vpdpbusd %zmm2,%zmm31,%zmm22'"]),
    ("compiler-version-unsupported", ["/tmp/cc0x.s:88: Error: no such instruction: "
                                      "`{vex} vpdpbusd %ymm1,%ymm2,%ymm3'"]),
    ("compiler-version-unsupported", ["/tmp/ccXYZ.s:16: Error: unsupported instruction "
                                      "`vpdpbusd'"]),
    ("compiler-version-unsupported", [
        "external/llvm-project/llvm/include/llvm/Support/Compiler.h(92): fatal error C1189: "
        "#error:  LLVM requires at least VS 2019."]),
    ("compiler-version-unsupported", ["external/glpk/src/minisat/minisat.h:37:13: error: "
                                      "'bool' cannot be defined via 'typedef'"]),
    ("compiler-version-unsupported", ["include/linux/stddef.h:11:9: error: cannot use keyword "
                                      "'false' as enumeration constant"]),
    # the configure phase: no python on PATH, distutils gone, rules_python's canonical
    # repository names under bzlmod, a hermetic CUDA without this platform or driver
    ("python-not-on-path", ["Error in fail: Configuration Error: Cannot find python in PATH, "
                            "please make sure python is installed and add its directory in "
                            "PATH, or --define PYTHON_BIN_PATH='/something/else'."]),
    ("numpy-missing-in-image", ["Error in fail: Python Configuration Error: Problem getting "
                                "python include path."]),
    ("numpy-missing-in-image", ["ModuleNotFoundError: No module named 'distutils'"]),
    ("hermetic-python-requirement-build-failed", [
        "rules_python:whl_library(@@rules_python++pip+pypi_312_numpy) FAIL: repo.execute: "
        "whl_library.ResolveRequirement(rules_python++pip+pypi_312_numpy, numpy==1.26.4): "
        "end: failure:"]),
    ("hermetic-python-requirement-build-failed", [
        "ERROR: An error occurred during the fetch of repository "
        "'rules_python~~pip~pypi_312_numpy':"]),
    ("hermetic-python-requirement-build-failed", [
        "Error in fail: whl_library 'pypi_numpy' wheel_installer failed:"]),
    ("hermetic-cuda-version-unsupported", [
        'Error in fail: The supported platforms are ["x86_64-unknown-linux-gnu"]. Platform '
        "tegra-aarch64-unknown-linux-gnu is not supported for cuda_nvcc."]),
    ("hermetic-cuda-version-unsupported", [
        "Error in fail: Selected User Mode Driver version 12.4.1 is incompatible with selected "
        "CUDA Runtime version 12.8.0. The correct version formula is Runtime Version <= KMD "
        "version <= UMD version"]),
    # Bazel's client on the machine it runs on: output base, read-only mount, lock file,
    # owner, install base; Bazelisk without HOME; unzip's full disk; bash's zh_CN patch
    ("bazel-output-root-not-writable", [
        "FATAL: Output base directory '/root/.cache/bazel/_bazel_root/4f1b0e' could not be "
        "created: (error: 13): Permission denied"]),
    ("bazel-output-root-not-writable", ["FATAL: mkdir('/home/user/.cache/bazel/_bazel_user'): "
                                        "(error: 30): Read-only file system"]),
    ("bazel-output-root-not-writable", [
        "FATAL: cannot open lockfile '/workspace/.cache/bazel/63bf4bd60d62407ea3cc09dd362c8974/"
        "lock' for writing: (error: 13): Permission denied"]),
    ("bazel-output-root-not-writable", ["FATAL: '/home/builder/.cache/bazel/_bazel_builder' is "
                                        "not owned by me"]),
    ("bazel-output-root-not-writable", [
        "FATAL: Failed to extract embedded binaries: couldn't create '/root/.cache/bazel/"
        "_bazel_root/install/8ad1.tmp.x/embedded_tools/BUILD': (error: 13): Permission denied"]),
    ("bazel-user-unknown", ["2024/05/01 10:00:00 could not get the user's cache directory: "
                            "neither $XDG_CACHE_HOME nor $HOME are defined"]),
    ("disk-full", ["/root/.cache/x/libfoo.so:  write error (disk full?).  Continue? (y/n/^C) "]),
    ("patch-command-missing", ["bash: 第 1 行：patch: 未找到命令"]),
    # remote caches and executors: an input the cache evicted (three eras), Bazel 0.2x's
    # cache warning, an instance NativeLink or Buildbarn does not serve, BuildGrid 2019
    ("remote-cache-evicted", [
        "ERROR: /tf/tensorflow/core/BUILD:1234:11: Linking libtensorflow_framework.so.2 "
        "failed: Failed to fetch file with hash 'a3f5c1d2' because it does not exist remotely. "
        "--remote_download_outputs=minimal does not work if your remote cache evicts files "
        "during builds."]),
    ("remote-cache-evicted", [
        "ERROR: /tf/tensorflow/python/BUILD:55:12: Linking _pywrap_tensorflow_internal.so "
        "failed: Lost inputs no longer available remotely: bazel-out/k8-opt/bin/tensorflow/"
        "core/libframework.a (0b1c/12345)"]),
    ("remote-cache-evicted", [
        "ERROR: /tf/tensorflow/core/BUILD:99:8: Executing genrule //tensorflow/core:"
        "version_info_gen failed: lost inputs with digests: 78422cb5a1b2/19"]),
    ("remote-cache-unusable", ["WARNING: Error reading from the remote cache:"]),
    ("remote-unknown-instance", [
        "ERROR: Failed to query remote execution capabilities: INTERNAL: 'instance_name' not "
        "configured for 'foo' : Failed on get_capabilities() command"]),
    ("remote-unknown-instance", ["ERROR: Failed to query remote execution capabilities: "
                                 "INVALID_ARGUMENT: Unknown instance name: \"tf-ci\""]),
    # credentials the service refused or Bazel could not make
    ("remote-credentials", ["ERROR: /tf/BUILD:1:1: Compiling x.cc failed: (Exit 34): "
                            "PERMISSION_DENIED: API key does not have write permission"]),
    ("remote-credentials", ["ERROR: Failed to init auth credentials: Your default credentials "
                            "were not found."]),
    ("remote-credentials", ["ERROR: Failed to get credentials for 'https://cache.example' from "
                            "helper '/usr/local/bin/helper': process timed out"]),
    ("remote-unknown-platform-property", ["FAILED_PRECONDITION: Unregistered platform "
                                          "property."]),
    # TensorFlow's, XLA's and jax's build steps; the linker options they write for clang
    ("pip-package-step-mismatch", [
        "Error in fail: TF wheel shouldn't be built with CUDA dependencies. Please provide "
        "`--config=cuda_wheel` for bazel build command."]),
    ("pip-package-step-mismatch", ["build.py: error: the following arguments are required: "
                                   "command"]),
    ("pip-package-step-mismatch", ["build.py: error: unrecognized arguments: build "
                                   "--wheels=jaxlib,jax-cuda-plugin"]),
    ("pip-package-step-mismatch", ["Could not find bazel-bin.  Did you run from the root of "
                                   "the build tree?"]),
    ("configure-clang-version-unknown", [
        "WARNING: current clang installation version unknown.",
        "  File \"/src/tensorflow/configure.py\", line 886, in disable_clang_offsetof_extension",
        "AttributeError: 'NoneType' object has no attribute 'split'"]),
    ("clang-lld-missing", ["clang: error: invalid linker name in argument "
                           "'--ld-path=/usr/lib/llvm-18/bin/ld.lld'"]),
    ("gcc-instead-of-clang", ["gcc: error: unrecognized command-line option "
                              "'--ld-path=/usr/lib/llvm-18/bin/ld.lld'"]),
    ("configure-bad-answer", ["Invalid clang path: /usr/bin/clang-17 cannot be found."]),
    # Docker 29's containerd store and client, BuildKit, the docker SDK, CDI, the runtime
    ("base-image-tag-missing", [
        "Error response from daemon: failed to resolve reference \"docker.io/nvidia/cuda:"
        "11.0-cudnn8-devel-ubuntu18.04\": docker.io/nvidia/cuda:11.0-cudnn8-devel-ubuntu18.04: "
        "not found"]),
    ("base-image-tag-missing", [
        "ERROR: failed to solve: acme/tf-base:2.16: failed to resolve source metadata for "
        "docker.io/acme/tf-base:2.16: pull access denied, repository does not exist or may "
        "require authorization: server message: insufficient_scope: authorization failed"]),
    ("docker-daemon-unreachable", [
        "failed to connect to the docker API at unix:///var/run/docker.sock; check if the path "
        "is correct and if the daemon is running: dial unix /var/run/docker.sock: connect: no "
        "such file or directory"]),
    ("docker-daemon-unreachable", [
        "Error while fetching server API version: HTTPConnectionPool(host='127.0.0.1', port=1): "
        "Max retries exceeded with url: /version (Caused by NewConnectionError(\"HTTPConnection"
        "(host='127.0.0.1', port=1): Failed to establish a new connection: [Errno 111] "
        "Connection refused\"))"]),
    ("docker-pull-rate-limited", [
        "Error response from daemon: error pulling docker.io/nvidia/cuda:12.3.2-devel-ubuntu22.04: "
        "error from registry: You have reached your unauthenticated pull rate limit. "
        "https://www.docker.com/increase-rate-limit"]),
    ("docker-pull-rate-limited", [
        "failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1."
        "docker.io/v2/nvidia/cuda/manifests/sha256:3f1d: 429 Too Many Requests"]),
    ("registry-access-denied", ["Error response from daemon: error pulling nvcr.io/nvidia/"
                                "tensorflow:24.01-tf2-py3: error from registry: authentication "
                                "required"]),
    # round 28's tuning misses: a crosstool of an older era under a newer Bazel
    ("bazel-version-mismatch", [
        "ERROR: /root/.cache/bazel/_bazel_u/0de1/external/local_config_sycl/crosstool/BUILD:12:1: "
        "@local_config_sycl//crosstool:cc-compiler-local: missing value for mandatory "
        "attribute 'toolchain_config' in 'cc_toolchain' rule"]),
    ("docker-gpu-driver", ["Error response from daemon: CDI device injection failed: no CDI "
                           "specification directories specified"]),
    ("docker-gpu-driver", [
        "docker: Error response from daemon: failed to create task for container: failed to "
        "create shim task: OCI runtime create failed: unable to retrieve OCI runtime error: "
        "exec: \"nvidia-container-runtime\": executable file not found in $PATH"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"bazel-version-mismatch", "bazel-startup-option-misplaced",
             "bazel-config-undefined", "configure-not-run", "cuda-toolkit-too-old",
             "compiler-version-unsupported", "numpy-missing-in-image",
             "hermetic-python-requirement-build-failed", "docker-pull-rate-limited",
             "remote-cache-evicted", "docker-gpu-driver", "python-not-on-path"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # the short glob words of Bazel 0.2x-4 (a glob that asked for it), a source file across
    # a subpackage (a stale checkout), Python's own operator error
    "Error in glob: glob pattern 'x/*.h' didn't match anything, but allow_empty is set to "
    "False.",
    "Label '//tensorflow/python/keras:engine/training_eager_test.py' crosses boundary of "
    "subpackage 'tensorflow/python/keras/engine'",
    "TypeError: unsupported operand type(s) for +: 'dict' and 'dict'",
    "unsupported binary operation: int + string",
    # a config Bazel only warns about
    "WARNING: Config value invalid is not defined in any .rc file",
    # another program's unknown command, an rc file Bazel skipped on purpose
    "invalid command name 'tkdnd::drop_target'",
    "Unexpected error reading .blazerc file '/home/ci/other.bazelrc'",
    # ptxas's informational lines, an ordinary instruction, a warning about C23
    "ptxas info    : Used 32 registers, 384 bytes cmem[0]",
    "/tmp/cc.s:12: Error: no such instruction: `vpaddd %ymm1,%ymm2,%ymm3'",
    # a module whose name only starts like distutils; another repository's fetch
    "ModuleNotFoundError: No module named 'distutils_extra'",
    "ERROR: An error occurred during the fetch of repository 'local_config_cuda':",
    # a genrule's exit status 127 alone (a stub XLA leaves for another platform says it too)
    "ERROR: /x/external/tsl/tsl/cuda/BUILD.bazel:132:10: Executing genrule @tsl//tsl/cuda:"
    "cudnn_stub_gen failed: (Exit 127): bash failed: error executing command",
    # a mirror's refusal that is not a rate limit, a retry line after an eviction alone,
    # a plain runc that failed
    "unexpected status from HEAD request to https://r/v2/x/manifests/1: 401 Unauthorized",
    "Found transient remote cache error, retrying the build...",
    "/usr/bin/runc did not terminate successfully: exit status 1",
    # Bazelisk that lost the network while it listed versions (download-failed's)
    "could not download Bazel: could not resolve the version 'latest' to an actual version "
    "number: unable to determine latest version: could not list Bazel versions in GCS "
    "bucket: dial tcp: lookup storage.googleapis.com: no such host",
]

#: a program's output: (lines, the id diagnosed first), tried behind every prefix
#: (wordings.RUNTIME_LISTS); jax's and TensorFlow's own words at import and backend start
RUNTIME: list[tuple[list[str], str]] = [
    (["RuntimeError: Unable to initialize backend 'cuda': INTERNAL: no supported devices "
      "found for platform CUDA. (you may need to uninstall the failing plugin package, or set "
      "JAX_PLATFORMS=cpu to skip this backend.)"], "jax-cuda-plugin-failed"),
    (["CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:90: operation "
      "cuInit(0) failed: CUDA_ERROR_NOT_INITIALIZED (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun "
      "for more info.)"], "jax-cuda-plugin-failed"),
    # round 28's tuning misses: libtpu's held TPU, XLA without a compiler for a pluggable
    # device
    (["I0000 00:00:1649423660.053391 1924758 f236.cc:165] libtpu.so already in use by another "
      "process probably owned by another user."], "tpu-in-use"),
    (["UNIMPLEMENTED: Could not find compiler for platform METAL: NOT_FOUND: could not find "
      "registered compiler for platform METAL -- check target linkage"],
     "pluggable-device-op-unsupported"),
    (["ImportError: This version of jax requires jaxlib version >= 0.1.38."],
     "jaxlib-version-mismatch"),
    (["ImportError: Could not find 'nvcuda.dll'. TensorFlow requires that this DLL be "
      "installed in a directory that is named in your %PATH% environment variable."],
     "libcuda-not-found"),
    (["tensorflow.python.framework.errors_impl.NotFoundError: libcudart.so.8.0: cannot open "
      "shared object file: No such file or directory"], "import-cuda-lib-missing"),
    (["ImportError: dlopen(/Users/x/tf/_pywrap_tensorflow_internal.so, 6): Library not "
      "loaded: /usr/local/cuda/lib/libcudart.8.0.dylib"], "import-cuda-lib-missing"),
    (["RuntimeError: Requested backend gpu, but it failed to initialize: Not found: Could not "
      "find registered platform with name: \"cuda\". Available platform names are: "
      "Interpreter Host"], "jaxlib-without-cuda"),
    (["jaxlib.gpu_common_utils.GpuLibNotLinkedError: JAX was not built with GPU support. "
      "Please use a GPU-enabled JAX to use this function."], "jaxlib-without-cuda"),
    (["ImportError: Could not import tensorflow. Do not import tensorflow from its source "
      "directory; change directory to outside the TensorFlow source tree, and relaunch your "
      "Python interpreter from there."], "import-from-source-tree"),
]
