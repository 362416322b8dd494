"""The build signatures round 7 of the real-log corpus added or widened, on wordings the
corpus does not hold: other versions, quotes, prefixes and wrapping of the same failures
(the corpus's own excerpts are checked by test_real_logs_diagnosis.py)."""

from __future__ import annotations

import pytest

from tests.core.diagnosis import test_round8_build_signatures as r8
from tests.core.diagnosis import wordings
from tfwizard.core.diagnosis.build import diagnose
from tfwizard.core.diagnosis.unrecognised import root_lines

#: the later rounds' and the sourced lists of build lines (BUILD, NOT_BUILD, BUILD_NEAR_MISSES)
LISTS = wordings.BUILD_LISTS

CASES: list[tuple[str, list[str]]] = [
    # a CUDA toolkit older than the sources: the standard, newer options, newer headers
    ("cuda-toolkit-too-old", ["nvcc fatal   : Value 'c++14' is not defined for option 'std'"]),
    ("cuda-toolkit-too-old", ["[1,0]<stderr>:nvcc fatal : Value ‘c++20’ is not defined for "
                              "option ‘std’"]),
    ("cuda-toolkit-too-old", ["nvcc fatal   : Unknown option '--threads'"]),
    ("cuda-toolkit-too-old", ["nvcc fatal   : Unknown option '-split-compile'"]),
    ("cuda-toolkit-too-old", ["external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:20:10: "
                              "fatal error: cuda_fp8.h: No such file or directory"]),
    ("cuda-toolkit-too-old", ["xla/types.h:5:10: fatal error: 'cuda_bf16.h' file not found"]),
    # nvcc's older, lower-case wording of an architecture it does not know
    ("cuda-arch-unsupported", ["nvcc fatal: unsupported GPU architecture 'compute_89'"]),
    ("cuda-arch-unsupported", ["nvcc fatal   : Unsupported gpu architecture 'sm_120a'"]),
    # XLA's configure without nvidia-smi: the log line (wrapped), the function that dies
    ("cuda-capabilities-undetected", [
        "INFO:root:Could not find nvidia-smi, or nvidia-smi comm",
        "and failed. Please pass capabilities directly using --cuda_compute_capabil",
        "ities."]),
    ("cuda-capabilities-undetected", [
        "    cuda_compute_capabilities = _get_cuda_compute_capabilities_or_die()"]),
    # Bazel's JVM out of memory under its old name, or out of threads
    ("bazel-server-oom", ["FATAL: Blaze ran out of memory and crashed. Printing stack trace:"]),
    ("bazel-server-oom", ['Exception in thread "skyframe-evaluator-12" '
                          "java.lang.OutOfMemoryError: unable to create new native thread"]),
    ("bazel-server-oom", ["00:30:13 unable to create new native thread"]),
    # what a newer Bazel dropped that an older workspace uses
    ("bazel-config-undefined", ["ERROR: Config value 'mkl' is not defined in any .rc file"]),
    ("bazel-config-undefined", ["ERROR: Config value cuda_wheel is not defined in any .rc file"]),
    ("bazel-version-mismatch", [
        'ERROR: /src/WORKSPACE:12:1: The native git_repository rule is deprecated. '
        'load("@bazel_tools//tools/build_defs/repo:git.bzl", "git_repository") for a drop-in '
        "replacement."]),
    ("bazel-version-mismatch", ["Error in register_toolchains: register_toolchains() got "
                                "unexpected keyword argument 'dev_dependency'"]),
    ("bazel-version-mismatch", ["ERROR: --enable_workspace :: Unrecognized option: "
                                "--enable_workspace"]),
    ("bazel-version-mismatch", ["ERROR: --noexperimental_check_desugar_deps :: Unrecognized "
                                "option: --noexperimental_check_desugar_deps"]),
    # docker's --runtime=nvidia without the toolkit's runtime registered
    ("docker-gpu-driver", ["docker: Error response from daemon: Unknown runtime specified "
                           "nvidia."]),
    # gRPC's UNAVAILABLE from the remote module, any reason
    ("remote-unavailable", ["Caused by: io.grpc.StatusRuntimeException: UNAVAILABLE: Network "
                            "closed for unknown reason"]),
    # nvcc's device linker
    ("link-error", ["nvlink error   : Multiple definition of '_Z3foov' in 'a.o', first "
                    "defined in 'b.o'"]),
    ("link-error", ["nvlink error   : Undefined reference to '_ZN4xla3fooEv' in "
                    "'bazel-out/k8-opt/bin/x.o' (target: sm_80)"]),
    # find_cuda_config.py crashing on what it found (any of its functions, any checkout)
    ("cuda-config-not-found", [
        '  File "/root/.cache/bazel/_bazel_root/0a1b/external/local_xla/third_party/gpus/'
        'find_cuda_config.py", line 648, in main']),
    # git and Bazel's git client that cannot reach the server
    ("download-failed", ["fatal: unable to access 'https://github.com/abseil/abseil-cpp.git/': "
                         "Failed to connect to github.com port 443: Connection timed out"]),
    ("download-failed", ["ERROR: /src/WORKSPACE:3:1: no such package '@boringssl//': Error "
                         "cloning repository: https://boringssl.googlesource.com/boringssl: "
                         "cannot open git-upload-pack"]),
    # a commit, tag or branch the remote or the checkout does not have
    ("git-ref-not-found", ["fatal: reference is not a tree: 4b2e5c0d6f1a8e9b7c3d2f1e0a9b8c7d"
                           "6e5f4a3b"]),
    ("git-ref-not-found", ["error: Server does not allow request for unadvertised object "
                           "4b2e5c0d6f1a8e9b7c3d2f1e0a9b8c7d6e5f4a3b"]),
    ("git-ref-not-found", ["error: pathspec 'v2.99.0' did not match any file(s) known to git"]),
    # nvcc's front end names the line in parentheses
    ("compile-error", ['xla/stream_executor/gpu/redzone_kernel.cu(34): error: identifier '
                       '"frob" is undefined']),
    # lld's other words, objects built without -fPIC
    ("link-error", ["ld.lld: error: undefined hidden symbol: absl::Mutex::Lock()"]),
    ("link-error", ["/usr/bin/ld: foo.o: relocation R_X86_64_32 against `.rodata' can not be "
                    "used when making a shared object; recompile with -fPIC"]),
    # coreutils' env in a UTF-8 locale
    ("python-not-on-path", ["/usr/bin/env: ‘python’: No such file or directory"]),
    # gcc in Chinese
    ("python-headers-missing", ["tensorflow/python/lib/core/bfloat16.cc:16:10: 致命错误："
                                "Python.h：没有那个文件或目录"]),
    ("numpy-headers-missing", ["./tensorflow/python/lib/core/numpy.h:27:10: 致命错误："
                               "numpy/arrayobject.h：没有那个文件或目录"]),
    # an analysis failure, in the old and the new wording, nothing more specific known
    ("build-failed", ["ERROR: Analysis of target '//tensorflow/tools/pip_package:"
                      "build_pip_package' failed; build aborted."]),
    ("build-failed", ["ERROR: /src/BUILD:12:8: Analysis of target '//x:y' failed"]),
]


