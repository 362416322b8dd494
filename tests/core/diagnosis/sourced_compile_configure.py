"""The compiler, linker, configure and Bazel-analysis signatures on the wordings their tools
print elsewhere: other releases, another locale (Simplified Chinese gcc, binutils, glibc and
MSVC), another compiler reporting the same #error. Data only: the lists run in
test_round7_build_signatures.py's and test_runtime_wordings_r7.py's tests, with the
rounds'.

Every line was written for these tests from the tool's own format string or message
catalogue (resources/knowledge/sources.toml cites each); none is copied from a log.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # gcc 12 in a zh_CN locale: "%s signal terminated program %s" stays English, the
    # signal's name is glibc's strsignal (已杀死)
    ("oom-compiler-killed", ["g++: 致命错误：已杀死 signal terminated program cc1plus",
                             "compilation terminated."]),
    # gcc's "internal compiler error: %s (program %s)" with its zh_CN prefix
    ("oom-compiler-killed", ["tensorflow/core/kernels/cwise_op_add.cc:20:1: 编译器内部错误："
                             "已杀死 (program cc1plus)"]),
    # collect2's "%s terminated with signal %d [%s]%s", gcc-12 zh_CN
    ("oom-compiler-killed", ["collect2: 致命错误：ld 以信号 9 [已杀死] 退出。"]),
    # bash 5.2's report of a killed command in a zh_CN locale ("%s: line %d: ", Killed)
    ("oom-compiler-killed", ["/bin/bash: 第 1 行： 48213 已杀死                 "
                             "/usr/bin/gcc -O2 -c tensorflow/core/kernels/conv_ops.cc"]),
    # MSVC's linker out of memory (English and Chinese texts behind one code); ptxas's
    ("oom-compiler-killed", ["LINK : fatal error LNK1102: out of memory"]),
    ("oom-compiler-killed", ["LINK : fatal error LNK1102: 内存不足"]),
    ("oom-compiler-killed", ["ptxas fatal   : Memory allocation failure"]),
    # CUDA 12's host_config.h #error as MSVC reports it (C1189) and as clang does
    ("nvcc-host-compiler-unsupported", [
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\include\\crt/"
        "host_config.h(153): fatal error C1189: #error:  -- unsupported Microsoft Visual "
        "Studio version! Only the versions between 2017 and 2022 (inclusive) are supported!"]),
    ("nvcc-host-compiler-unsupported", [
        "/usr/local/cuda-12.2/include/crt/host_config.h:151:2: error: -- unsupported clang "
        "version! clang version must be less than 16 and greater than 3.2 ."]),
    # ... the sentence each guard ends with, alone on a wrapped line
    ("nvcc-host-compiler-unsupported", [
        "The nvcc flag '-allow-unsupported-compiler' can be used to override this version "
        "check; however, using an unsupported host compiler may cause compilation failure or "
        "incorrect run time execution. Use at your own risk."]),
    # clang 6 compiling CUDA for a GPU newer than the toolkit it found
    ("cuda-arch-unsupported", [
        "clang: error: GPU arch sm_70 requires CUDA version at least 9.0, but installation at "
        "/usr/local/cuda-8.0 is 8.0. Use --cuda-path to specify a different CUDA install, or "
        "pass --no-cuda-version-check."]),
    # MSVC's C1083 in Simplified Chinese
    ("python-headers-missing", [
        "tensorflow/python/lib/core/bfloat16.cc(16): fatal error C1083: 无法打开包括文件: "
        "“Python.h”: No such file or directory"]),
    # Python.h's first include, missing from a partial dev install (gcc, clang)
    ("python-headers-missing", ["/usr/include/python3.11/Python.h:12:10: fatal error: "
                                "pyconfig.h: No such file or directory"]),
    ("python-headers-missing", ["/usr/include/python3.12/Python.h:12:10: fatal error: "
                                "'pyconfig.h' file not found"]),
    ("numpy-headers-missing", [
        "tensorflow/python/lib/core/numpy.h(27): fatal error C1083: 无法打开包括文件: "
        "“numpy/arrayobject.h”: No such file or directory"]),
    # a newer toolkit's header, missing: MSVC's C1083 in Chinese, gcc in Chinese
    ("cuda-toolkit-too-old", [
        "external/local_xla/xla/stream_executor/cuda/cuda_fp8.cc(18): fatal error C1083: "
        "无法打开包括文件: “cuda_fp8.h”: No such file or directory"]),
    ("cuda-toolkit-too-old", [
        "./xla/types.h:25:10: 致命错误：cuda_bf16.h：没有那个文件或目录"]),
    # names of a newer toolkit undefined in an older one's headers, in nvcc's, clang's and
    # gcc's format strings ("identifier \"%s\" is undefined", "use of undeclared
    # identifier %0", "unknown type name %0", "%qD was not declared in this scope", "%qE
    # does not name a type")
    ("cuda-toolkit-too-old", [
        "external/xla/xla/stream_executor/gpu/gpu_cudamallocasync_allocator.cc(120): error: "
        "identifier \"cudaMemPool_t\" is undefined"]),
    ("cuda-toolkit-too-old", [
        "external/xla/xla/stream_executor/cuda/cuda_driver.cc:412:7: error: use of undeclared "
        "identifier 'cudaMallocAsync'"]),
    ("cuda-toolkit-too-old", [
        "xla/stream_executor/cuda/cuda_kernel.cc:52:3: error: unknown type name "
        "'cudaLaunchConfig_t'"]),
    ("cuda-toolkit-too-old", [
        "tensorflow/core/kernels/cast_op_gpu.cu.cc:30:3: error: ‘__nv_fp8_e4m3’ does not name "
        "a type"]),
    ("cuda-toolkit-too-old", [
        "xla/service/gpu/runtime/tma.cc:41:5: error: ‘cuTensorMapEncodeTiled’ was not declared "
        "in this scope"]),
    # gcc in Simplified Chinese: NumPy 2's headers ("%qD在此作用域中尚未声明",
    # "%qT没有名为%qE的成员")
    ("numpy-too-new-for-source", [
        "tensorflow/python/lib/core/ndarray_tensor.cc:70:15: 错误：‘NPY_NTYPES’在此作用域中"
        "尚未声明"]),
    ("numpy-too-new-for-source", [
        "tensorflow/python/lib/core/py_func.cc:120:20: 错误：‘PyArray_Descr’ {aka ‘struct "
        "_PyArray_Descr’}没有名为‘elsize’的成员"]),
    # gcc 13's headers without <cstdint>, in gcc's Simplified Chinese
    ("compiler-version-unsupported", [
        "external/com_google_protobuf/src/google/protobuf/port.h:30:3: 错误：‘uint8_t’不是一个"
        "类型名"]),
    ("compiler-version-unsupported", [
        "tensorflow/tsl/platform/numbers.cc:40:25: 错误：‘numeric_limits’不是‘std’的成员"]),
    ("compiler-version-unsupported", [
        "tensorflow/core/platform/tstring.h:30:8: 错误：‘string_view’不是命名空间‘std’中的一个"
        "类型名"]),
    # gcc 12 in zh_CN: "error: " is 错误： with no space, the option's words stay English
    ("compiler-version-unsupported", ["g++: 错误：unrecognized command-line option "
                                      "‘-std=c++17’"]),
    ("x86-flags-on-arm", ["aarch64-linux-gnu-gcc-12: 错误：unrecognized command-line option "
                          "‘-mavx2’"]),
    ("arm32-flags-on-aarch64", ["gcc: 错误：unrecognized command-line option ‘-mfpu=neon’"]),
    ("gcc-instead-of-clang", ["g++-12: 错误：unrecognized command-line option "
                              "‘-Wthread-safety’"]),
    # binutils 2.30's ld and gold under zh_CN, and gcc-12's collect2
    ("link-error", ["bazel-out/k8-opt/bin/tensorflow/python/_pywrap_tensorflow_internal.so："
                    "对‘PyUnicode_AsUTF8’未定义的引用"]),
    ("link-error", ["/usr/bin/ld.gold: error: foo.o: 对‘tsl::Status::Status()’未定义的引用"]),
    ("link-error", ["bazel-out/k8-opt/bin/external/com_google_protobuf/_objs/protobuf/"
                    "message.o: absl::lts_20230802::log_internal::LogMessage::~LogMessage() "
                    "的多重定义"]),
    ("link-error", ["/usr/bin/ld: 找不到 -lcudart"]),
    ("link-error", ["collect2: 错误：ld 返回 1"]),
    # lld's ports: COFF (lld-link), Mach-O (ld64.lld)
    ("link-error", ["lld-link: error: undefined symbol: __declspec(dllimport) "
                    "PyExc_TypeError"]),
    ("link-error", ["ld64.lld: error: undefined symbol: _PyBytes_AsString"]),
    ("link-error", ["ld64.lld: error: library not found for -lpython3.11"]),
    ("link-error", ["ld: framework not found Metal"]),
    ("link-error", ["ld64.lld: error: framework not found for -framework CoreML"]),
    # Bazel: the C++ type in a list of several; Bazel 3's lower case for a list
    ("cc-toolchain-unresolved", [
        "ERROR: /src/tensorflow/BUILD:1:1: While resolving toolchains for target //tensorflow:"
        "libtensorflow_framework.so.2: No matching toolchains found for types "
        "@@rules_python//python:toolchain_type, @@bazel_tools//tools/cpp:toolchain_type."]),
    ("cc-toolchain-unresolved", [
        "ERROR: While resolving toolchains for target //tensorflow/tools/pip_package:"
        "build_pip_package: no matching toolchains found for types "
        "@bazel_tools//tools/python:toolchain_type, @bazel_tools//tools/cpp:toolchain_type"]),
    # rules_ml_toolchain's redistribution rules (b117455): the variables as a Starlark list,
    # the user-mode driver's list, NCCL's list (keyed by the CUDA major version)
    ("hermetic-cuda-version-unsupported", [
        "Error in fail: The supported CUDA_UMD versions are [\"12.1.1\", \"12.8.1\", "
        "\"13.0.0\"]. Please provide a supported version in [\"HERMETIC_CUDA_UMD_VERSION\", "
        "\"HERMETIC_CUDA_VERSION\", \"TF_CUDA_VERSION\"] environment variable(s) or add JSON "
        "URL for CUDA_UMD version=12.7.0."]),
    ("hermetic-cudnn-version-unsupported", [
        "Error in fail: Please provide a supported version in [\"HERMETIC_CUDNN_VERSION\", "
        "\"TF_CUDNN_VERSION\"] environment variable(s) or add JSON URL for CUDNN "
        "version=9.0.1."]),
    ("hermetic-cuda-version-unsupported", [
        "Error in fail: The supported NCCL versions are [\"cuda12-x86_64-nccl-2.27.7\", "
        "\"cuda13-x86_64-nccl-2.27.7\"]. Please provide a supported version in "
        "HERMETIC_CUDA_VERSION and HERMETIC_NCCL_VERSION environment variables or add NCCL "
        "distribution for CUDA major version=11, OS=x86_64 and NCCL=2.27.7."]),
    # Python 2's bare ImportError and Python 3.5's quoted one, for the package itself
    ("numpy-missing-in-image", ["ImportError: No module named numpy"]),
    ("numpy-missing-in-image", ["ImportError: No module named 'wheel'"]),
    # the never-built packaging script, run by bash in zh_CN, by zsh and by dash
    ("pip-package-step-mismatch", ["bash: bazel-bin/tensorflow/tools/pip_package/"
                                   "build_pip_package: 没有那个文件或目录"]),
    ("pip-package-step-mismatch", ["zsh: no such file or directory: ./bazel-bin/tensorflow/"
                                   "tools/pip_package/build_pip_package"]),
    ("pip-package-step-mismatch", ["/bin/sh: 1: bazel-bin/tensorflow/tools/pip_package/"
                                   "build_pip_package: not found"]),
    ("pip-package-step-mismatch", ["./build.sh: 12: bazel-bin/tensorflow/tools/pip_package/"
                                   "build_pip_package: not found"]),
    # clang's HIP driver with no HIP runtime where ROCM_PATH points (ROCm 6's amdclang++)
    ("rocm-config-failed", [
        "clang++: error: cannot find HIP runtime; provide its path via '--rocm-path', or pass "
        "'-nogpuinc' to build without HIP runtime"]),
    # MSVC's own error line, with a column, in Chinese (nothing more specific known)
    ("compile-error", ["tensorflow\\core\\platform\\strcat.cc(45,10): error C2065: “ssize_t”: "
                       "未声明的标识符"]),
    ("compile-error", ["tensorflow/core/kernels/foo_op.cc:31:5: 错误：‘Bar’在此作用域中尚未声明"]),
    # LOCAL_CUDA_PATH at a folder without the toolkit's layout (rules_ml_toolchain b117455)
    ("cuda-config-not-found", [
        "ERROR: An error occurred during the fetch of repository 'cuda_nvcc':",
        "Error in fail: /opt/cuda-local/bin directory doesn't exist!"]),
    # its CUDA configuration's PTX table, for a clang (and a CUDA) it does not list
    ("hermetic-clang-version-unsupported", [
        "Cuda Configuration Error: The supported Clang versions are [\"17\", \"18\", \"19\", "
        "\"20\"]. Please add max PTX version supported by Clang major version=22."]),
    ("hermetic-cuda-version-unsupported", [
        "Cuda Configuration Error: The supported CUDA versions are [\"12.8\", \"12.9\"]. "
        "Please add max PTX version supported by CUDA version=13.2."]),
]

#: ids the near misses must not be diagnosed as
NOT_BUILD = {"oom-compiler-killed", "link-error", "nvcc-host-compiler-unsupported",
             "cc-toolchain-unresolved", "compiler-version-unsupported", "numpy-missing-in-image",
             "pip-package-step-mismatch", "compile-error", "cuda-config-not-found",
             "cuda-toolkit-too-old"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # TensorFlow naming the stream-ordered allocator it uses (a toolkit that has it)
    "I0000 00:00:1700000000.000000 1234 gpu_cudamallocasync_allocator.cc:123] Using CUDA "
    "malloc Async allocator for GPU: 0",
    # ld's warning (--warn-unresolved-symbols) of an undefined reference, in zh_CN
    "foo.o：警告：对‘bar’未定义的引用",
    # a killed signal name in another sentence; another signal (SIGTERM: 已终止)
    "collect2: 致命错误：ld 以信号 15 [已终止] 退出。",
    # lld-link /force:unresolved makes it a warning
    "lld-link: warning: undefined symbol: __imp_foo",
    # lld's Mach-O port on a library a .o asks for by LC_LINKER_OPTION: a warning
    "ld64.lld: warning: auto-linked library not found for -lswiftCore",
    "ld64.lld: warning: auto-linked framework not found for -framework UIKit",
    # another toolchain type missing: not the C++ toolchain
    "no matching toolchains found for types @bazel_tools//tools/python:toolchain_type",
    # gcc's zh_CN warning of an unknown -Wno- option in a good build
    "cc1plus: 警告：unrecognized command-line option ‘-Wno-unknown-warning-option’ may have "
    "been intended to silence earlier diagnostics",
    # a name other than the fixed-width integers, undeclared in Chinese
    "错误：‘my_int_t’在此作用域中尚未声明",
    # CPython's ImportError for a submodule of an installed numpy built for another ABI
    "ModuleNotFoundError: No module named 'numpy.core._multiarray_umath'",
    "ImportError: No module named numpy.core.multiarray",
    # the rule's notice of a symlink target it skips (a DEBUG print, not a failure)
    "DEBUG: /w/external/rules_ml_toolchain/gpu/nvidia_common_rules.bzl:268:18: Target "
    "/usr/local/cuda/extras doesn't exist!",
    # MSVC's warnings are not errors
    "tensorflow\\core\\framework\\tensor.cc(120,5): warning C4244: 'argument': conversion "
    "from 'int64_t' to 'int', possible loss of data",
    # the script that was built, run (its own output names itself)
    "+ bazel-bin/tensorflow/tools/pip_package/build_pip_package /tmp/tensorflow_pkg",
    "Thu Nov 28 12:00:00 UTC 2026 : === Output wheel file is in: /tmp/tensorflow_pkg",
]
