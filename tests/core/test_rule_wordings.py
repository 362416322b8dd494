"""The rules match the stable part of a message, whatever is around it: other wordings of
the same failure (newer and older tools, JAX beside TensorFlow), the prefixes CI systems
and launchers put before a line, ANSI colours, a console that wrapped the line.

The lines are the tools' own messages as their sources and documentation word them (the
corpus's held-out excerpts are not used here: bench/diagnosis.py measures with them).
"""

from __future__ import annotations

import pytest

from tfwizard.core.diagnosis.build import diagnose
from tfwizard.core.diagnosis.runtime import diagnose_log

#: (lines, the id diagnosed first, alone)
BUILD = [
    (["1>c1xx : fatal error C1060: compiler is out of heap space"], "oom-compiler-killed"),
    (["Compiling tensorflow/core/kernels/cwise_op_gpu_mul.cu.cc", "Killed"],
     "oom-compiler-killed"),
    (["nvcc error   : 'cudafe++' died due to signal 9 (Kill signal)"], "oom-compiler-killed"),
    (["virtual memory exhausted: Cannot allocate memory"], "oom-compiler-killed"),
    (["ERROR: /src/tensorflow/core/kernels/BUILD:2834:1: Compiling tensorflow/core/kernels/"
      "x.cc failed: (Exit 137): gcc failed: error executing command"], "oom-compiler-killed"),
    (["/usr/bin/ld: final link failed: No space left on device",
      "collect2: error: ld returned 1 exit status"], "disk-full"),
    # Bazel's own release server has no such file: that version for this platform
    (["2024/01/01 12:00:00 could not download Bazel: HTTP GET https://releases.bazel.build/"
      "6.5.0/release/bazel-6.5.0-linux-x86_64 failed with error 404"],
     "bazelisk-download-failed"),
    (["2024/01/01 12:00:00 could not download Bazel: HTTP GET https://bazel.mirror.example/"
      "6.5.0/release/bazel-6.5.0-linux-x86_64 failed with error 404"], "download-failed"),
    (["Closure Rules requires Bazel >=0.4.5 but was 0.10.0"], "bazel-version-mismatch"),
    (["ERROR: Error downloading [https://mirror.example/llvm.tar.gz] to /tmp/x/llvm.tar.gz: "
      "Checksum was 1e8f1a7d1e0c2f0a4e1c6b5a9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e but "
      "wanted 0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"],
     "download-checksum-mismatch"),
    (["ERROR: An error occurred during the fetch of repository 'eigen': java.io.IOException: "
      "Error downloading [https://x/e.tgz]: PKIX path validation failed: "
      "java.security.cert.CertPathValidatorException: validity check failed"],
     "download-certificate-untrusted"),
    (["pip._vendor.urllib3.exceptions.SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate "
      "verify failed: self signed certificate in certificate chain (_ssl.c:1129)"],
     "download-certificate-untrusted"),
    (["clang: error: unsupported option '-mavx2' for target 'aarch64-unknown-linux-gnu'"],
     "x86-flags-on-arm"),
    (["arm-linux-gnueabihf-gcc: error: unrecognized command-line option '-mfma'"],
     "x86-flags-on-arm"),
    # a new x86 instruction set an x86 gcc is too old to know (gcc 12 added -mavx512fp16)
    (["gcc: error: unrecognized command-line option '-mavx512fp16'"],
     "compiler-version-unsupported"),
    (["external/com_google_absl/absl/base/policy_checks.h:79:2: error: #error \"C++ versions "
      "less than C++14 are not supported.\""], "compiler-version-unsupported"),
    (["tensorflow/lite/x.h:20:8: error: 'uint8_t' in namespace 'std' does not name a type; "
      "did you mean 'wint_t'?"], "compiler-version-unsupported"),
    (["error: unknown warning option '-Wno-gnu-offsetof-extensions'; did you mean "
      "'-Wno-gnu-label-as-value'? [-Werror,-Wunknown-warning-option]"],
     "compiler-version-unsupported"),
    (["g++-9: error: unrecognized command-line option '-fcolor-diagnostics'"],
     "gcc-instead-of-clang"),
    (["bazel-out/k8-opt/bin/x.pb.h:10:2: error: #error \"Protobuf C++ gencode is built with an "
      "incompatible version of\""], "protoc-headers-mismatch"),
    (["ld.lld: error: undefined symbol: absl::lts_20230802::Mutex::Lock()"], "link-error"),
    (["/usr/bin/ld: cannot find -lcudart: No such file or directory"], "link-error"),
    (["LINK : fatal error LNK1181: cannot open input file 'python3.lib'"], "link-error"),
    (["ERROR: /src/x/BUILD:3:11: Compiling x.c failed: undeclared inclusion(s) in rule "
      "'//:x':"], "bazel-undeclared-inclusion"),
    (['src/main/tools/linux-sandbox-pid1.cc:171: "mount(/dev/shm, /dev/shm, nullptr, MS_BIND, '
      'nullptr)": Permission denied'], "bazel-sandbox-mount-failed"),
    (["+ git -C /root/.cache/bazel/external/x reset --hard 1a2b3c", "Unknown option: -C"],
     "git-too-old"),
    (['xcrun: error: unable to find utility "xcodebuild", not a developer tool or in PATH'],
     "xcode-not-found"),
    (["\x1b[0;31mROCm Configuration Error:\x1b[0m Cannot find rocm toolkit path."],
     "rocm-config-failed"),
    (["ERROR: no such target '//tensorflow/tools/pip_package:wheel': target 'wheel' not "
      "declared in package 'tensorflow/tools/pip_package'"], "pip-package-step-mismatch"),
]

