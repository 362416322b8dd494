"""Round 10's build signatures on wordings the corpus does not hold: other versions, tools,
quotes and prefixes of the same failures. Data only: the lists run in
test_round7_build_signatures.py's tests, with the earlier rounds'.

Every line was written for these tests from the tools' own message formats (their sources,
as resources/knowledge/sources.toml cites them); none is copied from the corpus.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # -- round 10's tuning misses, in other words ---------------------------------------
    # a CRLF .bazelversion: escaped by a program that captured the launcher's output, a raw
    # carriage return, the line it overwrote, the apt hint
    ("bazelversion-crlf", ["RuntimeError: b\"ERROR: The project you're trying to build "
                           "requires Bazel 6.5.0\\r (specified in /w/.bazelversion), but it "
                           "wasn't found in /usr/bin.\""]),
    ("bazelversion-crlf", ["ERROR: The project you're trying to build requires Bazel 7.4.1\r "
                           "(specified in /src/.bazelversion), but it wasn't found in "
                           "/usr/local/lib/bazel/bin."]),
    ("bazelversion-crlf", ["  (specified in /home/me/tf/.bazelversion), but it wasn't found in "
                           "/usr/bin."]),
    ("bazelversion-crlf", ["  sudo apt update && sudo apt install bazel-6.1.0\\r\\n"]),
    # dyld without its pid, or naming another tool apple_support linked
    ("wrapped-clang-missing-lc-uuid", ["dyld[512]: missing LC_UUID load command in /private/var/"
                                       "tmp/_bazel_ci/0f/execroot/_main/bazel-out/darwin-opt-"
                                       "exec/bin/external/apple_support~/crosstool/libtool"]),
    ("wrapped-clang-missing-lc-uuid", ["dyld: missing LC_UUID load command"]),
    # a built-in provider that moved out of Bazel, under the old and new wording
    ("bazel-version-mismatch", ["ERROR: /src/BUILD:40:10: in deps attribute of py_proto_library "
                                "rule //x:y_py_pb2: '//x:y_proto' does not have mandatory "
                                "providers: 'ProtoInfo'"]),
    ("bazel-version-mismatch", ["ERROR: /w/BUILD:3:1: in cc_binary rule //a:b: '//a:c' does "
                                "not have mandatory provider 'CcInfo'."]),
    ("bazel-version-mismatch", ["ERROR: /src/third_party/BUILD:9:1: error loading package "
                                "'@local_config_cc//': cannot load "
                                "'@@local_config_cc//:cc_toolchain_config.bzl': no such file"]),
    ("bazel-version-mismatch", ["\tFile \"/root/.cache/bazel/_bazel_root/ab/external/org_"
                                "tensorflow/tensorflow/tensorflow.bzl\", line 30, in "
                                "_parse_bazel_version"]),
    # std::function without <functional>: gcc's other contexts, clang's words
    ("compiler-version-unsupported", ["xla/service/cpu/runtime.h:12:8: error: 'function' in "
                                      "namespace 'std' does not name a template type"]),
    ("compiler-version-unsupported", ["tsl/platform/env.h:40:10: error: no template named "
                                      "'function' in namespace 'std'"]),
    ("compiler-version-unsupported", ["./tensorflow/core/util/work.h:5:3: note: 'std::function' "
                                      "is defined in header '<functional>'; did you forget to "
                                      "'#include <functional>'?"]),
    # Spack's quoted build log: an x86 option an old gcc does not know, with its marker
    ("compiler-version-unsupported", ["  >> 311    g++: error: unrecognized command-line option "
                                      "'-mavx512fp16'"]),
    # Bazel 0.x's crosstool without the CPU
    ("cc-toolchain-unresolved", ["ERROR: No toolchain found for cpu 'ppc'. Valid cpus are: ["]),
    # Xcode: xcodebuild's SDK words, Bazel's explanation, apple_support's check
    ("xcode-not-found", ['xcodebuild: error: SDK "iphonesimulator16.4" cannot be located.']),
    ("xcode-not-found", ["This most likely indicates that SDK version [13.3] for platform "
                         "[iOS] is unsupported for the target version of xcode."]),
    ("xcode-not-found", ["Error in fail: Could not determine Xcode version at all. This likely "
                         "means Xcode isn't available; if you think this is a mistake, please "
                         "file an issue."]),
    ("xcode-not-found", ['xcrun: error: unable to find utility "clang", not a developer tool '
                         "or in PATH"]),
    ("xcode-not-found", ["xcode-select: note: no developer tools were found at "
                         "'/Applications/Xcode.app', requesting install."]),
    ("xcode-not-found", ["ERROR: An error occurred during the fetch of repository "
                         "'local_config_xcode': Invoking xcode-locator failed, return code 1, "
                         "stderr: , stdout:"]),
    # Go's certificate errors (bazelisk, docker), with and without crypto/tls's prefix
    ("download-certificate-untrusted", [
        "2024/05/02 09:01:02 could not download Bazel: HTTP GET https://releases.bazel.build/"
        "7.1.1/release/bazel-7.1.1-linux-arm64 failed: Get \"https://releases.bazel.build/7.1."
        "1/release/bazel-7.1.1-linux-arm64\": tls: failed to verify certificate: x509: "
        "certificate is valid for proxy.corp, not releases.bazel.build"]),
    ("download-certificate-untrusted", ["Error response from daemon: Get \"https://registry-1."
                                        "docker.io/v2/\": x509: certificate signed by unknown "
                                        "authority"]),
    ("download-certificate-untrusted", ["curl: (60) SSL certificate problem: certificate has "
                                        "expired"]),
    ("download-certificate-untrusted", ["Caused by: java.security.cert.CertificateExpiredExcept"
                                        "ion: NotAfter: Sat Jan 04 12:00:00 UTC 2025"]),
    # a certificate for another host name (the JDK's, curl's and wget's words)
    ("download-certificate-untrusted", [
        "Caused by: javax.net.ssl.SSLHandshakeException: No subject alternative DNS name "
        "matching mirror.bazel.build found."]),
    ("download-certificate-untrusted", ["curl: (60) SSL: no alternative certificate subject "
                                        "name matches target host name 'github.com'"]),
    ("download-certificate-untrusted", ["ERROR: cannot verify github.com's certificate, issued "
                                        "by 'CN=Corp Proxy CA':"]),
    # Go's network errors
    ("download-failed", ["Get \"https://releases.bazel.build/bazel-latest\": proxyconnect tcp: "
                         "dial tcp 10.1.1.1:3128: connect: connection refused"]),
    ("download-failed", ["2023/01/01 00:00:00 could not download Bazel: Get \"https://github.com/"
                         "bazelbuild/bazel/releases/download/6.1.0/bazel-6.1.0-linux-x86_64\": "
                         "dial tcp: lookup github.com on 127.0.0.53:53: no such host"]),
    ("download-failed", ["Error response from daemon: Get \"https://registry-1.docker.io/v2/\": "
                         "net/http: TLS handshake timeout"]),
    ("download-failed", ["Get \"https://storage.googleapis.com/x\": dial tcp 142.250.1.1:443: "
                         "i/o timeout"]),
    # Nix's fixed-output hash, newer wording and fetchurl's
    ("download-checksum-mismatch", ["error: hash mismatch in fixed-output derivation '/nix/store/"
                                    "abc-bazel-deps.drv':"]),
    ("download-checksum-mismatch", ["error: hash mismatch in file downloaded from 'https://"
                                    "mirror.bazel.build/x.tar.gz':"]),
    # the GPU stub toolchain of ./configure without GPU, for ROCm
    ("configure-not-run", ["ERROR: Building with --config=rocm but TensorFlow is not "
                           "configured to build with GPU support. Please re-run ./configure "
                           "and enter 'Y' at the prompt to build with GPU support."]),
    # cuda_configure's traceback through its lookup (newer Bazels say "column" too)
    ("cuda-config-not-found", ["\tFile \"/w/external/local_xla/third_party/gpus/"
                               "cuda_configure.bzl\", line 1120, column 30, in "
                               "_get_cuda_config"]),
    # find_rocm_config.py on another component
    ("rocm-config-failed", ['ConfigError: rocBLAS version file "/opt/rocm-6.1.0/include/rocblas/'
                            'internal/rocblas-version.h" not found']),
    # -- part B: other wordings from the tools' sources ---------------------------------
    # lld's and Apple's new ld's missing library; mold's
    ("link-error", ["ld.lld: error: unable to find library -lcudart_static"]),
    ("link-error", ["ld: library 'tensorflow_framework' not found"]),
    ("link-error", ["mold: fatal: library not found: cublasLt"]),
    # a CPU name an older compiler does not know (gcc x86 new and old wording, aarch64,
    # clang)
    ("compiler-version-unsupported", ["cc1plus: error: bad value 'znver5' for '-march=' "
                                      "switch"]),
    ("compiler-version-unsupported", ["cc1: error: bad value (graniterapids) for -march= "
                                      "switch"]),
    ("compiler-version-unsupported", ["cc1: error: unknown value 'armv9.2-a' for '-march'"]),
    ("compiler-version-unsupported", ["clang: error: unknown target CPU 'arrowlake'"]),
    ("compiler-version-unsupported", ["clang-14: error: unsupported argument 'armv9.2-a+sme' to "
                                      "option '-march='"]),
    # clang for an ARM target given an x86 CPU
    ("x86-flags-on-arm", ["clang: error: unsupported argument 'x86-64-v3' to option '-march='"]),
    # lld's duplicate symbols
    ("link-error", ["ld.lld: error: duplicate symbol: tsl::port::Malloc(unsigned long)"]),
    ("link-error", ["lld-link: error: duplicate symbol: TF_NewStatus in a.obj and in b.lib"]),
    # grpc-java's newer words for a remote call past its deadline
    ("remote-deadline-exceeded", ["ERROR: /w/BUILD:1:1: Executing genrule //:x failed: (Exit 34)"
                                  ": DEADLINE_EXCEEDED: Deadline exceeded after 59.999s."]),
    ("remote-deadline-exceeded", ["io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: "
                                  "ClientCall started after CallOptions deadline was exceeded "
                                  "-3.2 seconds ago."]),
    # newer Bazels' warning for a remote cache they went on without
    ("remote-cache-unusable", ["WARNING: Remote Cache: UNAVAILABLE: io exception",
                               "Caused by: connection refused: cache.lan/10.0.0.5:9092"]),
    # a GPU by its CDI name without the toolkit's CDI specification
    ("docker-gpu-driver", ["Error: setting up CDI devices: unresolvable CDI devices "
                           "nvidia.com/gpu=all"]),
    ("docker-gpu-driver", ["docker: Error response from daemon: could not apply required "
                           "modification to OCI specification: error modifying OCI spec: failed "
                           "to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=0."]),
    # an image the registry has for other architectures only
    ("container-image-wrong-arch", ["docker: no matching manifest for linux/arm64/v8 in the "
                                    "manifest list entries."]),
    ("container-image-wrong-arch", ["ERROR: failed to solve: tensorflow/build:2.16-python3.11: "
                                    "no matching manifest for linux/arm64 in the manifest list "
                                    "entries: not found"]),
    # git's transfer over HTTP(S) cut off
    ("download-failed", ["error: RPC failed; curl 56 GnuTLS recv error (-9): A TLS packet with "
                         "unexpected length was received."]),
    ("download-failed", ["error: RPC failed; curl 92 HTTP/2 stream 5 was not closed cleanly: "
                         "CANCEL (err 8)"]),
    # the JVM (Bazel's server) without native memory, as hs_err prints it
    ("bazel-server-oom", ["# There is insufficient memory for the Java Runtime Environment to "
                          "continue."]),
    # LLVM's allocation failure (clang, lld), and rustc's prefix of it
    ("oom-compiler-killed", ["LLVM ERROR: out of memory"]),
    ("oom-compiler-killed", ["rustc-LLVM ERROR: out of memory"]),
    # a docker CLI without --gpus
    ("docker-gpu-driver", ["unknown flag: --gpus"]),
    # dash's words for a missing python
    ("python-not-on-path", ["/bin/sh: 1: python: not found"]),
    # libstdc++'s C++ ABI version missing for a prebuilt tool
    ("build-glibc-too-old", ["/root/.cache/bazel/_bazel_root/install/ab/embedded_tools/process-"
                             "wrapper: /lib64/libstdc++.so.6: version `CXXABI_1.3.9' not found "
                             "(required by /root/.cache/bazel/_bazel_root/install/ab/process-"
                             "wrapper)"]),
    # Windows' disk full
    ("disk-full", ["C:\\tmp\\x.obj : fatal error C1083: Cannot open compiler intermediate "
                   "file: 'C:\\tmp\\x.obj': There is not enough space on the disk."]),
    # git switch / checkout -b from a start point git does not know
    ("git-ref-not-found", ["fatal: invalid reference: r2.99"]),
    ("git-ref-not-found", ["fatal: 'origin/r2.99' is not a commit and a branch 'r2.99' cannot "
                           "be created from it"]),
]

#: the ids the near misses below must not be diagnosed as
NOT_BUILD = {"bazelversion-crlf", "bazel-version-mismatch", "wrapped-clang-missing-lc-uuid",
             "compiler-version-unsupported", "download-failed", "download-certificate-untrusted",
             "rocm-config-failed", "cuda-config-not-found", "xcode-not-found",
             "container-image-wrong-arch", "python-not-on-path"}

#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # the launcher's message for a plain missing version, wrapped after the version: no \r
    "(specified in /src/WORKSPACE), but it wasn't found in /usr/bin.",
    # a rule set's own provider missing from a target: the BUILD file's, not the Bazel's
    "ERROR: /w/BUILD:3:1: in deps attribute of my_rule rule //a:b: '//a:c' does not have "
    "mandatory providers: 'MyInfo'",
    # Bazel's hint on every C++ toolchain resolution failure of Bazel 1.x-3.x
    "Maybe --incompatible_use_cc_configure_from_rules_cc has been flipped and there is no "
    "default C++ toolchain added in the WORKSPACE file?",
    # configure.py's check that cannot run `bazel version`: any reason (no user, old glibc)
    '  File "./configure.py", line 478, in check_bazel_version',
    # an ARM -march on an x86 gcc, and a known value's note: not the compiler's age
    "cc1: error: bad value ('armv8-a') for '-march=' switch",
    "cc1: note: valid arguments to '-march=' switch are: nocona core2 nehalem",
    # clang on macOS without -march=native, and an ARMv7 value on aarch64: not an old clang
    "clang++: error: unsupported argument 'native' to option '-march='",
    "clang: error: unsupported argument 'armv7-a' to option '-march='",
    # Go's other TLS and network words that say nothing of the download
    "http: TLS handshake error from 10.0.0.2:5000: EOF",
    "dial unix /var/run/docker.sock: connect: permission denied",
    # a version file of something else
    'ConfigError: Foo version file "/x" not found',
    # git's RPC failure with the server's HTTP status: an answer, not the network
    "error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403",
    # Python itself missing a module is not python missing
    "/bin/sh: 1: pythonx: not found",
    # dyld's other complaints
    "dyld[812]: Library not loaded: @rpath/libtensorflow_framework.2.dylib",
    # xcodebuild's other errors
    "xcodebuild: error: 'App.xcodeproj' does not exist.",
]
