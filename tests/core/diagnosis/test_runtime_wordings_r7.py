"""Round 7's runtime signatures (and round 8's, whose lines test_runtime_wordings_r8 lists)
match the stable part of a message in its other wordings: other add-ons, libraries,
versions and tools than the corpus's excerpts show, behind the prefixes CI systems and
launchers put before a line.

Every line here was written for this test from the tools' own message formats (their
sources, as resources/knowledge/sources.toml cites them); none is copied from the corpus.
"""

from __future__ import annotations

import pytest

from tests.core.diagnosis import round10_runtime_wordings as r10
from tests.core.diagnosis import sourced_gpu_runtime as sg
from tests.core.diagnosis import sourced_python_runtime as spr
from tests.core.diagnosis import sourced_s19 as s19
from tests.core.diagnosis import sourced_s20 as s20
from tests.core.diagnosis import test_runtime_wordings_r8 as r8
from tests.core.diagnosis import wordings
from tests.core.test_rule_wordings import PREFIXES
from tfwizard.core.diagnosis.runtime import diagnose, diagnose_log
from tfwizard.core.diagnosis.unrecognised import root_lines

#: (lines, the id diagnosed first)
WORDINGS = [
    # an add-on's native ops built for another TensorFlow: other add-ons, namespaces, loaders
    (["tensorflow.python.framework.errors_impl.NotFoundError: /opt/conda/lib/python3.10/"
      "site-packages/tensorflow_addons/custom_ops/activations/_activation_ops.so: undefined "
      "symbol: _ZN3tsl6StatusC1EN4absl12lts_2023080212StatusCodeESt17basic_string_viewIcSt11"
      "char_traitsIcEENS_14SourceLocationE"], "tf-addon-abi-mismatch"),
    (["caused by: ['/usr/local/lib/python3.9/dist-packages/tensorflow_io/python/ops/"
      "libtensorflow_io.so: undefined symbol: _ZN10tensorflow11register_op19OpDefBuilder"
      "Wrapper10SetShapeFnESt8functionIFNS_6StatusEPNS_15shape_inference16InferenceContext"
      "EEE']"], "tf-addon-abi-mismatch"),
    (["ImportError: /usr/local/lib/python3.8/dist-packages/horovod/tensorflow/mpi_lib.cpython"
      "-38-x86_64-linux-gnu.so: undefined symbol: _ZNK10tensorflow8OpKernel11TraceStringERK"
      "NS_15OpKernelContextEb"], "tf-addon-abi-mismatch"),
    (["tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/Users/me/venv/lib/"
      "python3.11/site-packages/tensorflow_text/python/ops/_regex_split_ops.dylib, 0x0006): "
      "Symbol not found: __ZN10tensorflow8OpKernel11TraceStringERKNS_15OpKernelContextEb"],
     "tf-addon-abi-mismatch"),
    # LLVM's NVPTX back end: another PTX version and GPU, and an LLVM that lacks the GPU
    (["LLVM Fatal Error: PTX version 8.6 does not support target 'sm_103a'. Minimum "
      "required PTX version is 8.8."], "xla-ptx-version-below-gpu-minimum"),
    (["'sm_121' is not a recognized processor for this target (ignoring processor)"],
     "xla-ptx-version-below-gpu-minimum"),
    # XLA's refusal of a bad ptxas, in another release's log format
    (["E0000 00:00:1718000000.000000 1234 nvptx_compiler.cc:700] INTERNAL: ptxas 12.9.41 "
      "has a bug that we think can affect XLA. Please use a different version."],
     "ptxas-known-bad-version"),
    (["2025-01-01 10:00:00.000000: F external/xla/xla/service/gpu/nvptx_compiler.cc:700] ptxas "
      "returned an error during compilation of ptx to sass: 'INTERNAL: ptxas 12.9.41 has a bug t"
      "hat we th", "ink can affect XLA. Please use a different version.'"],
     "ptxas-known-bad-version"),
    # the PJRT check: another plugin, the major-version form, the minimum under compatibility
    (["RuntimeError: Unable to initialize backend 'METAL': INVALID_ARGUMENT: Mismatched PJRT "
      "plugin PJRT API version (0.47) and framework PJRT API version 0.54)."],
     "pjrt-plugin-version-mismatch"),
    (["INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API major version (1) and framework "
      "PJRT API major version 0)."], "pjrt-plugin-version-mismatch"),
    (["INVALID_ARGUMENT: Plugin PJRT API version 0.40 is older than the minimum supported "
      "version 0.45"], "pjrt-plugin-version-mismatch"),
    # jaxlib's CUDA library check for other libraries; its cuDNN one is a cuDNN mismatch
    (["CUDA backend failed to initialize: Found cuSOLVER version 11405, but JAX was built "
      "against version 11502, which is newer. The copy of cuSOLVER that is installed must "
      "be at least as new as the version against which JAX was built."], "cuda-lib-too-old"),
    (["Unable to use CUDA because of the following issues with CUDA components:",
      "Outdated cuBLAS installation found."], "cuda-lib-too-old"),
    (["CUDA backend failed to initialize: Found cuDNN version 8700, but JAX was built "
      "against version 8904, which is newer."], "cudnn-mismatch"),
    # jaxlib's minimum check names cuDNN like the others (round 10's label)
    (["Outdated cuDNN installation found."], "cuda-lib-too-old"),
    (["RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) "
      "but found runtime version (8, 9, 2)."], "cudnn-mismatch"),
    # ptxas too old: XLA's newer check, ptxas's own words for another ISA, an older check
    (["jaxlib.xla_extension.XlaRuntimeError: INTERNAL: XLA requires ptxas version 11.8 or "
      "higher"], "ptxas-too-old"),
    (["ptxas /tmp/kernel_7f3a.ptx, line 5; fatal   : Unsupported .version 7.8; current "
      "version is '7.4'", "ptxas fatal   : Ptx assembly aborted due to errors"],
     "ptxas-too-old"),
    (["W asm_compiler.cc:60] You are using ptxas 10.0.130, but TF requires ptxas 10.1 or "
      "newer."], "ptxas-too-old"),
    # a CPU without the wheel's instructions, as other shells and tools report the signal
    (["./serve.sh: line 12:  4242 Illegal instruction     (core dumped) python3 serve.py"],
     "cpu-instructions-missing"),
    (["[1]+  Illegal instruction     (core dumped) python -c 'import tensorflow'"],
     "cpu-instructions-missing"),
    (["zsh: illegal hardware instruction  python3 -c 'import tensorflow'"],
     "cpu-instructions-missing"),
    (["Process finished with exit code 132 (interrupted by signal 4: SIGILL)"],
     "cpu-instructions-missing"),
    (["Fatal Python error: Illegal instruction"], "cpu-instructions-missing"),
    # libcuda missing, as the loader says it to any program
    (["python3: error while loading shared libraries: libcuda.so.1: cannot open shared "
      "object file: No such file or directory"], "libcuda-not-found"),
    (["OSError: libcuda.so: cannot open shared object file: No such file or directory"],
     "libcuda-not-found"),
    (["RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
      "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"],
     "libcuda-not-found"),
    # jaxlib's check of a library it cannot load at all: the runtime, another library
    (["CUDA backend failed to initialize: Unable to load CUDA. Is it installed?"],
     "cudart-not-found"),
    (["CUDA backend failed to initialize: Unable to load cuSPARSE. Is it installed?"],
     "dlopen-failed"),
    # CUDA's error 804 and an old driver, in PyTorch's words
    (["UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Error "
      "804: forward compatibility was attempted on non supported HW"],
     "compat-not-supported"),
    (["AssertionError: The NVIDIA driver on your system is too old (found version 10010). "
      "Please update your GPU driver."], "driver-insufficient"),
    # an XLA out-of-memory in the older status words, wrapped by a console
    (["E local_client.cc:1] Execution of replica 0 failed: Resource exhausted: Failed to ",
      "allocate request for 1.00GiB (1073741824B) on device ordinal 0"], "gpu-out-of-memory"),
    # cuDNN's own loader: cuDNN 8 on Linux, Windows, cuDNN 9
    (["Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: "
      "cannot open shared object file: No such file or directory"], "dlopen-failed"),
    (["Could not locate zlibwapi.dll. Please make sure it is in your library path!"],
     "dlopen-failed"),
    (["Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, "
      "libcudnn_cnn.so}", "Invalid handle. Cannot load symbol cudnnCreateConvolution"
      "Descriptor"], "dlopen-failed"),
    (["Unable to load any of {libcudnn_graph.so.9.10.1, libcudnn_graph.so.9.10, "
      "libcudnn_graph.so.9, libcudnn_graph.so}"], "dlopen-failed"),
    # a wheel without the GPU's architecture, in PyTorch's words
    (["UserWarning: NVIDIA GeForce RTX 5080 with CUDA capability sm_120 is not compatible "
      "with the current PyTorch installation."], "cc-not-in-build"),
    # NCCL failing: PyTorch's, Horovod's, XLA's words, the result code's name
    (["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
      "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for "
      "details), NCCL version 2.20.5"], "gpu-op-failed"),
    (["horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled "
      "cuda error"], "gpu-op-failed"),
    (["INTERNAL: external/xla/xla/service/gpu/runtime/nccl_api.cc:530: NCCL operation "
      "ncclGroupEnd() failed: remote process exited or there was a network error."],
     "gpu-op-failed"),
    (["RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:514, "
      "internal error, NCCL version 2.7.8"], "gpu-op-failed"),
    # Python's own words for a module that is not there (Python 3 and 2)
    (["ModuleNotFoundError: No module named 'tensorflow'"], "import-failed"),
    (["ImportError: No module named tensorflow_hub"], "import-failed"),
]

