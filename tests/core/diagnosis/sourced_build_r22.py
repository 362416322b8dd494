"""Build wordings mined from the tools' own sources and runs, by readers who saw neither the
corpus nor its held-out misses: linkers (GNU ld, gold, lld, mold, ld64), the version checks
of the libraries TensorFlow builds with (Abseil, protobuf, Eigen, MSVC's STL, CUDA's CCCL),
Bazel's Starlark interpreter for a source written for another Bazel (runs of Bazel 0.26 and
2.1), its sandbox strategies, OOM handler and Xcode configuration, the network in the JDK's,
curl's, CPython's, urllib3's, pip's and grpc-java's words, the container toolkit's, and
cuda_configure's and find_rocm_config's; a second pass: Bzlmod, the Java toolchain flags,
gcc's and clang's newer default errors, gcc given clang's options, the shell, the user
(git, OpenSSH, Python, Go, BusyBox), patch, a registry (containerd, Podman), an executor
pool (BuildBuddy); a third: what breaks between Bazel releases (Bazel's incompatible
changes, rules_cc's, apple_support's and bazel_features' checks, JAX's build script); a
fourth: rules_python's wheel builds, TF 0.x's SWIG check, Bazel's Xcode words, HotSpot's
memory. Data only: the wording tests run it behind every prefix (wordings.BUILD_LISTS)."""

from __future__ import annotations

