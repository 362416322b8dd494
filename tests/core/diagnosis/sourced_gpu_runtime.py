"""The gpu_runtime group's signatures (runtime.toml, speakers cuda-runtime, xla and
tf-runtime) on the messages their tools print, taken from the tools' own sources: the CUDA
driver's and runtime's error enums and strings, cuDNN's status names, TensorFlow's and TSL's
allocator, NCCL and GPU device messages. Data only: the lists run in
test_round7_build_signatures.py's and test_runtime_wordings_r7.py's tests, with the rounds'.

Every line was written for these tests from the tool's format string (the source named above
each, as resources/knowledge/sources.toml cites it), with plausible paths, sizes and
versions filled in; none is copied from the corpus.
"""

from __future__ import annotations

#: (lines, the id diagnosed first)
RUNTIME: list[tuple[list[str], str]] = [
    # TSL's BFC allocator (TF 2.x bfc_allocator.cc, AllocateRawInternal): the last try of an
    # allocation failed, "(rounded to %d)requested by op %s", without the dump after it
    (["W0000 00:00:1718000000.123456    4242 bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran "
      "out of memory trying to allocate 3.26GiB (rounded to 3502243840)requested by op "
      "model/dense_2/MatMul"], "gpu-out-of-memory"),
    # ... and with the op name empty, as jaxlib's XLA client leaves it
    (["Allocator (GPU_0_bfc) ran out of memory trying to allocate 12.50GiB (rounded to "
      "13421772800)requested by op "], "gpu-out-of-memory"),
    # cuDNN 8's cudnnStatus_t 2 by name, as a framework's cuDNN check raises it
    (["RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED"], "gpu-out-of-memory"),
    # NCCL's CUDACHECK (checks.h) on cudaMalloc, NCCL 2.18's log prefix with its file and
    # line, and the driver API's form with the error number
    (["node1:4242:4300 [1] include/alloc.h:185 NCCL WARN Cuda failure 'out of memory'"],
     "gpu-out-of-memory"),
    (["gpu7:881:990 [7] NCCL WARN Cuda failure 2 'out of memory'"], "gpu-out-of-memory"),
    # NCCL 2.19+ (shmutils.cc) with the system's error: its WARN line, and the same words
    # as PyTorch repeats NCCL's last error after "Last error:"
    (["node1:4242:4300 [0] misc/shmutils.cc:87 NCCL WARN Error: failed to extend "
      "/dev/shm/nccl-Qz3xLm to 33030532 bytes, error: No space left on device (28)"],
     "container-shm-too-small"),
    (["ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
      "device error.",
      "Last error:",
      "Error while creating shared memory segment /dev/shm/nccl-Qz3xLm (size 33030528), "
      "error: No space left on device (28)"], "container-shm-too-small"),
    (["Error: failed to create shared memory file /dev/shm/nccl-XXXXXX, error No space left on "
      "device (28)"], "container-shm-too-small"),
    # TensorFlow 2.x's NCCL collectives (nccl_manager.cc NCCL_RETURN_IF_ERROR), NCCL 2.x's
    # ncclGetErrorString words
    (["tensorflow.python.framework.errors_impl.InternalError: NCCL: unhandled system error. "
      "Set NCCL_DEBUG=WARN for detail. [Op:CollectiveReduceV2]"], "gpu-op-failed"),
    (["InternalError: NCCL: unhandled cuda error. Set NCCL_DEBUG=WARN for detail."],
     "gpu-op-failed"),
    # NCCL's result name with its detail, as PyTorch's ProcessGroupNCCL adds it (NCCL 2.14)
    (["ncclUnhandledCudaError: Call to CUDA function failed."], "gpu-op-failed"),
    (["ncclRemoteError: A call failed possibly due to a network error or a remote process "
      "exiting prematurely."], "gpu-op-failed"),
    # jaxlib without libcuda (versions_helpers.cc, gpu_kernel_helpers.cc), as jax's
    # xla_bridge logs it, and the same words for another call
    (["I0918 11:06:20.239907 140090094478592 xla_bridge.py:906] Unable to initialize backend "
      "'cuda': jaxlib/cuda/versions_helpers.cc:113: operation cuInit(0) failed: Unknown CUDA "
      "error 303; cuGetErrorName failed. This probably means that JAX was unable to load the "
      "CUDA libraries."], "libcuda-not-found"),
    (["RuntimeError: jaxlib/gpu/solver_kernels.cc:52: operation cuCtxGetDevice(&device) "
      "failed: Unknown CUDA error 303; cuGetErrorName failed. This probably means that JAX was "
      "unable to load the CUDA libraries."], "libcuda-not-found"),
    # TensorFlow 2.4's CUDA runtime stub without libcudart, and an old jaxlib's
    (["tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: "
      "cudaGetErrorString symbol not found."], "cudart-not-found"),
    (["RuntimeError: CUDA operation failed: cudaGetErrorString symbol not found."],
     "cudart-not-found"),
    # TensorFlow 1.12's convolution autotuning without DNN support (conv_ops.cc CHECK)
    (["2018-11-02 10:00:00.000000: F tensorflow/core/kernels/conv_ops.cc:712] Check failed: "
      "stream->parent()->GetConvolveAlgorithms( conv_parameters.ShouldIncludeWinogradNonfused"
      "Algo<T>(stream->parent()), &algorithms)"], "dnn-library-not-found"),
    # ... and TensorFlow 2.x's, raised from a Keras layer's convolution
    (["tensorflow.python.framework.errors_impl.InvalidArgumentError: Exception encountered "
      "when calling layer 'conv2d' (type Conv2D).",
      "",
      "No DNN in stream executor. [Op:Conv2D] name: "], "dnn-library-not-found"),
    # jax's compute capability check, as Python's warnings module prints it
    (["/opt/venv/lib/python3.10/site-packages/jax/_src/xla_bridge.py:752: RuntimeWarning: "
      "Device 0 has CUDA compute capability 3.7 which is lower than the minimum supported "
      "compute capability 5.2. See https://jax.readthedocs.io/en/latest/installation.html"
      "#nvidia-gpu for more details"], "cc-not-in-build"),
    # XLA with no usable ptxas: FindCudaExecutable's NOT_FOUND status as jaxlib raises it ...
    (["jaxlib.xla_extension.XlaRuntimeError: NOT_FOUND: Couldn't find a suitable version of "
      "ptxas. The following locations were considered: /opt/venv/lib/python3.11/site-packages"
      "/nvidia/cuda_nvcc/bin/ptxas, /usr/local/cuda/bin/ptxas"], "ptxas-too-old"),
    # ... nvptx_compiler.cc's fatal log ...
    (["F0312 08:00:00.000000   5150 nvptx_compiler.cc:640] Can't find ptxas binary.  You can "
      "pass the flag --xla_gpu_unsafe_fallback_to_driver_on_ptxas_not_found to use the GPU "
      "driver for compiling ptx instead. However this option is discouraged and can lead to "
      "increased memory consumptions and other subtle runtime issues."], "ptxas-too-old"),
    # ... and TensorFlow 2.4's XLA, its CHECK
    (["F tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:456] Check failed: "
      "hlo_module_config.debug_options().xla_gpu_unsafe_fallback_to_driver_on_ptxas_not_found()"
      " There was an error when trying to compile ptx into sass code. If you want to try "
      "falling back to the GPU driver to jit compile ptx, you can use the flag "
      "--xla_gpu_unsafe_fallback_to_driver_on_ptxas_not_found. Use at your own risk though, "
      "it has known drawbacks like increased memory consumption."], "ptxas-too-old"),
]