#: lines that look like these failures and are not (nothing may be diagnosed)
QUIET = [
    # a GPU kernel's illegal instruction is CUDA error 715, not the CPU's
    "RuntimeError: CUDA error: an illegal instruction was encountered",
    # NCCL's notices of a working run
    "node1:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
    "node1:123:456 [0] NCCL WARN Failed to open libibverbs.so[.1]",
    # an optional import a library reports and goes past
    "W0101 12:00:00.000000 140 import_utils.py:9] Failed to import optional module: No "
    "module named 'tensorrt'",
    # a gRPC message over the size limit is RESOURCE_EXHAUSTED too, but not memory
    "Resource exhausted: grpc: received message larger than max (5000000 vs. 4194304)",
]


def _ids(found) -> list[str]:
    return [d.id for d in found]


ALL_WORDINGS = WORDINGS + r8.WORDINGS + [case for m in wordings.RUNTIME_LISTS
                                          for case in m.RUNTIME]


@pytest.mark.parametrize(("lines", "sig"), ALL_WORDINGS, ids=[c[1] for c in ALL_WORDINGS])
def test_other_wordings_are_recognised_behind_any_prefix(lines, sig):
    for prefix in PREFIXES:
        found = diagnose_log([prefix + line for line in lines])
        assert _ids(found)[:1] == [sig], (prefix, _ids(found))