#: the id diagnosed alone after an unrelated line, and the lines
BUILD: list[tuple[str, list[str]]] = [
    ("link-error", ["/usr/bin/ld: /lib/x86_64-linux-gnu/libm.so.6: error adding symbols: DSO "
                    "missing from command line"]),
    ("link-error", ["/usr/bin/ld: ./libg.a: error adding symbols: archive has no index; run "
                    "ranlib to add one"]),
    ("link-error", ["/usr/bin/ld: cannot find /tmp/exp/nonexist.o: No such file or directory"]),
    ("link-error", ["/usr/bin/ld.gold: error: cannot open /tmp/exp/nonexist.o: No such file or "
                    "directory"]),
    ("link-error", ["foo.o:(.text+0x1a): relocation truncated to fit: R_X86_64_PC32 against "
                    "symbol `bar' defined in .bss section in baz.o"]),
    ("link-error", ["ld: symbol(s) not found for architecture arm64"]),
    ("link-error", ["ld: 2 duplicate symbols for architecture x86_64"]),
    ("link-error", ["mold: error: undefined symbol: tensorflow::Status::Status()"]),
    ("link-error", ["ld.lld: error: undefined reference due to --no-allow-shlib-undefined: "
                    "std::__throw_bad_array_new_length()@GLIBCXX_3.4.29"]),
    ("compiler-version-unsupported", [
        "external/com_google_absl/absl/base/policy_checks.h:61:2: error: #error \"This package "
        "requires GCC 7 or higher.\""]),
    ("compiler-version-unsupported", [
        "external/com_google_protobuf/src/google/protobuf/port_def.inc:215:15: error: static "
        "assertion failed: Protobuf only supports GCC 7.3 and newer."]),
    ("compiler-version-unsupported", [
        "external/eigen_archive/Eigen/src/Core/util/Macros.h:709:2: error: #error Eigen "
        "requires at least c++14 support."]),
    ("compiler-version-unsupported", [
        "C:\\VS\\include\\yvals_core.h(902): error C2338: static_assert failed: 'error STL1001:"
        " Unexpected compiler version, expected MSVC 19.40 or newer.'"]),
    ("compiler-version-unsupported", [
        "external/nasm/asm/nasm.c:42:19: error: implicit declaration of function 'foo' "
        "[-Wimplicit-function-declaration]"]),
    ("cuda-toolkit-too-old", [
        "/usr/local/cuda/include/cccl/cuda/std/__cccl/compiler.h:172:4: error: #error \"CUDA "
        "versions below 12 are not supported.\" \"Define CCCL_IGNORE_DEPRECATED_CUDA_BELOW_12 "
        "to suppress this message.\""]),
    ("xcode-not-found", ["Error in fail: xcodebuild can't be found neither in DEVELOPER_DIR nor "
                         "by name"]),
    ("xcode-not-found", ["ERROR: --xcode_version=15.2 specified, but '15.2' is not an available"
                         " Xcode version. available versions: []. If you believe you have "
                         "'15.2' installed, try running \"bazel shutdown\", and then re-run "
                         "your command."]),
    ("swig-missing", ["  Could NOT find SWIG (missing: SWIG_EXECUTABLE SWIG_DIR)"]),
    ("docker-gpu-driver", ["docker: Error response from daemon: could not select device driver "
                           "\"cdi\" with capabilities: []."]),
    ("docker-gpu-driver", [
        "time=\"2025-01-01T00:00:00Z\" level=error msg=\"failed to create NVIDIA Container "
        "Runtime: failed to construct OCI spec modifier: requirements not met: unsatisfied "
        "condition: cuda>=12.4 (cuda=12.2)\""]),
    ("cuda-config-not-found", ["Could not find any libcudnn.so.8* in any subdirectory:"]),
    ("cuda-config-not-found", ["None of the libraries match their SONAME: "
                               "/usr/local/cuda/lib64/libcudart.so.11.0"]),
    ("rocm-config-failed", ["ERROR: hipfft version file "
                            "\"/opt/rocm/hipfft/include/hipfft-version.h\" not found"]),
    ("rocm-config-failed", ["ERROR: ROCm version file not found in "
                            "['include/rocm-core/rocm_version.h', 'include/rocm_version.h']"]),
    ("download-failed", ["fatal: unable to access 'https://github.com/abseil/abseil-cpp.git/': "
                         "OpenSSL SSL_read: Connection reset by peer, errno 104"]),
    ("download-failed", ["fatal: unable to access 'https://github.com/x/y.git/': GnuTLS recv "
                         "error (-54): Error in the pull function."]),
    ("download-failed", ["Caused by: javax.net.ssl.SSLHandshakeException: Remote host "
                         "terminated the handshake"]),
    ("download-failed", ["urllib.error.URLError: <urlopen error [Errno 111] Connection "
                         "refused>"]),
    ("download-failed", ["curl: (28) Operation too slow. Less than 1000 bytes/sec transferred "
                         "the last 30 seconds"]),
    ("download-failed", ["java.io.IOException: Unable to tunnel through proxy. Proxy returns "
                         "\"HTTP/1.1 403 Forbidden\""]),
    ("remote-deadline-exceeded", [
        "ERROR: /w/BUILD:3:10: Compiling foo.cc failed: (Exit 34): DEADLINE_EXCEEDED: Deadline "
        "CallOptions will be exceeded in 59.999868471s. "]),
    ("remote-deadline-exceeded", [
        "ERROR: Failed to query remote execution capabilities: DEADLINE_EXCEEDED: deadline "
        "exceeded: -0.000123456s from now"]),
    ("download-checksum-mismatch", [
        "ERROR: /w/WORKSPACE:10:1: java.io.IOException: Downloaded file at /root/.cache/x.tar.gz"
        " has SHA-256 of 0123abcd, does not match expected SHA-256 (4567ef01)"]),
    ("bazel-version-mismatch", [
        "ERROR: /tmp/bz/t/union/defs.bzl:1:5: `+` operator on a depset is forbidden. See "
        "https://docs.bazel.build/versions/master/skylark/depsets.html for recommendations. Use"
        " --incompatible_depset_union=false to temporarily disable this check."]),
    ("bazel-version-mismatch", [
        "ERROR: /tmp/bz/t/remot/defs.bzl:3:5: parameter 'remotable' is experimental and thus "
        "unavailable with the current flags. It may be enabled by setting "
        "--experimental_repo_remote_exec"]),
    ("bazel-version-mismatch", ["ERROR: /tmp/bz/t/iter/defs.bzl:1:5: type 'depset' is not "
                                "iterable"]),
    ("bazel-version-mismatch", [
        "ERROR: /work/tensorflow/tensorflow/tensorflow.bzl:1234:30: invalid escape sequence: "
        "\\.. Use '\\\\' to insert '\\'."]),
    ("bazel-version-mismatch", [
        "ERROR: /tmp/bz/t/remot/defs.bzl:3:5: unexpected keyword 'remotable', for call to "
        "function repository_rule(implementation, attrs = None, local = False, environ = [], "
        "doc = '')"]),
    ("bazel-version-mismatch", ["ERROR: /tmp/bz/t/strm/defs.bzl:1:5: type 'string' has no "
                                "method removeprefix()"]),
    ("bazel-version-mismatch", ["ERROR: /tmp/bz/t/dictor/defs.bzl:1:5: unsupported operand "
                                "type(s) for |: 'dict' and 'dict'"]),
    ("bazel-version-mismatch", ["ERROR: /tmp/bz/t/cfgexec/defs.bzl:1:5: cfg must be either "
                                "'host' or 'target'."]),
    ("bazel-version-mismatch", [
        "ERROR: The toplevel symbol 'CcInfo' set by --incompatible_load_symbols_externally "
        "couldn't be loaded. 'CcInfo' not found in auto loaded "
        "'@rules_cc//cc/common:cc_info.bzl'."]),
    ("bazel-version-mismatch", ["ERROR: Unrecognized option: "
                                "--java_runtime_version=remotejdk_11"]),
    ("bazel-sandbox-mount-failed", [
        "ERROR: 'linux-sandbox' is an invalid value for linux-sandbox spawn strategy. Valid "
        "values are: local, processwrapper-sandbox, sandboxed, standalone, worker"]),
    ("bazel-sandbox-mount-failed", [
        "ERROR: 'linux-sandbox' was requested for default strategies but no strategy with that "
        "identifier was registered. Valid values are: [processwrapper-sandbox, worker, "
        "standalone, local]"]),
    ("bazel-server-oom", ["Exiting as if we OOM'd because SIGUSR2 received, presumably from "
                          "JVM"]),
    # the second pass: Bzlmod, the Java toolchain flags, older gcc and newer clang defaults,
    # gcc given clang's options, the shell, the user, patch, a registry, an executor pool
    ("bazel-version-mismatch", [
        "ERROR: Bazel version 6.5.0 is not compatible with module \"rules_cc@0.1.1\" "
        "(bazel_compatibility: [\">=7.0.0\"])"]),
    ("bazel-version-mismatch", [
        "ERROR: The version of MODULE.bazel.lock is not supported by this version of Bazel. "
        "Please run `bazel mod deps --lockfile_mode=update` to update your lockfile."]),
    ("bazel-version-mismatch", ["ERROR: --host_javabase=@local_jdk//:jdk is no longer supported,"
                                " use --platforms instead (see #7849)"]),
    ("bazel-version-mismatch", ["Current Bazel version is 0.9.0, expected at most 0.8.1"]),
    # a third pass: what breaks between Bazel releases (Bazel's, the rule sets', JAX's words)
    ("bazel-version-mismatch", [
        "Error in label: 'cfg = \"host\"' is deprecated and should no longer be used. Please "
        "use 'cfg = \"exec\"' instead."]),
    ("bazel-version-mismatch", [
        "Error in label: cfg must be either 'target', 'exec' or a starlark defined transition "
        "defined by the exec() or transition() functions."]),
    ("bazel-version-mismatch", [
        "ERROR: no such package '@@local_config_foo//': Native repo rule new_local_repository "
        "is disabled since the flag --incompatible_disable_native_repo_rules is set."]),
    ("bazel-version-mismatch", [
        "ERROR: /work/tensorflow/third_party/foo/foo.bzl:42:16: Returning a struct from a rule "
        "implementation function is deprecated."]),
    ("bazel-version-mismatch", [
        "Error in fail: cc_proto_library is removed from @rules_cc//cc:defs.bzl in Bazel 8. "
        "Please load the implementation from https://github.com/protocolbuffers/protobuf."]),
    ("bazel-version-mismatch", [
        "Error in fail: This rule is not available on the current Bazel version"]),
    ("bazel-version-mismatch", [
        "Error in fail: invalid Bazel version '7.4': got 2 dot-separated segments, want 3"]),
    ("bazel-version-mismatch", [
        "Cannot find or download a suitable version of bazel.Please install bazel >= 7.4.1."]),
    ("bazel-version-mismatch", ["Outdated bazel revision (>= 0.19.2 required, found 0.18.0)"]),
    ("bazel-version-mismatch", [
        "Please downgrade your bazel revision to build JAX (>= 0.24.1 and < 0.25.0 required, "
        "found 0.26.0)"]),
    # and a fourth: rules_python's wheel builds over its releases, TF 0.x's SWIG check,
    # Bazel's Xcode words, HotSpot's one-line memory failure
    ("hermetic-python-requirement-build-failed", [
        "Error in fail: whl_library pypi_numpy failed:  (Traceback (most recent call last):"]),
    ("hermetic-python-requirement-build-failed", [
        "Error in fail: rules_python:whl_library(@@rules_python++pip+pypi_311_numpy) FAIL: "
        "repo.execute: whl_library.ResolveRequirement(pypi_311_numpy, numpy==1.26.4): end: "
        "failure:"]),
    ("swig-missing", ["Can't find swig.  Ensure swig is in $PATH or set $SWIG_PATH."]),
    ("xcode-not-found", [
        "ERROR: the SDK platform [iphonesimulator] is unsupported for the target version of "
        "xcode"]),
    ("xcode-not-found", [
        "Running '/private/var/tmp/_bazel_u/x/external/local_config_xcode/xcode-locator "
        "15.2' failed with code 1."]),
    ("bazel-server-oom", [
        "OpenJDK 64-Bit Server VM warning: INFO: os::commit_memory(0x00000006c0000000, "
        "1073741824, 0) failed; error='Not enough space' (errno=12)"]),
    ("bazel-config-undefined", ["ERROR: Config values are not defined in any .rc file: cuda"]),
    ("compiler-version-unsupported", [
        "a.cc:3:1: note: 'uint8_t' is defined in header '<cstdint>'; this is probably fixable "
        "by adding '#include <cstdint>'"]),
    ("compiler-version-unsupported", ["cc1plus: error: '-Werror=dangling-reference': no option "
                                      "'-Wdangling-reference'"]),
    ("compiler-version-unsupported", [
        "external/llvm-project/llvm/include/llvm/ADT/x.h:3:5: error: integer value -1 is outside "
        "the valid range of values [0, 3] for this enumeration type "
        "[-Wenum-constexpr-conversion]"]),
    ("compiler-version-unsupported", [
        "a.h:4:5: error: a template argument list is expected after a name prefixed by the "
        "template keyword [-Wmissing-template-arg-list-after-template-kw]"]),
    ("compiler-version-unsupported", ["a.h:4:5: error: no template named 'unary_function' in "
                                      "namespace 'std'; did you mean '__unary_function'?"]),
    ("gcc-instead-of-clang", ["cc1plus: error: '-Wno-error=c23-extensions': no option "
                              "'-Wc23-extensions'; did you mean '-Wc++23-extensions'?"]),
    ("gcc-instead-of-clang", ["g++: error: unrecognized command-line option "
                              "'-fcuda-flush-denormals-to-zero'"]),
    ("bazel-sh-not-set", ["* if you are running Bazel on Windows, set the BAZEL_SH environment "
                          "variable to the path of bash.exe"]),
    ("bazel-user-unknown", ["fatal: unable to look up current user in the passwd file: no such "
                            "user"]),
    ("bazel-user-unknown", ["No user exists for uid 1001"]),
    ("patch-command-missing", ["Error in fail: patch command is not found, please install it"]),
    ("registry-access-denied", [
        "failed to resolve reference \"nvcr.io/x:1\": unexpected status from HEAD request to "
        "https://nvcr.io/v2/x/manifests/1: 401 Unauthorized"]),
    ("remote-no-runner", ["ERROR: x failed: (Exit 34): UNAVAILABLE: No registered executors in "
                          "pool \"\" with os \"linux\" with arch \"amd64\"."]),
]