RUNTIME = [
    (["tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate "
      "memory [Op:AddV2]"], "gpu-out-of-memory"),
    (["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
      "to allocate 2147483648 bytes."], "gpu-out-of-memory"),
    (["2017-05-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:1002] "
      "failed to allocate 3.90G (4185718528 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY"],
     "gpu-out-of-memory"),
    (["jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization "
      "failed. Look at the errors above for more details."], "cudnn-handle-failed"),
    (["UnknownError: Failed to get convolution algorithm. This is probably because cuDNN "
      "failed to initialize, so try looking to see if a warning log message was printed "
      "above."], "cudnn-handle-failed"),
    (["InternalError: Attempting to perform BLAS operation using StreamExecutor without BLAS "
      "support [Op:MatMul]"], "cublas-init-failed"),
    (["tensorflow.python.framework.errors_impl.InternalError: Blas xGEMMBatched launch "
      "failed : a.shape=[1,2,3], b.shape=[1,3,4], m=2, n=4, k=3, batch_size=1"],
     "cublas-init-failed"),
    (["TypeError: Descriptors cannot be created directly."], "protobuf-too-new"),
    (["RuntimeError: CUDA error: out of memory"], "gpu-out-of-memory"),
    (["ImportError: numpy.core.multiarray failed to import"], "numpy-abi-mismatch"),
    ([">>> import tensorflow as tf", "Illegal instruction (core dumped)"],
     "cpu-instructions-missing"),
    (["ImportError: Could not find 'cudart64_100.dll'. TensorFlow requires that this DLL be "
      "installed in a directory that is named in your %PATH% environment variable."],
     "cudart-not-found"),
    (["ImportError: Could not find 'cudnn64_7.dll'. TensorFlow requires that this DLL be "
      "installed in a directory that is named in your %PATH% environment variable."],
     "dlopen-failed"),
    (["InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: device "
      "kernel image is invalid"], "cc-not-in-build"),
    (["ImportError: DLL load failed while importing _pywrap_tfe: The specified procedure "
      "could not be found."], "windows-dll-load-failed"),
    (["RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"],
     "cuda-device-busy"),
    (["E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to "
      "cuModuleLoadDataEx: CUDA_ERROR_JIT_COMPILER_NOT_FOUND"], "ptxjit-library-missing"),
    (["ERROR: Package 'tensorflow' requires a different Python: 3.13.1 not in "
      "'<3.13,>=3.9'"], "no-wheel-for-python"),
    (["tensorflow-intel 2.15.0 requires keras<2.16,>=2.15.0, but you have keras 3.3.3 which "
      "is incompatible."], "keras3-over-tf215"),
    (["ERROR: tf_nightly-2.19.0.dev20250101-cp312-cp312-manylinux_2_17_x86_64.whl is not a "
      "supported wheel on this platform."], "wheel-python-mismatch"),
    (["Failed to initialize NVML: Driver/library version mismatch"], "dso-mismatch"),
    (["I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Could not dlopen "
      "library 'libcudnn.so.7'; dlerror: libcudnn.so.7: cannot open shared object file: No "
      "such file or directory"], "dlopen-failed"),
    (["W tensorflow/compiler/mlir/tools/kernel_gen/tf_gpu_runtime_wrappers.cc:40] "
      "'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_INVALID_PTX'"], "ptx-jit"),
    (["W external/xla/xla/stream_executor/gpu/asm_compiler.cc:111] *** WARNING *** You are "
      "using ptxas 11.0.194, which is older than 11.1. ptxas before 11.1 is known to "
      "miscompile XLA code, leading to incorrect results or invalid-address errors."],
     "ptxas-too-old"),
]