@pytest.mark.parametrize("line", QUIET + r8.QUIET + r10.QUIET + sg.QUIET + spr.NEAR_MISSES)
def test_look_alike_lines_stay_quiet(line):
    assert _ids(diagnose_log([line])) == []


@pytest.mark.parametrize(("line", "not_these"), sg.NOT_THESE + s19.NOT_THESE + s20.NOT_THESE)
def test_near_misses_are_not_those_messages(line, not_these):
    assert not not_these & set(_ids(diagnose_log([line])))


@pytest.mark.parametrize("line", sg.HARMLESS)
def test_harmless_lines_are_no_root_cause_lines(line):
    assert not root_lines([line], "runtime").lines


def test_the_messages_put_their_values_in_the_words():
    found = diagnose_log(["RuntimeError: cuDNN version incompatibility: PyTorch was compiled "
                          " against (9, 1, 0) but found runtime version (8, 9, 2)."])[0]
    assert "8.9.2" in found.cause and "9.1.0" in found.cause
    found = diagnose_log(["Outdated cuDNN installation found."])[0]
    assert "{" not in found.cause  # no version in the line: said in words, no placeholder
    found = diagnose_log(["Found cuFFT version 11002, but JAX was built against version "
                          "11200, which is newer."])[0]
    assert "cuFFT" in found.cause and "11002" in found.cause and "11200" in found.cause
    found = diagnose_log(["Mismatched PJRT plugin PJRT API version (0.54) and framework "
                          "PJRT API version 0.51)."])[0]
    assert "0.54" in found.cause and "0.51" in found.cause
    found = diagnose_log(["RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: "
                          "Unexpected PJRT_Client_Create_Args size: expected 88, got 72. The "
                          "plugin is likely built with a later version than the framework. This "
                          "plugin is built with PJRT API version 0.64."])[0]
    assert found.id == "pjrt-plugin-version-mismatch"
    assert "0.64" in found.cause and "{" not in found.cause  # the framework's: in words
    found = diagnose_log(["LLVM ERROR: PTX version 8.4 does not support target 'sm_120'. "
                          "Minimum required PTX version is 8.7"])[0]
    assert "sm_120" in found.cause
    found = diagnose_log(["ImportError: /v/site-packages/tensorflow_text/core/pybinds/"
                          "tflite_registrar.so: undefined symbol: _ZN3tsl8internal10LogMessage"
                          "D1Ev"])[0]
    assert found.id == "tf-addon-abi-mismatch"
    assert "/v/site-packages/tensorflow_text/core/pybinds/tflite_registrar.so" in found.cause
    found = diagnose_log(["Could not load library libcudnn_cnn_infer.so.8. Error: "
                          "libnvrtc.so: cannot open shared object file: No such file or "
                          "directory"])[0]
    assert found.id == "dlopen-failed" and "libcudnn_cnn_infer.so.8" in found.cause


def test_an_import_error_the_probe_reported_is_said_once_in_the_facts_words():
    """The probe's import error is also scanned as a log line; the check it matches is the
    one the facts already reported, so it is not said twice."""
    error = "ModuleNotFoundError: No module named 'tensorflow'"
    found = diagnose({"stage": "done", "tensorflow": None, "import_error": error}, None,
                     python="/p/py")
    assert _ids(found) == ["import-failed"]
    assert error in found[0].cause and found[0].evidence == [error]
