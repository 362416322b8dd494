"""The linkers', Apple's tools', the JVM's neighbours', the compilers', the downloaders' and
the CUDA stubs' own words added in session 18, as their sources word them (sources.toml's
xcode-messages-s18, jvm-oom-messages-s18, linker-messages-s18, toolchain-messages-s18,
download-messages-s18, host-tool-messages-s18, bazel-host-messages-s18,
remote-messages-s18, gpu-configure-messages-s18, container-pip-messages-s18 and
cuda-runtime-messages-s18). Data only: the lists run in test_round7_build_signatures.py's
and test_runtime_wordings_r7.py's tests, found by wordings.py.

Every line was written for these tests from the speaking tool's format string, filled in
with plausible paths and values; many were printed by GNU ld 2.40, gold, gcc 12.2, clang 16
and CUDA 13.0's tools made to fail. Apple's closed tools' lines follow their words as
printed in public threads.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # Xcode: the newer license words, current macOS's capital N, any Xcode-only tool,
    # Bazel 3.x-6.x's Apple crosstool without an Xcode version, xcrun's DEVELOPER_DIR and
    # Command Line Tools refusals, an Apple SDK that is gone
    ("xcode-not-found", ["You have not agreed to the Xcode and Apple SDKs license. You must "
                         "agree to the license below in order to use Xcode."]),
    ("xcode-not-found", ["xcode-select: note: No developer tools were found, requesting "
                         "install. If developer tools are located at a non-default location "
                         "on disk, use `sudo xcode-select --switch path/to/Xcode.app` to "
                         "specify the Xcode that you wish to use for command line developer "
                         "tools, and cancel the installation dialog."]),
    ("xcode-not-found", ["xcode-select: error: tool 'ibtool' requires Xcode, but active "
                         "developer directory '/Library/Developer/CommandLineTools' is a "
                         "command line tools instance"]),
    ("xcode-not-found", ["Error: 'NoneType' value has no field or method 'compare_to'"]),
    ("xcode-not-found", ["xcrun: error: invalid DEVELOPER_DIR path "
                         "(/Applications/Xcode_15.2.app/Contents), missing xcrun at: "
                         "/Applications/Xcode_15.2.app/Contents/usr/bin/xcrun"]),
    ("xcode-not-found", ["xcrun: error: unable to lookup item 'PlatformPath' from command "
                         "line tools installation"]),
    ("xcode-not-found", ["clang: warning: no such sysroot directory: '/Applications/Xcode.app"
                         "/Contents/Developer/Platforms/MacOSX.platform/Developer/SDKs/"
                         "MacOSX10.15.sdk' [-Wmissing-sysroot]"]),
    # the Bazel server's JVM: Netty's direct memory, the kernel's OOM killer, Windows'
    # paging file
    ("bazel-server-oom", ["io.netty.util.internal.OutOfDirectMemoryError: failed to allocate "
                          "16777216 byte(s) of direct memory (used: 8120172847, max: "
                          "8135442432)"]),
    ("bazel-server-oom", ["[123456.789012] Out of memory: Killed process 4242 (java) "
                          "total-vm:20971520kB, anon-rss:8388608kB, file-rss:0kB, "
                          "shmem-rss:0kB, UID:1000 pgtables:20480kB oom_score_adj:0"]),
    ("bazel-server-oom", ["OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory("
                          "0x00000000c0000000, 1073741824, 0) failed; error='The paging file "
                          "is too small for this operation to complete.' (DOS error/errno="
                          "1455)"]),
    # the linkers
    ("link-error", ["collect2: fatal error: cannot find ‘ld’"]),
    ("link-error", ["collect2: fatal error: ld terminated with signal 11 [Segmentation "
                    "fault]"]),
    ("link-error", ["clang: error: linker command failed due to signal (use -v to see "
                    "invocation)"]),
    ("link-error", ["/usr/bin/ld: t.o: relocation R_X86_64_TPOFF32 against hidden symbol "
                    "`tv' can not be used when making a shared object"]),
    ("link-error", ["/usr/bin/ld: final link failed: bad value"]),
    ("link-error", ["/usr/bin/ld: 最后的链结失败: bad value"]),
    ("link-error", ["/usr/bin/ld.gold: --push-state: unknown option",
                    "/usr/bin/ld.gold: use the --help option for usage information"]),
    ("link-error", ["/usr/bin/ld.gold: internal error in maybe_apply_stub, at "
                    "../../gold/aarch64.cc:5407"]),
    ("link-error", ["lld-link: error: /failifmismatch: mismatch detected for "
                    "'RuntimeLibrary':"]),
    ("link-error", ["lld-link: error: too many exported symbols (got 67387, max 65535)"]),
    ("link-error", ["ld.lld: error: can't create dynamic relocation R_X86_64_64 against local "
                    "symbol in readonly segment; recompile object files with -fPIC or pass "
                    "'-Wl,-z,notext' to allow text relocations in the output"]),
    ("link-error", ["ld.lld-17: error: undefined symbol: memset"]),
    ("link-error", ["/usr/bin/ld: error: tr400.o: file too short"]),
    ("link-error", ["/usr/bin/ld: i386 architecture of input file `a32.o' is incompatible "
                    "with i386:x86-64 output"]),
    ("link-error", ["nvlink fatal   : No input files specified; use option --help for more "
                    "information"]),
    ("link-error", ["ld: 32-bit RIP relative reference out of range (2147483700 max is "
                    "+/-2GB): from _foo (0x00001000) to _bar (0x80001234) for architecture "
                    "x86_64"]),
    ("link-error", ["ld: unrecognised emulation mode: aarch64linux"]),
    # compilers and the CUDA toolkit
    ("compiler-version-unsupported", ["b.cc:2:34: error: ‘remove_if’ is not a member of "
                                      "‘std’; did you mean ‘remove’?"]),
    ("compiler-version-unsupported", ["h.cc:2:89: error: no member named 'count_if' in "
                                      "namespace 'std'; did you mean '__count_if'?"]),
    ("compiler-version-unsupported", ["b.cc:3:1: note: ‘std::optional’ is only available "
                                      "from C++17 onwards"]),
    ("compiler-version-unsupported", ["d.cc:2:10: error: ISO C++17 does not allow dynamic "
                                      "exception specifications"]),
    ("cuda-arch-unsupported", ["ptxas t.ptx, line 2; fatal   : Unsupported .target "
                               "'sm_100a'"]),
    ("cuda-toolkit-too-old", ["ptxas /tmp/tmpxft_00005a94_00000000-6_asm.ptx, line 29; "
                              "error   : Not a name of any known instruction: "
                              "'cp.async.bulk'"]),
    ("nvcc-host-compiler-unsupported", ["nvcc fatal   : The version ('17.0') of the host "
                                        "compiler ('Apple clang') is not supported"]),
    # downloads
    ("download-failed", ["ERROR: HTTP error 503 while getting https://files.pythonhosted.org/"
                         "packages/ab/cd/numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl"]),
    ("download-failed", ["fatal: unable to access 'https://github.com/abseil/abseil-cpp/': "
                         "Failed connect to github.com:443; Connection timed out"]),
    ("download-failed", ["curl: (6) Could not resolve: mirror.bazel.build (Could not contact "
                         "DNS servers)"]),
    ("download-failed", ["ssh: connect to host github.com port 22: Connection timed out"]),
    ("download-failed", ["kex_exchange_identification: read: Connection reset by peer"]),
    ("download-failed", ["urllib.error.HTTPError: HTTP Error 404: Not Found"]),
    ("download-failed", ["urllib.error.ContentTooShortError: <urlopen error retrieval "
                         "incomplete: got only 12582912 out of 52428800 bytes>"]),
    ("download-failed", ["wget: unable to resolve host address ‘storage.googleapis.com’"]),
    ("bazelisk-download-failed", [
        "2025/06/01 10:00:00 could not download Bazel: failed to download bazel: failed to "
        "download bazel: HTTP GET https://releases.bazel.build/6.1.0/release/"
        "bazel-6.1.0-linux-arm64 failed with error 404"]),
    ("bazelisk-download-failed", ["2026/01/10 09:00:00 could not download Bazel: failed to "
                                  "download bazel: failed to download bazel: not found"]),
    # the build host's missing tools
    ("bazel-sh-not-set", ["Python Configuration Error: Cannot find bash in PATH, please make sure "
                          "bash is installed and add its directory in PATH, or --define "
                          "BAZEL_SH='/path/to/bash'."]),
    ("bazel-sh-not-set", ["java.io.IOException: ERROR: src/main/native/windows/process.cc(202): "
                          "CreateProcessW(\"bash\" -c \"patch '-p1' < C:/users/me/proj/third_party/"
                          "x.patch\"): The system cannot find the file specified."]),
    ("bazel-sh-not-set", ["'bash' is not recognized as an internal or external command,"]),
    ("swig-missing", ["ERROR: /root/.cache/bazel/_bazel_root/abc/external/swig/BUILD.bazel:13:1: "
                      "output 'external/swig/swiglink' was not created"]),
    ("swig-missing", ["which: no swig in (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin)"]),
    ("swig-missing", ["/bin/sh: 1: SWIG_EXECUTABLE-NOTFOUND: not found"]),
    ("patch-command-missing", [
        "java.io.IOException: ERROR: src/main/native/windows/process.cc(202): CreateProcessW("
        "\"patch\" -p1 -d C:/users/me/_bazel_me/abc/external/protobuf -i C:/src/third_party/"
        "protobuf/add_noinlines.patch): The system cannot find the file specified."]),
    # Bazel's own refusals on the host
    ("bazel-sandbox-mount-failed", ["ERROR: /src/BUILD:3:1: Compiling foo.cc failed: I/O "
                                    "exception during sandboxed execution: [unix_jni.cc:382] "
                                    "/dev/shm (No such file or directory)"]),
    ("bazel-sandbox-mount-failed", ["ERROR: /src/BUILD:3:1: Compiling c/dec/state.c failed: "
                                    "Could not copy inputs into sandbox: /root/.cache/bazel/x/"
                                    "include/a.h (Permission denied)"]),
    ("bazel-sandbox-mount-failed", ["ERROR: /w/BUILD:1:1: Executing genrule //:x failed: Mount "
                                    "source '/root/.cache/bazel/x/execroot/org_tensorflow/data' "
                                    "does not exist."]),
    ("bazel-user-unknown", ["FATAL: mkdir('/.cache/bazel/_bazel_builder'): (error: 13): "
                            "Permission denied"]),
    ("bazel-user-unknown", ["2024/05/01 10:00:00 could not create directory /.cache/bazelisk: "
                            "mkdir /.cache: permission denied"]),
    ("bazel-user-unknown", ["sudo: you do not exist in the passwd database"]),
    ("bazel-config-undefined", ["ERROR: Config value '' is not defined in any .rc file"]),
    # the GPU configure rules, clang's HIP driver
    ("cuda-config-not-found", ["Cannot find clang, either correct your path or set the "
                               "CLANG_CUDA_COMPILER_PATH environment variable"]),
    ("rocm-config-failed", ["clang: error: unsupported HIP gpu architecture: gfx1036"]),
    ("rocm-config-failed", ["clang: error: invalid target ID 'gfx90a:xnack'; format is a "
                            "processor name followed by an optional colon-delimited list of "
                            "features followed by an enable/disable sign (e.g., "
                            "'gfx908:sramecc+:xnack-')"]),
    # the GPU in a container, pip inside the build
    ("docker-gpu-driver", ["docker: Error response from daemon: failed to create task for "
                           "container: failed to create shim task: OCI runtime create failed: "
                           "could not apply required modification to OCI specification: error "
                           "modifying OCI spec: failed to inject CDI devices: unresolvable CDI "
                           "devices nvidia.com/gpu=all: unknown."]),
    ("docker-gpu-driver", ["docker: Error response from daemon: error gathering device "
                           "information while adding custom device \"/dev/nvidia0\": no such "
                           "file or directory."]),
    ("docker-gpu-driver", ["nvidia-container-cli: mig-config error: invalid MIG configuration"]),
    ("hermetic-python-requirement-build-failed", [
        "ERROR: repo.execute: whl_library.ExtractWheel(pypi_312_numpy, numpy-2.1.3-cp312-cp312-"
        "manylinux_2_17_x86_64.whl): end: failure:"]),
    # remote services and registries
    ("remote-unavailable", ["ERROR: /src/BUILD:3:1: Compiling foo.cc failed: Exec failed due to "
                            "IOException: java.net.UnknownHostException: cache.example.com"]),
    ("remote-deadline-exceeded", ["ERROR: /src/BUILD:3:1: Compiling foo.cc failed: unable to "
                                  "finalize action: 504 Gateway Time-out"]),
    ("remote-no-runner", ["ERROR: /src/BUILD:3:1: Compiling foo.cc failed: Invalid Argument: No "
                          "matching action runner found"]),
    ("remote-no-runner", ["ERROR: /src/BUILD:3:1: Compiling foo.cc failed: UNAVAILABLE: Workers "
                          "for this instance name, platform and size class disappeared while "
                          "task was queued"]),
    ("registry-access-denied", ["Error response from daemon: Head \"https://us-docker.pkg.dev/v2/"
                                "p/r/tf/manifests/2.17\": denied: Permission \"artifactregistry."
                                "repositories.downloadArtifacts\" denied on resource"]),
    ("registry-access-denied", ["Error: initializing source docker://nvcr.io/nvidia/tensorflow:"
                                "24.01-tf2-py3: reading manifest 24.01-tf2-py3 in nvcr.io/nvidia/"
                                "tensorflow: authentication required"]),
]
#: the ids BUILD_NEAR_MISSES must not be diagnosed as
NOT_BUILD = {"link-error", "xcode-not-found", "bazel-server-oom", "compiler-version-unsupported",
             "cuda-toolkit-too-old", "nvcc-host-compiler-unsupported", "download-failed",
             "bazel-sandbox-mount-failed", "remote-unavailable", "remote-deadline-exceeded",
             "swig-missing", "bazel-config-undefined", "docker-gpu-driver"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # warnings links that succeed print
    "/usr/bin/ld: warning: GNU indirect functions with DT_TEXTREL may result in a segfault at "
    "runtime; recompile with -fPIC",
    "ld.lld: warning: undefined symbol: foo",
    "nvlink warning : SM Arch ('sm_35') not found in 'libfoo.a:bar.o'",
    "lld-link: warning: duplicate symbol: foo",
    "clang: error: clang frontend command failed due to signal (use -v to see invocation)",
    # Bazel's per-Xcode print in a build that passes
    "DEBUG: /private/var/tmp/_bazel_u/x/external/bazel_tools/tools/osx/xcode_configure.bzl:93:"
    "14: Invoking xcodebuild failed, developer dir: /Applications/Xcode-beta.app/Contents/"
    "Developer ,return code 69, stderr: Agreeing to the Xcode/iOS license requires admin "
    "privileges, please run “sudo xcodebuild -license” and then retry this command.",
    # a Linux cross sysroot; another program than Bazel's JVM killed
    "clang: warning: no such sysroot directory: '/opt/sysroots/aarch64-linux-gnu' "
    "[-Wmissing-sysroot]",
    "Out of memory: Killed process 4242 (javac) total-vm:20971520kB, anon-rss:8388608kB",
    # gcc's warning form, nvcc's warning, ptxas' statistics
    "h.cc:4:10: warning: ISO C++17 does not allow ‘register’ storage class specifier "
    "[-Wregister]",
    "nvcc warning : Unrecognized version of Apple clang ('17.0'). Compilation continues "
    "with the default options.",
    "ptxas info    : Used 8 registers, 352 bytes cmem[0]",
    # a mirror's fallback the build gets past; a 401 (a private index's login)
    "DEBUG: /x/external/rules_ml_toolchain/common/mirrored_http_archive.bzl:94:14: Failed to "
    "download mirrored tar file: https://mirror.example/cuda.tar.xz",
    "ERROR: HTTP error 401 while getting https://pypi.example.com/simple/numpy/",
    # an I/O exception that names another tool's failure; a full disk; a remote cache's
    # failure Bazel falls back from; Bazel's old warning for an undefined config
    "ERROR: /x/BUILD:1:1: Compiling foo failed: I/O exception during sandboxed execution: "
    "xcrun failed with code 1.",
    "ERROR: /x/BUILD:1:1: Compiling foo failed: Could not copy inputs into sandbox: /t/a.h (No "
    "space left on device)",
    "WARNING: Reading from Remote Cache: connection timed out: cache.example.com/10.0.0.1:443",
    "WARNING: Failed to query remote execution capabilities: UNAVAILABLE: io exception",
    "WARNING: Config value '' is not defined in any .rc file",
    "INFO: From Executing genrule @swig//:lnswiglink:",
    "-- SWIG_EXECUTABLE: SWIG_EXECUTABLE-NOTFOUND",
    # AMD's device nodes: not NVIDIA's toolkit
    "docker: Error response from daemon: error gathering device information while adding "
    "custom device \"/dev/kfd\": no such file or directory.",
]

#: (a program's output, the id diagnosed first)
RUNTIME: list[tuple[list[str], str]] = [
    (["E0000 00:00:1774280007.952579  246635 cuda_executor.cc:1737] INTERNAL: CUDA Runtime "
      "error: Failed call to cudaGetRuntimeVersion: Error loading CUDA libraries. GPU will not "
      "be used.: Error loading CUDA libraries. GPU will not be used."], "cudart-not-found"),
    (["WARNING: jax 0.4.13 does not provide the extra 'cuda12-pip'"], "jaxlib-without-cuda"),
    (["warning: The package `jax==0.6.0` does not have an extra named `cuda12-pip`"],
     "jaxlib-without-cuda"),
    (["RuntimeError: Unable to initialize backend 'cuda':  (set JAX_PLATFORMS='' to "
      "automatically choose an available backend)"], "jaxlib-without-cuda"),
    (["RuntimeError: Backend 'cuda' failed to initialize: . Available backends are ['cpu']"],
     "jaxlib-without-cuda"),
    (["ImportError: libcupti.so.11.7: cannot open shared object file: No such file or "
      "directory"], "import-cuda-lib-missing"),
    (["Exception in thread \"main\" java.lang.UnsatisfiedLinkError: /tmp/tensorflow_native_"
      "libraries-1536621740227-0/libtensorflow_jni.so: libcublas.so.9.0: cannot open shared "
      "object file: No such file or directory"], "import-cuda-lib-missing"),
    (["W0000 00:00:1774280007.952826  246748 cuda_executor.cc:1755] Failed to determine cuDNN "
      "version (Note that this is expected if the application doesn't link the cuDNN plugin): "
      "INTERNAL: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"], "dlopen-failed"),
    (["RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty("
      "MAJOR_VERSION, &major) failed: The cuSPARSE library was not found."], "dlopen-failed"),
    (["ModuleNotFoundError: No module named 'keras.api._v2'"], "keras3-over-tf215"),
    # glibc's words for a versioned symbol an older CUDA library lacks (new and old glibc)
    (["ImportError: /usr/local/lib/python3.10/dist-packages/nvidia/cusparse/lib/"
      "libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version libnvJitLink.so.12"],
     "cuda-lib-too-old"),
    (["OSError: /usr/local/cuda/lib64/libcublas.so.11: symbol cublasLtHSHMatmulAlgoInit version "
      "libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference"],
     "cuda-lib-too-old"),
]
