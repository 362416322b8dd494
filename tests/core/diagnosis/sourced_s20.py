"""A build's words for a CUDA toolkit or cuDNN newer than the release's, as the toolkit's own
headers and the compilers word them (sources.toml's cuda-toolkit-too-new-s20). Data only:
BUILD runs in test_round7_build_signatures.py's tests, found by wordings.py.

The #error texts are NVIDIA/cccl v3.0.0's and NVIDIA/thrust cuda-11.0's, in gcc's, nvcc's
and clang's frames; the paths are plausible ones, the words are the sources'.
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
]
#: the ids BUILD_NEAR_MISSES must not be diagnosed as
NOT_BUILD = {"cuda-toolkit-too-new"}
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
    # the names in a log line that is not an error
    "INFO: cudnnGetConvolutionForwardAlgorithm returned 2 algorithms",
    "/usr/local/cuda/include/texture_fetch_functions.h:12:1: warning: deprecated",
]