#: what CI systems, build tools and launchers put before a tool's line
PREFIXES = ["", "00:30:13 ", "2024-01-01T12:00:00.1234567Z ", "| ", "976 | ",
            "[1,0]<stderr>:", "(ActorGroup(rank=6) pid=4084493) ", "(02:13:50) ",
            "[2024-05-01T12:00:00.123Z] ", "2024/05/01 12:00:00 ", "[build] ",
            "tensorflow-build-1  | ", "00:30:13        > "]


def _ids(found) -> list[str]:
    return [d.id for d in found]


@pytest.mark.parametrize(("lines", "sig"), BUILD, ids=[c[1] for c in BUILD])
def test_build_wordings_are_recognised_behind_any_prefix(lines, sig):
    for prefix in PREFIXES:
        found = diagnose(["INFO: Analyzed target //x:y", *(prefix + line for line in lines)])
        assert _ids(found)[:1] == [sig], (prefix, _ids(found))


@pytest.mark.parametrize(("lines", "sig"), RUNTIME, ids=[c[1] for c in RUNTIME])
def test_runtime_wordings_are_recognised_behind_any_prefix(lines, sig):
    for prefix in PREFIXES:
        found = diagnose_log([prefix + line for line in lines])
        assert _ids(found)[:1] == [sig], (prefix, _ids(found))


def test_a_cuinit_failure_whose_diagnostics_show_two_driver_versions_is_a_mismatch():
    """cuInit named by its symptom (NO_DEVICE): TensorFlow's CUDA diagnostics that follow
    show libcuda and the kernel module at different versions, the cause."""
    def log(dso: str) -> list[str]:
        return ["E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: "
                "CUDA_ERROR_NO_DEVICE",
                f"I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported "
                f"version is: {dso}",
                "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:193] kernel reported "
                "version is: 550.54.14"]
    found = diagnose_log(log("535.104.5"))
    assert _ids(found) == ["dso-mismatch"]  # NO_DEVICE's advice would mislead: superseded
    assert "535.104.5" in found[0].cause and "550.54.14" in found[0].cause
    assert found[0].lines == [2, 3]
    assert _ids(diagnose_log(log("550.54.14.0"))) == ["cuinit-no-device"]  # the same driver


def test_a_bfc_warning_the_caller_says_is_no_failure_stays_quiet():
    line = ("2024-03-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:"
            "243] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.77GiB with "
            "freed_by_count=0. The caller indicates that this is not a failure, but may mean "
            "that there could be performance gains if more memory were available.")
    assert diagnose_log([line]) == []


def test_a_console_wrapped_code_is_still_found():
    # cut after its first 16 characters (literals.MIN_LEAD): the lead the line is found by
    lines = ["E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] cudnn status: CUDNN_STATUS_NOT_I",
             "NITIALIZED", "Traceback (most recent call last):"]
    found = diagnose_log(lines)
    assert _ids(found) == ["cudnn-handle-failed"] and found[0].lines == [1]
    assert found[0].evidence[0] == "\n".join(lines[:2])  # quoted as wrapped


def test_a_deeper_cause_supersedes_what_it_explains():
    """A checksum mismatch is a failed download too, but not a network problem: only the
    deeper cause is reported (failures.toml's superseded_by)."""
    line = ("ERROR: no such package '@icu//': java.io.IOException: Error downloading "
            "[https://x/icu.tgz] to /tmp/icu.tgz: Checksum was 86b85fbf but wanted e15ffd84")
    assert _ids(diagnose([line])) == ["download-checksum-mismatch"]
    assert _ids(diagnose([line.replace("Checksum was 86b85fbf but wanted e15ffd84",
                                       "connect timed out")])) == ["download-failed"]


def test_a_fix_that_is_a_recipe_change_is_a_recipe_value():
    """The new signatures whose fix is a recipe change carry it as data: one click (or
    `tfwizard recipe set`) applies it after fixes.py resolves it."""
    from tfwizard.core.diagnosis.build import load_failures

    fixes = {s.id: dict(s.recipe_fix) for s in load_failures()}
    assert fixes["bazel-sandbox-mount-failed"] == {
        "build.bazel_flags": "+--spawn_strategy=local"}
    assert fixes["x86-flags-on-arm"] == {"build.opt_flags": ["-Wno-sign-compare"]}
    assert fixes["compiler-version-unsupported"] == {"build.image": ""}
    assert fixes["gcc-instead-of-clang"] == {"toolchain.gcc": ""}