#: ids the near misses below must not give
NOT_BUILD = {"link-error", "compiler-version-unsupported", "xcode-not-found",
             "bazel-version-mismatch", "download-failed", "remote-deadline-exceeded",
             "bazel-config-undefined", "gcc-instead-of-clang"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # the linkers' warnings a link goes past
    "/usr/bin/ld: warning: libcudart.so.12, needed by bazel-out/k8-opt/bin/libfoo.so, not "
    "found (try using -rpath or -rpath-link)",
    "ld: warning: ignoring file libfoo.a, building for macOS-arm64 but attempting to link "
    "with file built for macOS-x86_64",
    # a warning, and an error the build's own -Werror made (not the compiler's default)
    "src/a.c:3:5: warning: implicit declaration of function 'foo' "
    "[-Wimplicit-function-declaration]",
    "src/a.c:3:5: error: implicit declaration of function 'foo' "
    "[-Werror=implicit-function-declaration]",
    # Xcode's notes on a machine that builds
    "No default Xcode version is set with 'xcode-select'; picking 15.2",
    # Bazel's hint on any C++ toolchain resolution failure, and its autoload warning
    "Maybe --incompatible_use_cc_configure_from_rules_cc has been flipped and there is no "
    "default C++ toolchain added in the WORKSPACE file?",
    "WARNING: Couldn't auto load rules or symbols, because no dependency on "
    "module/repository 'rules_cc' found. This will result in a failure if there's a "
    "reference to those rules or symbols.",
    # curl's TLS words for a certificate (download-certificate-untrusted's), a cache call
    # Bazel warns about and goes past
    "fatal: unable to access 'https://x/y.git/': TLS connect error: error:0A000086:SSL "
    "routines::certificate verify failed",
    "WARNING: Remote Cache: DEADLINE_EXCEEDED: Deadline CallOptions will be exceeded in "
    "59.9s.",
    # Bzlmod's compatibility check turned into a warning, an old Bazel going on without a
    # config it warns of
    "WARNING: Bazel version 6.5.0 is not compatible with module \"rules_cc@0.1.1\" "
    "(bazel_compatibility: [\">=7.0.0\"])",
    "WARNING: Config values are not defined in any .rc file: cuda",
    # gcc's older hint (compiler-version-unsupported has it already; here: not clang's) and
    # a -Wno-error= name gcc knows
    "cc1plus: error: '-Wno-error=unused-command-line-argument' is valid for C/C++ but not "
    "for Fortran",
]
