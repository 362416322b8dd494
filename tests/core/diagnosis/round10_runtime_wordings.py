"""Round 10's runtime signatures on wordings the corpus does not hold: other modules,
versions, libraries, tools (pip, uv, TensorFlow for Java, ROCm's HIP) and prefixes of the same failures.
Data only: the lists run behind every prefix in test_runtime_wordings_r7.py's tests, with
the earlier rounds'.

Every line was written for these tests from the tools' own message formats (their sources,
as resources/knowledge/sources.toml cites them); none is copied from the corpus.
"""

from __future__ import annotations

#: (lines, the id diagnosed first)
RUNTIME = [
    # Windows' STATUS_ILLEGAL_INSTRUCTION at import: Python 3.8+ and 3.7 loaders, faulthandler,
    # an IDE's exit code
    (["ImportError: DLL load failed with error code 3221225501 while importing _pywrap_tfe"],
     "cpu-instructions-missing"),
    (["ImportError: DLL load failed with error code 3221225501"], "cpu-instructions-missing"),
    (["Windows fatal exception: code 0xc000001d"], "cpu-instructions-missing"),
    (["Process finished with exit code -1073741795 (0xC000001D)"], "cpu-instructions-missing"),
    # an add-on linked against another major's libtensorflow_framework: dyld 4, Linux
    (["tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/Users/me/env/lib/"
      "python3.9/site-packages/tensorflow_io/core/python/ops/libtensorflow_io.so, 0x0006): "
      "Library not loaded: @rpath/libtensorflow_framework.2.dylib"], "tf-addon-abi-mismatch"),
    (["tensorflow.python.framework.errors_impl.NotFoundError: libtensorflow_framework.so.1: "
      "cannot open shared object file: No such file or directory"], "tf-addon-abi-mismatch"),
    # jaxlib's minimum check, for cuDNN as for the other libraries
    (["RuntimeError: Unable to initialize backend 'cuda': Unable to use CUDA because of the "
      "following issues with CUDA components:", "Outdated cuDNN installation found."],
     "cuda-lib-too-old"),
    # pip's words for a wheel file it cannot read
    (["ERROR: Wheel 'jaxlib' located at /tmp/dl/jaxlib-0.4.30-cp311-cp311-manylinux2014_"
      "x86_64.whl is invalid."], "wheel-file-invalid"),
    (["ERROR: tensorflow-gpu has an invalid wheel, could not read 'tensorflow_gpu-2.4.0."
      "dist-info/WHEEL' file: BadZipFile('Bad magic number for file header')"],
     "wheel-file-invalid"),
    (["ERROR: tf-nightly has an invalid wheel, .dist-info directory not found"],
     "wheel-file-invalid"),
    # TensorFlow for Java without a JNI library for this platform
    (["Exception in thread \"main\" java.lang.UnsatisfiedLinkError: Cannot find TensorFlow "
      "native library for OS: darwin, architecture: aarch64."], "wheel-python-mismatch"),
    # uv's resolver report
    (["  ╰─▶ Because tensorflow==2.16.1 has no wheels with a matching Python ABI tag (e.g., "
      "`cp313`) and you require tensorflow==2.16.1, we can conclude that your requirements "
      "are unsatisfiable."], "no-wheel-for-python"),
    (["      And because jaxlib>=0.4.31 has no wheels with a matching platform tag (e.g., "
      "`win32`) and you require jaxlib, we can conclude that your requirements are "
      "unsatisfiable."], "no-wheel-for-python"),
    # CUDA error 218 in cudaGetErrorString's words
    (["RuntimeError: CUDA error: a PTX JIT compilation failed"], "ptx-jit"),
    # ROCm's HIP: error 100, 2, 35, 209
    (["RuntimeError: HIP error: no ROCm-capable device is detected"], "cuinit-no-device"),
    (["jaxlib.xla_extension.XlaRuntimeError: INTERNAL: hipGetDeviceCount failed: "
      "hipErrorNoDevice"], "cuinit-no-device"),
    (["cudaGetDeviceCount returned cudaErrorNoDevice"], "cuinit-no-device"),
    (["torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
      "total capacity of 15.98 GiB of which 1.02 GiB is free."], "gpu-out-of-memory"),
    (["E0101 rocm_driver.cc:1049] failed to allocate 4.00GiB (4294967296 bytes) from "
      "device: hipErrorOutOfMemory"], "gpu-out-of-memory"),
    (["hipInit failed: hipErrorInsufficientDriver"], "driver-insufficient"),
    (["hipModuleLoadData failed: hipErrorNoBinaryForGpu"], "cc-not-in-build"),
    # NCCL's other results after a failed call
    (["ncclAllReduce failed: remote process exited or there was a network error"],
     "gpu-op-failed"),
    (["ncclCommInitRank failed: invalid usage (run with NCCL_DEBUG=WARN for details)"],
     "gpu-op-failed"),
    # the same failures in other tools' words: the kernel's log and a container's exit code
    # for SIGILL, the loader for libstdc++'s ABI version, cuDNN's status for mixed versions,
    # TensorFlow's device set-up, the driver's enum, newer NCCL, Poetry
    (["[ 4211.512345] traps: python3[20211] trap invalid opcode ip:7f3a1c2b4e10 sp:7ffd5a3c"
      "1e80 error:0 in _pywrap_tensorflow_internal.so[7f3a18000000+1f400000]"],
     "cpu-instructions-missing"),
    (["tf-serving-1 exited with code 132"], "cpu-instructions-missing"),
    (["ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `CXXABI_1.3.13' not "
      "found (required by /opt/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so)"],
     "import-glibc-too-old"),
    (["RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"], "cudnn-mismatch"),
    (["E tensorflow/stream_executor/cuda/cuda_dnn.cc:361] Could not create cudnn handle: "
      "CUDNN_STATUS_VERSION_MISMATCH"], "cudnn-mismatch"),
    (["tensorflow.python.framework.errors_impl.InternalError: cudaSetDevice() on GPU:1 "
      "failed. Status: out of memory"], "gpu-out-of-memory"),
    (["InternalError: ROCm runtime implicit initialization on GPU:0 failed. Status: out of "
      "memory"], "gpu-out-of-memory"),
    (["RuntimeError: cuDeviceGetCount(&count) failed: CUDA_ERROR_NO_DEVICE"],
     "cuinit-no-device"),
    (["gpu3:5512:5530 [2] NCCL WARN Error: failed to extend /dev/shm/nccl-a1B2c3 to 9637892 "
      "bytes, error: No space left on device (28)"], "container-shm-too-small"),
    (["ImportError: Python version mismatch: module was compiled for Python 3.11, but the "
      "interpreter version is incompatible: 3.12.3 (main, Apr 10 2024, 05:33:47) [GCC 13.2.0]."],
     "wheel-python-mismatch"),
    (["ImportError: Python version mismatch: module was compiled for version 3.6, while the "
      "interpreter is running version 3.7."], "wheel-python-mismatch"),
    (["ImportError: Module use of python310.dll conflicts with this version of Python."],
     "wheel-python-mismatch"),
    (["ImportError: dlopen(/Users/me/tf/lib/python3.6/site-packages/tensorflow/python/_pywrap_"
      "tensorflow_internal.so, 10): Library not loaded: @rpath/libcublas.9.0.dylib"],
     "import-cuda-lib-missing"),
    (["I0000 00:00:1712000000.000000 1 gpu_device.cc:2266] Ignoring visible gpu device "
      "(device: 0, name: AMD Radeon RX 6700 XT, pci bus id: 0000:03:00.0) with AMDGPU version "
      ": gfx1031. The supported AMDGPU versions are gfx900, gfx906, gfx908, gfx90a, gfx1030."],
     "cc-not-in-build"),
    (["rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal "
      "seek for GPU arch : gfx1032"], "cc-not-in-build"),
    (["ggml_cuda_init: failed to initialize CUDA: CUDA driver is a stub library"],
     "libcuda-not-found"),
    (["E0000 cuda_driver.cc:152] failed call to cuInit: INTERNAL: CUDA error: Failed call to "
      "cuInit: CUDA_ERROR_STUB_LIBRARY: CUDA driver is a stub library"], "libcuda-not-found"),
    (["tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor "
      "from /job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/"
      "device:GPU:0 in order to run _EagerConst: Dst tensor is not initialized."],
     "gpu-out-of-memory"),
    (["ERROR: Could not find a version that satisfies the requirement tflite-runtime (from "
      "versions: none)"], "no-wheel-for-python"),
    (["ERROR: No matching distribution found for jax-cuda12-plugin==0.4.35; extra == "
      "\"cuda12\""], "no-wheel-for-python"),
    (["RuntimeError: This version of jaxlib was built using AVX2 instructions, which your "
      "CPU and/or operating system do not support. You may be able work around this issue by "
      "building jaxlib from source."], "cpu-instructions-missing"),
    (["  RuntimeError", "", "  Unable to find installation candidates for "
      "tensorflow-io-gcs-filesystem (0.37.1)"], "no-wheel-for-python"),
]