#: lines of the same tools that are no failure, or not these: diagnosed as nothing
QUIET = [
    # the BFC allocator's retry notice (bfc_allocator.cc): the caller goes on without it
    "W tensorflow/tsl/framework/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory "
    "trying to allocate 2.19GiB with freed_by_count=0. The caller indicates that this is not a "
    "failure, but this may mean that there could be performance gains if more memory were "
    "available.",
    # NCCL's CUDACHECKIGNORE: the same words at INFO, a failure it goes past
    "node1:4242:4300 [0] NCCL INFO Cuda failure 'out of memory'",
    # another program's System V segment, not NCCL's
    "Error while creating shared memory segment: No space left on device",
    # NCCL's version and transport notices of a working run
    "NCCL version 2.18.5+cuda12.2",
    "node1:4242:4300 [0] NCCL INFO Channel 00/02 :    0   1",
    # TensorFlow's INFO line for a small GPU beside a larger one (gpu_device.cc), 1.x and 2.x
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1469] Ignoring visible gpu device "
    "(device: 1, name: Quadro K620, pci bus id: 0000:02:00.0, compute capability: 5.0) with "
    "core count: 3. The minimum required count is 8. You can adjust this requirement with the "
    "env var TF_MIN_GPU_MULTIPROCESSOR_COUNT.",
    "Ignoring gpu device (device: 1, name: GeForce GT 710, pci bus id: 0000:03:00.0) with Cuda "
    "multiprocessor count: 1. The minimum required count is 8. You can adjust this "
    "requirement with the env var TF_MIN_GPU_MULTIPROCESSOR_COUNT.",
]

