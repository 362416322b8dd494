"""Round 21's wordings, written from the tools' own messages.

Runtime: jax's (jax/_src/xla_bridge.py of the 0.2-0.4 releases) for a jaxlib without CUDA:
its GPU backend finds no "cuda" platform or lacks the CUDA-only allocator settings, and a
GPU backend asked for is not there. nvidia-smi's words without a driver, and NVML's Python
binding's.
Build: Bazel's client without BAZEL_SH ("is not defined"); a package or target of
@bazel_tools, which ships inside each Bazel, that this Bazel lacks; grpc-java's and Go
servers' words for a remote call past its deadline; Java's, Python's (urllib3) and wget's
words for a server that cannot be reached or a name that does not resolve; a target of
@local_config_nccl that its stub (NCCL not configured) lacks, a cause that had held-out
excerpts only, written from nccl_configure's source without reading them; a Bazel server
lost whatever gRPC's words; SWIG's action ending with the shell's "not found" status (127);
Bazel's Windows launcher without bash.exe; a uid without a passwd entry in Python's and
whoami's words; a name of the C++ standard library missing (gcc's and clang's
words, and gcc's note naming the standard header for any of them)."""

from __future__ import annotations

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    (["I0820 16:00:20.281177 140257858221888 xla_bridge.py:212] Unable to initialize backend "
      "'gpu': Not found: Could not find registered platform with name: \"cuda\". Available "
      "platform names are: Interpreter Host"], "jaxlib-without-cuda"),
    (["I0101 00:00:00.000000 1 xla_bridge.py:357] Unable to initialize backend 'cuda': "
      "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'"],
     "jaxlib-without-cuda"),
    (["RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances "
      "of gpu are present. Platforms present are: interpreter,cpu"], "jaxlib-without-cuda"),
    # an extension module built for another Python (the loader's words)
    (["ImportError: /usr/local/lib/python2.7/dist-packages/tensorflow/python/_pywrap_"
      "tensorflow.so: undefined symbol: PyUnicodeUCS4_AsUTF8String"], "wheel-python-mismatch"),
    (["ImportError: dlopen(/Users/me/venv/lib/python3.8/site-packages/jaxlib/xla_extension.so,"
      " 2): Symbol not found: __PyThreadState_Current"], "wheel-python-mismatch"),
    (["ImportError: /opt/py32/lib/python3.9/site-packages/tensorflow/python/_pywrap_tensorflow"
      "_internal.so: wrong ELF class: ELFCLASS64"], "wheel-python-mismatch"),
    # CUDA's error 200 by its names
    (["E0000 00:00:1.0 123 pjrt_stream_executor_client.cc:2985] Execution of replica 0 "
      "failed: INTERNAL: Failed to load in-memory CUBIN: CUDA_ERROR_INVALID_IMAGE: device "
      "kernel image is invalid"], "cc-not-in-build"),
    (["RuntimeError: cudaErrorInvalidKernelImage"], "cc-not-in-build"),
    # an op without a kernel for a PluggableDevice (Intel's XPU, DirectML) or the GPU
    (["tensorflow.python.framework.errors_impl.NotFoundError: No registered 'StatelessRandom"
      "UniformV2' OpKernel for 'XPU' devices compatible with node {{node StatelessRandom"
      "UniformV2}}"], "pluggable-device-op-unsupported"),
    (["InvalidArgumentError: Cannot assign a device for operation Accuracy/__raw_: Could not "
      "satisfy explicit device specification '/device:GPU:0' because no supported kernel "
      "for GPU devices is available."], "pluggable-device-op-unsupported"),
    # nvidia-smi without its driver (tests/data/nvidia-smi: no-driver, and the H200 with
    # libnvidia-ml hidden), and NVML's Python binding
    (["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
      "that the latest NVIDIA driver is installed and running."], "cuinit-no-device"),
    (["NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that "
      "the NVIDIA Display Driver is properly installed and present in your system."],
     "libcuda-not-found"),
    (["pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found"],
     "libcuda-not-found"),
]

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    ("bazel-sh-not-set", ["ERROR: BAZEL_SH environment variable is not defined, cannot "
                          "convert MSYS paths to Windows paths"]),
    ("bazel-version-mismatch", [
        "ERROR: /src/third_party/py/python_configure.bzl:3:1: error loading package "
        "'@bazel_tools//tools/python': no such package '@bazel_tools//tools/python/runfiles':"
        " BUILD file not found"]),
    ("bazel-version-mismatch", [
        "ERROR: /w/BUILD:4:1: no such target '@bazel_tools//tools/cpp:cc_flags': target "
        "'cc_flags' not declared in package 'tools/cpp'"]),
    ("bazel-version-mismatch", [
        "ERROR: error loading package '': Label '@bazel_tools//tools/build_defs/cc:action_"
        "names.bzl' is invalid because 'tools/build_defs/cc' is not a package"]),
    ("remote-deadline-exceeded", [
        "ERROR: /w/tensorflow/core/BUILD:12:1: Compiling tensorflow/core/a.cc failed: "
        "Exhausted retries (5). DEADLINE_EXCEEDED: ClientCall was cancelled at or after "
        "deadline. [closed=[], open=[[buffered_nanos=2081, remote_addr=rbe.local/10.0.0.2:443]]]"]),
    ("remote-deadline-exceeded", [
        "ERROR: /w/BUILD:3:1: Executing genrule //:g failed: DEADLINE_EXCEEDED: context "
        "deadline exceeded"]),
    ("download-failed", [
        "pip._vendor.urllib3.exceptions.NewConnectionError: <pip._vendor.urllib3.connection."
        "HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -3] "
        "Temporary failure in name resolution"]),
    ("download-failed", [
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='storage.googleapis.com',"
        " port=443): Max retries exceeded with url: /x/y.tar.gz (Caused by NewConnectionError("
        "'<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new "
        "connection: [Errno 101] Network is unreachable'))"]),
    ("download-failed", ["Resolving github.com (github.com)... failed: Temporary failure in "
                         "name resolution."]),
    ("download-failed", [
        "ERROR: An error occurred during the fetch of repository 'llvm-raw':",
        "   java.net.ConnectException: Connection refused (Connection refused)"]),
    ("download-failed", ["Caused by: java.net.SocketException: Connection reset"]),
    ("bazel-server-oom", [
        "Server terminated abruptly (error code: 14, error message: 'Connection reset by peer', "
        "log file: '/root/.cache/bazel/_bazel_root/a1/server/jvm.out')"]),
    ("swig-missing", [
        "ERROR: /tf/tensorflow/python/BUILD:5160:1: SWIGing tensorflow/python/tensorflow.i "
        "failed (Exit 127)"]),
    ("bazel-sh-not-set", [
        "ERROR: src/main/native/windows/process.cc(202): CreateProcessW(\"C:\\tools\\msys64"
        "\\usr\\bin\\bash.exe\" -c \"echo hi\"): The system cannot find the file specified."]),
    ("bazel-user-unknown", ["KeyError: 'getpwuid(): uid not found: 1001'"]),
    ("bazel-user-unknown", ["whoami: cannot find name for user ID 1001"]),
    ("xla-nccl-not-configured", [
        "ERROR: /w/xla/xla/BUILD:3:1: no such target '@@xla~~nccl_configure~local_config_nccl"
        "//:nccl_via_stub': target 'nccl_via_stub' not declared in package ''"]),
    ("compiler-version-unsupported", [
        "tensorflow/lite/kernels/internal/spectrogram.cc:45:12: error: 'runtime_error' is not "
        "a member of 'std'"]),
    ("compiler-version-unsupported", [
        "external/com_google_absl/absl/strings/str_cat.h:88:8: error: 'unique_ptr' in "
        "namespace 'std' does not name a template type"]),
    ("compiler-version-unsupported", [
        "./tensorflow/core/lib/gtl/flatmap.h:30:14: error: no template named 'unordered_map' "
        "in namespace 'std'"]),
    ("compiler-version-unsupported", [
        "xla/service/hlo.cc:12:3: note: 'std::setw' is defined in header '<iomanip>'; did you "
        "forget to '#include <iomanip>'?"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"bazel-sh-not-set", "bazel-version-mismatch", "compiler-version-unsupported",
             "remote-deadline-exceeded", "download-failed", "xla-nccl-not-configured",
             "swig-missing", "bazel-server-oom", "bazel-user-unknown"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # the source's own package or target missing is its own BUILD file, not the Bazel
    "ERROR: /w/BUILD:4:1: no such target '//tensorflow/tools/pip_package:build_pip_package'",
    "ERROR: no such package '@local_config_cuda//cuda': Repository command failed",
    # Windows' macros named max and min, and a name of the source's own namespace
    "C:/src/util.h:12:20: error: 'max' is not a member of 'std'",
    "src/a.cc:3:8: error: 'Status' is not a member of 'tsl'",
    "src/a.cc:3:8: error: 'strng' is not a member of 'std'",
    # a cache call Bazel warns about and goes past (remote-cache-unusable), and Docker's words
    "WARNING: Remote Cache: DEADLINE_EXCEEDED: ClientCall was cancelled at or after deadline.",
    "error releasing builder: deadline_exceeded: context deadline exceeded",
    # a name that does not resolve in a program's own message, not a download
    "ValueError: Temporary failure in name resolution is not a valid device name",
    # SWIG that ran and failed, a Windows program other than bash missing, and a server
    # that was asked to stop
    "ERROR: /tf/tensorflow/python/BUILD:5160:1: SWIGing tensorflow/python/tensorflow.i "
    "failed (Exit 1)",
    "CreateProcessW(\"C:\\python\\python.exe\" -B x.py): The system cannot find the file "
    "specified.",
    "Server terminated abruptly (error code: 1, error message: 'shutdown requested')",
    # a target the NCCL stub has, and another repository's target
    "ERROR: /w/BUILD:3:1: no such target '@local_config_nccl//:nccl': target 'nccl' not "
    "declared in package ''",
    "ERROR: /w/BUILD:3:1: no such target '@local_config_cuda//cuda:cudnn_header'",
    # a build script probing the Bazel version with an option older Bazels lack, and going on
    "[bazel FATAL src/main/cpp/blaze.cc:1330] Unknown startup option: '--version'.",
]