#: lines that look like these failures and are not (nothing may be diagnosed)
QUIET = [
    # TensorFlow's own library without its framework library: a broken installation
    "dlopen(/Users/me/venv/lib/python3.11/site-packages/tensorflow/python/_pywrap_tensorflow_"
    "internal.so, 0x0002): Library not loaded: @rpath/libtensorflow_framework.2.dylib",
    # a crash that is not an illegal instruction, and a clean exit
    "Windows fatal exception: code 0xc0000005",
    "Process finished with exit code 0",
    # pip and uv at work
    "Processing ./tensorflow-2.16.1-cp311-cp311-manylinux_2_17_x86_64.whl",
    "Resolved 42 packages in 1.21s",
    # ROCm's and NCCL's notices of a working run
    "HIP version: 6.0.32830-d62f6a171",
    # other faults in the kernel's log, other exit codes, another package Poetry cannot place
    "[ 4211.5] traps: python3[20211] general protection fault ip:7f3a1c2b4e10 sp:7ffd5a3c1e80 "
    "error:0 in libc.so.6[7f3a18000000+195000]",
    "tf-serving-1 exited with code 137",
    "Unable to find installation candidates for pyqt5-qt5 (5.15.15)",
    "node1:123:456 [0] NCCL INFO comm 0x55d1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init "
    "COMPLETE",
]