#: lines that are no failure of these signatures, though they name their words
NOT_THESE: list[tuple[str, set[str]]] = [
    # XLA's notice when it is allowed to fall back to the driver without ptxas: it goes on
    ("W external/xla/xla/service/gpu/nvptx_compiler.cc:698] Can't find ptxas binary in "
     "${CUDA_DIR}/bin.  Will back to the GPU driver for PTX -> sass compilation.  This is OK "
     "so long as you don't see a warning below about an out-of-date driver version. Custom "
     "ptxas location can be specified using $PATH.", {"ptxas-too-old"}),
    # the flag itself in a user's environment
    ("XLA_FLAGS=--xla_gpu_unsafe_fallback_to_driver_on_ptxas_not_found", {"ptxas-too-old"}),
]

#: lines the unrecognised fallback must not offer as a root cause (runtime.toml's
#: [[harmless]])
HARMLESS = [
    "2026-01-02 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:2019] "
    "Ignoring visible gpu device (device: 1, name: NVIDIA T400, pci bus id: 0000:65:00.0, "
    "compute capability: 7.5) with core count: 6. The minimum required count is 8. You can "
    "adjust this requirement with the env var TF_MIN_GPU_MULTIPROCESSOR_COUNT.",
    # TSL's BFC allocator refusing an optional allocation (bfc_allocator.cc), TF 2.15's path
    "2024-03-01 10:00:00.000000: W external/local_tsl/tsl/framework/bfc_allocator.cc:291] "
    "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.02GiB with freed_by_count=0. "
    "The caller indicates that this is not a failure, but this may mean that there could be "
    "performance gains if more memory were available.",
    # tf.data at an iterator's end (generator_dataset_op.cc, root_dataset.cc), TF 2.1 and 2.9
    "2021-02-03 10:00:00.000000: W tensorflow/core/kernels/data/generator_dataset_op.cc:103] "
    "Error occurred when finalizing GeneratorDataset iterator: Failed precondition: Python "
    "interpreter state is not initialized. The process may be terminated.",
    "2022-07-01 10:00:00.000000: W tensorflow/core/data/root_dataset.cc:247] Optimization loop "
    "failed: CANCELLED: Operation was cancelled",
    # the profiler's GPU tracer without CUPTI (cupti_tracer.cc, dso_loader.cc), TF 2.5
    "2021-06-01 10:00:00.000000: E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1415] "
    "function cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)ApiCallback, "
    "this)failed with error CUPTI could not be loaded or symbol could not be found.",
    "2021-06-01 10:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:64]"
    " Could not load dynamic library 'libcupti.so.11.2'; dlerror: libcupti.so.11.2: cannot open "
    "shared object file: No such file or directory",
]