@pytest.mark.parametrize(("sig_id", "lines"),
                         CASES + r8.CASES + [case for m in LISTS for case in m.BUILD])
def test_other_wordings_of_round_7_s_failures(sig_id, lines):
    assert [d.id for d in diagnose(["INFO: Analyzed 3 targets.", *lines])] == [sig_id]


NEAR_MISSES = [
    "nvcc fatal   : Unknown option '-Wall'",  # an option no toolkit knows: not its age
    "nvcc fatal   : Value 'sm_35' is not defined for option 'gpu-architecture'",
    "INFO: Found applicable config definition build:cuda in file /src/.bazelrc",
    "INFO:root:Found CUDA compute capabilities: ['8.6']",
    "ERROR: --frobnicate :: Unrecognized option: --frobnicate",  # a typo, not a version
]
NOT_THESE = {"cuda-toolkit-too-old", "cuda-capabilities-undetected", "bazel-version-mismatch"}


@pytest.mark.parametrize(("line", "not_these"),
                         [(line, NOT_THESE) for line in NEAR_MISSES]
                         + [(line, r8.NOT_THESE) for line in r8.NEAR_MISSES]
                         + [(line, m.NOT_BUILD) for m in LISTS for line in m.BUILD_NEAR_MISSES])
def test_near_misses_are_not_those_causes(line, not_these):
    ids = [d.id for d in diagnose([line])]
    assert not not_these & set(ids), line


def test_an_analysis_failure_with_a_known_cause_reports_the_cause():
    found = diagnose([
        "ERROR: /src/BUILD:50:5: in apple_cc_toolchain rule @local_config_cc//:cc: Xcode "
        "version must be specified to use an Apple CROSSTOOL.",
        "ERROR: Analysis of target '//x:y' failed; build aborted: Analysis failed"])
    assert [d.id for d in found] == ["xcode-not-found"]


def test_a_script_s_incorrect_version_line_is_a_root_cause_line():
    found = root_lines(["+ bazel --version", "bazel 7.4.1",
                        "Incorrect version of Bazel installed (want 6.5.0)."], "build")
    assert [line.line for line in found.lines] == [3]
    assert found.query == "Incorrect version of Bazel installed want"


def test_an_eviction_bazel_built_past_is_not_the_cause():
    """Bazel 7 and later rebuild after the remote cache lost an input: an eviction before the
    retry line is cleared, one after it is the failure."""
    evicted = ("ERROR: /tf/BUILD:5:1: Linking x.so failed: Lost inputs no longer available "
               "remotely: bazel-out/k8-opt/bin/x.a (0b1c/12)")
    retry = "Found transient remote cache error, retrying the build..."
    assert "remote-cache-evicted" not in [d.id for d in diagnose([evicted, retry])]
    assert [d.id for d in diagnose([retry, evicted])] == ["remote-cache-evicted"]
