"""The linkers', Bazel's Apple toolchain's, TensorFlow's CUDA configuration's, Bazel's
remote client's and its server's, and the fetching tools' own words, as their sources word
them (session 16: sources.toml's toolchain-messages-s16, bazel-messages-s16 and
download-messages-s16). Data only: the lists run in
test_round7_build_signatures.py's tests, found by wordings.py.

Every line was written for these tests from the speaking tool's format string, filled in
with plausible paths and values; the closed tools' lines (xcrun, nvlink, ld-prime) follow
their words as printed in public threads.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # a binary too big for its code model: lld's and mold's range error, GNU ld's GOTPCREL
    # relaxation (with and without the symbol), gold's overflow, ld's zh_CN words
    ("link-error", ["ld.lld: error: /usr/lib/gcc/x86_64-linux-gnu/11/crtbeginS.o:(.text+0x33): "
                    "relocation R_X86_64_PC32 out of range: 2206995433 is not in "
                    "[-2147483648, 2147483647]; references section '.tm_clone_table'"]),
    ("link-error", ["mold: error: foo.o:(.text): relocation R_X86_64_PC32 against bar out of "
                    "range: 3000000000 is not in [-2147483648, 2147483648)"]),
    ("link-error", ["/usr/bin/ld: failed to convert GOTPCREL relocation; relink with "
                    "--no-relax"]),
    ("link-error", ["crt1.o: in function `_start': failed to convert GOTPCREL relocation "
                    "against 'main'; relink with --no-relax"]),
    ("link-error", ["vclock.c:function do_hres: error: relocation overflow: reference to "
                    "'hvclock_page'"]),
    ("link-error", ["kernels.o:(.text+0x1a): 截断重寻址至相符: R_X86_64_PC32 针对 `.bss'"]),
    # a linker that does not know an option: GNU ld (and in Chinese), lld, ld64, ld-prime
    ("link-error", ["/usr/bin/ld: unrecognized option '--start-lib'"]),
    ("link-error", ["/usr/bin/ld：无法识别的选项‘--start-lib’"]),
    ("link-error", ["ld.lld: error: unknown argument '-Bfoo', did you mean '-Bbar'"]),
    ("link-error", ["ld: unknown option: -no-as-needed"]),
    ("link-error", ["ld: unknown options: -Map=out.map"]),
    # lld-link's input, a hidden symbol a shared library uses, an unreadable archive, an
    # object of another machine, nvlink's inputs
    ("link-error", ["lld-link: error: could not open 'kernel32.lib': no such file or "
                    "directory"]),
    ("link-error", ["/usr/bin/ld: libtf.so: hidden symbol `__stack_chk_fail_local' in "
                    "/usr/lib/libc_nonshared.a(stack_chk_fail_local.oS) is referenced by DSO"]),
    ("link-error", ["ld.lld: error: non-exported symbol 'std::runtime_error::~runtime_error()' "
                    "in 'x/stdexcept.o' is referenced by DSO 'bin/libfw.so'"]),
    ("link-error", ["/usr/bin/ld: libfoo.a: could not read symbols: Archive has no index; run "
                    "ranlib to add one"]),
    ("link-error", ["ld.lld: error: bazel-out/k8-opt/bin/foo.o is incompatible with "
                    "elf_aarch64"]),
    ("link-error", ["nvlink fatal   : Could not open input file 'bazel-out/k8-opt/bin/"
                    "external/nccl_archive/libdevice.a'"]),
    # an Apple toolchain without Xcode: Bazel 7-8.4's DottedVersion of 'None',
    # apple_support's Command Line Tools check, Bazel 6's, xcrun's words
    ("xcode-not-found", [
        "Caused by: java.lang.IllegalArgumentException: com.google.devtools.build.lib.rules."
        "apple.DottedVersion$InvalidDottedVersionException: Dotted version components must "
        "all start with the form \\d+([a-z0-9]*?)?(\\d+)? but got 'None'"]),
    ("xcode-not-found", [
        "Error in fail: Failed to configure Apple CC toolchain, if you only have the command "
        "line tools installed and not Xcode, you cannot use this toolchain. You should either "
        "remove it or temporarily set 'BAZEL_NO_APPLE_CPP_TOOLCHAIN=1' in the environment: "]),
    ("xcode-not-found", [
        "Error in fail: BAZEL_USE_XCODE_TOOLCHAIN is set to 1 but Bazel couldn't find Xcode "
        "installed on the system. Verify that 'xcode-select -p' is correct."]),
    ("xcode-not-found", [
        'xcrun: error: active developer path ("/Applications/Xcode.app/Contents/Developer") '
        "does not exist"]),
    ("xcode-not-found", ["xcrun: error: missing DEVELOPER_DIR path: /Applications/Xcode-15.app"]),
    # cuda_configure's and tensorrt_configure's copy rules; hermetic CUDA without a template
    ("cuda-config-not-found", [
        "ERROR: /home/u/.cache/bazel/_bazel_u/abc/external/local_config_tensorrt/BUILD:43:1: "
        "Executing genrule @local_config_tensorrt//:tensorrt_include failed (Exit 1)"]),
    ("cuda-config-not-found", ["Error in fail: No build template found for cuda_cudnn version 10"]),
    # a remote call out of time: the HTTP cache's, gRPC's bare and empty statuses, a past
    # deadline, Bazel 0.1x's retrier
    ("remote-deadline-exceeded", [
        "ERROR: /src/x/BUILD.bazel:73:24: Compiling x/event.cpp failed: unable to finalize "
        "action: Download of '/cas/0535e6bae6fd101e71c26d71b14b7f1af7bd0abbb98189318dd1c8b9ddfcb4f9' "
        "timed out. Received 0 bytes."]),
    ("remote-deadline-exceeded", [
        "ERROR: /src/third_party/protobuf/BUILD:529:1: Linking of rule '//third_party/protobuf:"
        "protoc' failed: io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED."]),
    ("remote-deadline-exceeded", ["ERROR: /src/BUILD:3:1: Compiling a.cc failed: "
                                  "DEADLINE_EXCEEDED: null"]),
    ("remote-deadline-exceeded", ["ERROR: Failed to query remote execution capabilities: "
                                  "DEADLINE_EXCEEDED: Deadline Exceeded"]),
    ("remote-deadline-exceeded", [
        "ERROR: /src/BUILD:3:1: Compiling a.cc failed: DEADLINE_EXCEEDED: CallOptions deadline "
        "exceeded after -0.000123456s. Name resolution delay 0.000000000 seconds."]),
    ("remote-deadline-exceeded", [
        "Couldn't build file src/bazel: Executing genrule //src:bazel-bin failed: Unexpected IO "
        "error.: Exhaused retry attempts (0)"]),
    # a fetch that broke: git's clone, curl's TLS handshake and HTTP, pip's body, rules_python's
    # index, Bazel offline, a script's checksum
    ("download-failed", ["fetch-pack: unexpected disconnect while reading sideband packet"]),
    ("download-failed", ["fatal: early EOF"]),
    ("download-failed", ["error: RPC failed; HTTP 408 curl 18 HTTP/2 stream 7 was reset"]),
    ("download-failed", ["fatal: unable to access 'https://github.com/tensorflow/tensorflow.git/':"
                         " OpenSSL SSL_connect: Connection reset by peer in connection to "
                         "github.com:443"]),
    ("download-failed", ["curl: (92) HTTP/2 stream 5 was not closed cleanly: INTERNAL_ERROR "
                         "(err 2)"]),
    ("download-failed", ["curl: (52) Empty reply from server"]),
    ("download-failed", ["curl: (22) The requested URL returned error: 404"]),
    ("download-failed", ["pip._vendor.urllib3.exceptions.ProtocolError: (\"Connection broken: "
                         "IncompleteRead(2732032 bytes read, 42516480 more expected)\", "
                         "IncompleteRead(2732032 bytes read, 42516480 more expected))"]),
    ("download-failed", ['Error in fail: Failed to download metadata for ["numpy", "jax"] for '
                         'from urls: ["https://pypi.org/simple"].']),
    ("download-failed", ["Error in download_and_extract: java.io.IOException: Failed to download "
                         "repository @@platforms: download is disabled."]),
    ("download-failed", ["Error in download_and_extract: java.io.IOException: Configured URL "
                         "rewriter blocked all URLs: [https://github.com/x.tar.gz]"]),
    ("download-checksum-mismatch", ["sha256sum: WARNING: 1 computed checksum did NOT match"]),
    # a compiler of another era than the sources: nvcc's front end older than gcc's headers,
    # clang older than gcc's intrinsics, gcc 13's name lookup, gcc 15's template bodies,
    # libc++ 19's char_traits
    ("nvcc-host-compiler-unsupported", [
        "/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded "
        "with ‘...’:"]),
    ("nvcc-host-compiler-unsupported", [
        "/usr/lib/gcc/x86_64-linux-gnu/13/include/avx512fp16intrin.h(38): error: identifier "
        '"__builtin_ia32_vcvtsh2ss_mask_round" is undefined']),
    ("compiler-version-unsupported", [
        "/usr/lib/gcc/x86_64-linux-gnu/13/include/amxcomplexintrin.h:48:10: error: use of "
        "undeclared identifier '__builtin_ia32_tcmmimfp16ps'"]),
    ("compiler-version-unsupported", [
        "external/com_google_absl/absl/a.h:12:9: error: declaration of ‘using Foo = struct Bar’ "
        "changes meaning of ‘Foo’ [-Wchanges-meaning]"]),
    ("compiler-version-unsupported", [
        "external/eigen_archive/Eigen/src/Core/Foo.h:12:5: error: 'struct X' has no member "
        "named 'y' [-Wtemplate-body]"]),
    ("compiler-version-unsupported", [
        "/usr/lib/llvm-19/bin/../include/c++/v1/string:820:42: error: implicit instantiation of "
        "undefined template 'std::char_traits<unsigned char>'"]),
    ("swig-missing", ["'swig' is not recognized as an internal or external command,"]),
    ("bazel-sh-not-set", ["Windows Subsystem for Linux has no installed distributions."]),
    # Bazel 8's newest heap watcher, the JDK 9+ words for a thread it cannot make
    ("bazel-server-oom", ["GcChurningDetector forcing exit: 31.4% of the invocation's wall time "
                          "so far (95s) has been spent doing full GCs"]),
    ("bazel-server-oom", ["[3.712s][warning][os,thread] Failed to start the native thread: "
                          "unable to create native thread: possibly out of memory or "
                          "process/resource limits reached"]),
]

#: ids the near misses below must not give
NOT_BUILD = {"link-error", "xcode-not-found", "cuda-config-not-found",
             "remote-deadline-exceeded", "bazel-server-oom", "download-failed",
             "compiler-version-unsupported", "nvcc-host-compiler-unsupported"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # lld's warning under --allow-shlib-undefined, lld-link's ignored argument, other
    # programs' unknown options
    "ld.lld: warning: non-exported symbol 'f()' in 'a.o' is referenced by DSO 'libb.so'",
    "lld-link: warning: ignoring unknown argument '/foo'",
    "gcc: error: unrecognized command-line option '-mfoo'",
    "nvcc warning : unrecognized option '--x'",
    # Xcode's and Apple's notes on a machine that builds
    "# Apple CC autoconfiguration was disabled by BAZEL_NO_APPLE_CPP_TOOLCHAIN env variable.",
    "Dotted version components must all start with the form \\d+ but got 'not a version'",
    # Bazel's progress line of a CUDA copy rule, a cache call it only warns about
    "INFO: From Executing genrule @local_config_cuda//cuda:cuda-include:",
    "WARNING: Remote Cache: Download of '/cas/0535' timed out. Received 0 bytes.",
    "WARNING: Remote Cache: DEADLINE_EXCEEDED: null",
    "WARNING: CppLink remote work failed (io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED).",
    # libc++'s own specialisations, gcc's -fpermissive warning of the same lookup
    "x.cc:3:1: error: implicit instantiation of undefined template 'std::char_traits<char>'",
    "a.h:12:9: warning: changes meaning of ‘Foo’ from ‘struct Foo’ [-fpermissive]",
    # a fetch Bazel or git goes past: a mirror's failure, credentials, a retry warning
    "WARNING: Download from https://mirror.bazel.build/x.tar.gz failed: class "
    "java.io.FileNotFoundException GET returned 404 Not Found",
    "curl: (22) The requested URL returned error: 401",
    "WARNING: Retrying (Retry(total=4)) after connection broken by 'ProtocolError('Connection "
    "aborted.', RemoteDisconnected('Remote end closed connection without response'))': /simple/",
]
