"""Failure signatures (resources/knowledge/failures.toml) against real and typical lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.diagnosis.build import diagnose, diagnose_file, load_failures, load_failures_from
from tfwizard.core.errors import KnowledgeError

LOGS = Path(__file__).resolve().parents[2] / "data" / "logs"

#: one typical line per signature (lines, for one that `requires` another), as users' logs
#: and the threads in sources.toml show them
EXAMPLES: dict[str, str | tuple[str, ...]] = {
    "oom-compiler-killed": "gcc: internal compiler error: Killed (program cc1plus)",
    "bazel-server-oom": "java.lang.OutOfMemoryError: Java heap space",
    "clang-gnu-offsetof": "external/upb/upb/msg_internal.h:12:3: error: defining a type within "
                          "'offsetof' is a Clang extension [-Werror,-Wgnu-offsetof-extensions]",
    "clang-c23-extensions": "upb/port/def.inc:5:1: error: '_Static_assert' with no message is "
                            "a C23 extension [-Werror,-Wc23-extensions]",
    "cuda-arch-unsupported": "ERROR: GPU arch sm_35 is supported by CUDA versions between "
                             "10.0 and 11.8 (inclusive), but got 12.3",
    "hermetic-cuda-version-unsupported": "Error in fail: The supported CUDA versions are "
                                         "[\"11.8\", \"12.1.1\", \"12.2.0\"]. Please provide a "
                                         "supported version in HERMETIC_CUDA_VERSION",
    "hermetic-cudnn-version-unsupported": "The supported CUDNN versions are [\"8.9.4.25\"]. "
                                          "Please provide a supported version in "
                                          "HERMETIC_CUDNN_VERSION",
    "download-failed": "ERROR: An error occurred during the fetch of repository 'eigen': "
                       "java.io.IOException: Error downloading [https://x/e.tgz]: All mirrors "
                       "are down: [Unknown host: github.com]",
    "disk-full": "fatal error: error writing to /tmp/ccX.s: No space left on device",
    "hermetic-python-lock-missing": "Could not find requirements_lock.txt file matching "
                                    "specified Python version 3.13",
    "bazel-config-undefined": "ERROR: Config value 'rocmx' is not defined in any .rc file",
    "bazel-version-mismatch": "Please upgrade your bazel installation to version 6.5.0 or "
                              "higher to build TensorFlow!",
    "docker-gpu-driver": 'docker: Error response from daemon: could not select device driver '
                         '"" with capabilities: [[gpu]].',
    "container-image-wrong-arch": "exec /usr/bin/bash: exec format error",
    "bazelisk-download-failed": "could not download Bazel: HTTP GET https://releases.bazel.build/"
                                "5.4.0/release/bazel-5.4.0-linux-riscv64 failed with error 404",
    "bazel-output-root-not-writable": "FATAL: mkdir('/src/.cache/_bazel_root'): (error: 13): "
                                      "Permission denied",
    "bazel-meminfo-duplicate-entries": "\tat com.google.devtools.build.lib.unix."
                                       "ProcMeminfoParser.<init>(ProcMeminfoParser.java:55)",
    "pkgmgr-compiler-wrapper-in-bazel": "Spack compiler must be run from Spack! Input "
                                        "'SPACK_COMPILER_SPEC' is missing.",
    "setup-py-not-in-source-root": "/usr/bin/python3.10: can't open file 'setup.py': [Errno 2] "
                                   "No such file or directory",
    "docker-daemon-unreachable": "docker: Cannot connect to the Docker daemon at "
                                 "unix:///var/run/docker.sock. Is the docker daemon running?",
    "docker-socket-permission-denied": "permission denied while trying to connect to the docker "
                                       "API at unix:///var/run/docker.sock",
    "docker-pull-rate-limited": "Error response from daemon: toomanyrequests: You have reached "
                                "your unauthenticated pull rate limit. "
                                "https://www.docker.com/increase-rate-limit",
    "patchelf-missing": "/bin/bash: line 1: patchelf: command not found",
    "patch-command-missing": "/usr/bin/bash: patch: command not found",
    "swig-missing": "tensorflow/tools/swig/swig.sh: line 25: swig: command not found",
    "xla-nccl-not-configured": "ERROR: /xla/xla/service/gpu/BUILD:12:11: no such target "
    "'@local_config_nccl//:nccl_headers': target 'nccl_headers' not declared in package '' "
    "defined by /root/.cache/bazel/_bazel_root/a1/external/local_config_nccl/BUILD",
    "cxx-std-headers-missing": "external/com_google_absl/absl/base/internal/atomic_hook.h:18:10:"
                               " fatal error: 'atomic' file not found",
    "hermetic-python-requirement-build-failed": "ERROR: An error occurred during the fetch of "
                                                "repository 'pypi_grpcio':",
    "msvc-build-tools-not-found": "Bazel couldn't find a valid Visual C++ build tools "
                                  "installation on your machine.",
    "registry-access-denied": "Error response from daemon: unauthorized: authentication "
                              "required",
    "configure-clang-version-unknown": ("WARNING: current clang installation is not a release "
                                        "version.",
                                        "AttributeError: 'NoneType' object has no attribute "
                                        "'split'"),
    "remote-cache-evicted": "ERROR: /w/BUILD:3:8: Compiling a.cc failed: Failed to fetch "
                            "blobs because they do not exist remotely.: Missing digest: "
                            "a72f/139666 for bazel-out/k8-fastbuild/bin/a.o",
    "gcc-cc1plus-missing": "gcc: fatal error: cannot execute 'cc1plus': execvp: No such file or "
                           "directory",
    "bazel-jdk-too-new": ("FATAL: bazel crashed due to an internal error. Printing stack trace:",
                          "java.lang.ExceptionInInitializerError"),
    "bazel-sh-not-set": "ERROR: BAZEL_SH environment variable is not set",
    "base-image-tag-missing": "manifest for nvidia/cuda:10.0-devel not found: manifest unknown: "
                              "manifest unknown",
    "prebuilt-clang-libtinfo-missing": "external/llvm_toolchain_llvm/bin/clang-15: error while "
                                       "loading shared libraries: libtinfo.so.5: cannot open "
                                       "shared object file: No such file or directory",
    "numpy-too-new-for-source": "tensorflow/python/lib/core/ndarray_tensor.cc:70:15: error: "
                                "'NPY_NTYPES' was not declared in this scope",
    "windows-path-backslashes-stripped": "bash: bazel-bintensorflowtoolspip_packagebuild_pip_"
                                         "package: No such file or directory",
    "remote-credentials": "ERROR: Failed to query remote execution capabilities: "
                          "UNAUTHENTICATED: Request had invalid authentication credentials.",
    "bazel-startup-option-misplaced": "ERROR: --output_base=/tmp/zzz :: Unrecognized option: "
                                      "--output_base=/tmp/zzz",
    "bazelversion-crlf": "ERROR: The project you're trying to build requires Bazel 7.4.1\\r "
                         "(specified in /src/tensorflow/.bazelversion), but it wasn't found in "
                         "/usr/local/bin.",
    "wrapped-clang-missing-lc-uuid": "dyld[4711]: missing LC_UUID load command in /private/var/"
                                     "tmp/_bazel_me/ab12/execroot/_main/bazel-out/darwin_arm64-"
                                     "opt-exec/bin/external/local_config_apple_cc/xcrunwrapper",
    "bazel-under-qemu-emulation": "FATAL: Failed to open '/proc/self/exe' as a zip file: "
                                  "(error: 2): No such file or directory",
    "bazel-outside-workspace": "ERROR: The 'test' command is only supported from within a "
                               "workspace (below a directory having a WORKSPACE file).",
    "numpy-missing-in-image": "ModuleNotFoundError: No module named 'numpy'",
    "clang-lld-missing": "clang: error: invalid linker name in argument '-fuse-ld=lld'",
    "bazel-user-unknown": "FATAL: $USER is not set, and unable to look up name of current "
                          "user: (error: 0): Success",
    "git-dubious-ownership": ("fatal: detected dubious ownership in repository at "
                              "'/srv/mirrors/tensorflow.git'",
                              "fatal: Could not read from remote repository."),
    "git-ref-not-found": "fatal: Remote branch v9.9.9 not found in upstream origin",
    "configure-bad-answer": "configure.UserInputError: Invalid TF_NEED_CUDA setting was "
                            "provided 5 times in a row.",
    "compile-error": "ERROR: /src/tensorflow/core/BUILD:33:11: Compiling "
                     "tensorflow/core/kernels/matmul_op.cc failed: (Exit 1): gcc failed",
    "build-failed": "FAILED: Build did NOT complete successfully",
    "remote-cache-unusable": "WARNING: Writing to Remote Cache:",
    "remote-unavailable": "ERROR: /src/tensorflow/core/BUILD:26:11: Compiling "
                          "tensorflow/core/framework/device.cc failed: (Exit 34): "
                          "UNAVAILABLE: io exception",
    "remote-no-runner": "ERROR: /src/x/BUILD:3:10: Compiling x.cc failed: (Exit 34): "
                        "INVALID_ARGUMENT: No matching action runner found (available: ...)",
    "bes-upload-failed": "ERROR: The Build Event Protocol upload failed: All retry attempts "
                         "failed. UNAVAILABLE: UNAVAILABLE: io exception",
    "remote-deadline-exceeded": "ERROR: /src/x/BUILD:3:10: Compiling x.cc failed: (Exit 34): "
                                "DEADLINE_EXCEEDED: deadline exceeded after 59999888533ns",
    "remote-unknown-instance": "ERROR: Failed to query remote execution capabilities: "
                               "INVALID_ARGUMENT: Invalid instance name: [x]",
    "remote-unknown-platform-property": "ERROR: /src/x/BUILD:3:10: Compiling x.cc failed: "
                                        "(Exit 34): FAILED_PRECONDITION: Unregistered platform "
                                        "property [gpu={'nvidia'}]. Known properties are: []",
    # from tests/data/real-logs (their threads are in the signatures' sources)
    "build-glibc-too-old": "/usr/local/bin/bazel: /usr/lib64/libc.so: version `GLIBC_2.12' "
                           "not found (required by /usr/local/bin/bazel)",
    "cuda-config-not-found": "Inconsistent CUDA toolkit path: /usr vs /usr/lib",
    "numpy-headers-missing": "./tensorflow/python/client/tf_session_helper.h:6:31: fatal "
                             "error: numpy/arrayobject.h: No such file or directory",
    "nvcc-host-compiler-unsupported": " #error -- unsupported GNU version! gcc versions later "
                                      "than 6 are not supported!",
    "python-headers-missing": "./tensorflow/python/lib/core/numpy.h:35:10: fatal error: "
                              "Python.h: No such file or directory",
    "python-not-on-path": "/usr/bin/env: 'python': No such file or directory",
    "hermetic-python-libcrypt-missing": "/x/requirements.update.runfiles/python_x86_64-unknown"
                                        "-linux-gnu/bin/python3: error while loading shared "
                                        "libraries: libcrypt.so.1: cannot open shared object "
                                        "file: No such file or directory",
    "hermetic-clang-version-unsupported": "Error in fail: Ensure LLVM 21 support is added "
                                          "prior to use. Supported versions: 18, 20",
    # the causes the real-log corpus proposed (its tuning excerpts' own lines)
    "download-checksum-mismatch": "WARNING: Download from https://github.com/tensorflow/"
                                  "tensorflow/archive/refs/tags/v2.11.0.tar.gz failed: class "
                                  "com.google.devtools.build.lib.bazel.repository.downloader."
                                  "UnrecoverableHttpException Checksum was 80685bf2fd46edc5c6f4"
                                  "7b61ec9d747f2b17dec6a8c304eeeb196f8d4bda68a5 but wanted 99c7"
                                  "32b92b1b37fc243a559e02f9aef5671771e272758aa4aec7f34dc92dac48",
    "download-certificate-untrusted": "WARNING: Download from https://github.com/bazelbuild/"
                                      "rules_cc/archive/master.zip failed: class javax.net.ssl."
                                      "SSLHandshakeException sun.security.validator."
                                      "ValidatorException: PKIX path building failed: "
                                      "sun.security.provider.certpath."
                                      "SunCertPathBuilderException: unable to find valid "
                                      "certification path to requested target",
    "compiler-version-unsupported": "gcc: error: unrecognized command line option "
                                    "'-std=c++14'",
    "x86-flags-on-arm": "aarch64-linux-gnu-gcc: 错误： unrecognized command line option "
                        "‘-msse3’",
    "gcc-instead-of-clang": "gcc: error: unrecognized command-line option "
                            "'--cuda-gpu-arch=sm_35'",
    "protoc-headers-mismatch": "../ext/Mumble.pb.h:17:2: error: #error This file was "
                               "generated by an older version of protoc which is",
    "link-error": "collect2: error: ld returned 1 exit status",
    "bazel-undeclared-inclusion": "ERROR: /home/mark/.cache/bazel/_bazel_mark/102e5c7ceb737dbe9"
                                  "8e59b2e1d756774/external/sassc/BUILD.bazel:4:1: undeclared "
                                  "inclusion(s) in rule '@sassc//:sassc':",
    "bazel-sandbox-mount-failed": 'src/main/tools/linux-sandbox-pid1.cc:88: "mount": '
                                  "Permission denied",
    "git-too-old": "Unknown option: -C",
    "xcode-not-found": "ERROR: /private/var/tmp/_bazel_dB/675819f2ab031bab33e5a2099e633071/"
                       "external/local_config_cc/BUILD:50:5: in apple_cc_toolchain rule "
                       "@local_config_cc//:cc-compiler-darwin_x86_64: Xcode version must be "
                       "specified to use an Apple CROSSTOOL.",
    "rocm-config-failed": "Can't exec \"g++\": No such file or directory at "
                          "/opt/rocm/bin/hipcc line 243.",
    "pip-package-step-mismatch": "ERROR: no such target '//tensorflow/tools/pip_package:"
                                 "build_pip_package': target 'build_pip_package' not declared "
                                 "in package 'tensorflow/tools/pip_package'",
    # round 7's proposed causes (other wordings: test_round7_build_signatures.py)
    "cuda-toolkit-too-old": "nvcc fatal   : Value 'c++20' is not defined for option 'std'",
    "cuda-toolkit-too-new": "fatbinary fatal   : Unknown option '-bin2c-path'",
    "bash-missing": 'src/main/tools/process-wrapper-legacy.cc:80: "execvp(/bin/bash, ...)": '
                    "No such file or directory",
    "bazel-sandbox-init-failed": "ERROR: Failed to initialize sandbox: sandboxfs failed to start",
    "hermetic-python-lock-unhashed": "ERROR: In --require-hashes mode, all requirements must "
                                     "have their versions pinned with ==. These do not:",
    "cuda-capabilities-undetected": "RuntimeError: Could not find executable `nvidia-smi`! "
                                    "Please change your $PATH",
    # round 8's proposed causes (other wordings: test_round8_build_signatures.py)
    "configure-not-run": "Python Configuration Error: 'PYTHON_LIB_PATH' environment variable "
                         "is not set",
    "arm32-flags-on-aarch64": "aarch64-linux-gnu-gcc: error: unrecognized command-line option "
                              "'-mfloat-abi=hard'",
    "cc-toolchain-unresolved": "ERROR: While resolving toolchains for target //x:y: No matching "
                               "toolchains found for types @@bazel_tools//tools/cpp:"
                               "toolchain_type.",
}


def test_every_signature_has_an_example_and_it_matches_only_that_one():
    ids = {s.id for s in load_failures()}
    assert ids == set(EXAMPLES), "add an example line for each new signature"
    for sig_id, line in EXAMPLES.items():
        found = diagnose(["unrelated", *example_lines(line)])
        assert [d.id for d in found] == [sig_id], line
        assert found[0].lines == (2,)
        assert found[0].cause and found[0].next_step and found[0].sources


def example_lines(example: str | tuple[str, ...]) -> list[str]:
    return [example] if isinstance(example, str) else list(example)


def test_a_harmless_dubious_ownership_line_is_not_a_failure():
    """A script asking git for a version prints it and goes on: only a clone or fetch that
    could not read the repository makes it the cause."""
    line = "fatal: detected dubious ownership in repository at '/home/dev/src'"
    assert diagnose([line, "INFO: Build completed successfully, 7 total actions"]) == []
    found = diagnose([line, "fatal: Could not read from remote repository."])
    assert [d.id for d in found] == ["git-dubious-ownership"] and found[0].lines == (1,)


def test_the_real_failed_fixture_build_is_diagnosed_with_line_numbers():
    log = LOGS / "fixture-break.log.txt"
    found = diagnose_file(log)
    ids = [d.id for d in found]
    # (a generic failed build adds nothing to the compile error that names the action)
    assert ids[:1] == ["compile-error"] and "build-failed" not in ids
    lines = log.read_text().splitlines()
    compile_error = found[0]
    assert "matmul_op.cc" in lines[compile_error.lines[0] - 1]
    assert any("error: 'MatMulKernel' was not declared" in lines[n - 1]
               for n in compile_error.lines)


def test_a_download_bazel_got_past_is_cleared_by_the_analysis_that_finished():
    warning = ("WARNING: Download from https://mirror.example/x.tar.gz failed: class "
               "java.io.IOException connect timed out")
    analysed = "INFO: Analyzed target //tensorflow/tools/pip_package:wheel (212 packages loaded)."
    failed = "ERROR: missing input file '@x//:y': connect timed out"
    ids = lambda lines: [d.id for d in diagnose(lines)]  # noqa: E731
    assert ids([warning, analysed]) == []  # another mirror (or the cache) had it
    assert ids([warning]) == ["download-failed"]  # a log that stops there failed there
    # a failure after the analysis is not cleared by it, nor is the earlier one then
    assert ids([warning, analysed, failed]) == ["download-failed"]
    # a build that went on and failed elsewhere is that failure's
    assert ids([warning, analysed, "gcc: internal compiler error: Killed (program cc1plus)"]
               ) == ["oom-compiler-killed"]


def test_specific_signatures_hide_generic_ones():
    found = diagnose(["ERROR: x.cc:1:1: Compiling x.cc failed: (Exit 1): gcc failed",
                      "gcc: internal compiler error: Killed (program cc1plus)",
                      "FAILED: Build did NOT complete successfully"])
    assert [d.id for d in found] == ["oom-compiler-killed"]


def test_exit_code_137_alone_means_killed():
    found = diagnose(["nothing to see"], exit_code=137)
    assert [d.id for d in found] == ["oom-compiler-killed"] and found[0].lines == ()
    assert diagnose(["nothing to see"], exit_code=1) == []


def test_recipe_fixes_are_data():
    by_id = {s.id: s for s in load_failures()}
    assert by_id["oom-compiler-killed"].recipe_fix == {"build.jobs": "halve"}
    assert by_id["clang-gnu-offsetof"].recipe_fix == {
        "build.bazel_flags": "+--copt=-Wno-gnu-offsetof-extensions"}


def test_bad_catalogue_entries_are_refused(tmp_path):
    bad = tmp_path / "failures.toml"
    bad.write_text('[[failure]]\nid = "x"\ntitle = "t"\npatterns = ["(unclosed"]\n'
                   'speaker = "bazel"\ncause = "c"\nnext_step = "n"\n'
                   'sources = ["bazel-docs"]\n')
    with pytest.raises(KnowledgeError, match="bad pattern"):
        load_failures_from(bad)
    bad.write_text('[[failure]]\nid = "x"\ntitle = "t"\npatterns = ["x"]\nspeaker = "bazel"\n'
                   'cause = "c"\nnext_step = "n"\nsources = ["nope"]\n')
    with pytest.raises(KnowledgeError, match="sources"):
        load_failures_from(bad, {"bazel-docs"})
    # every signature names the tool that speaks, from the one vocabulary
    for speaker, error in (('', "missing key"), ('speaker = "compiller"\n', "speaker must")):
        bad.write_text('[[failure]]\nid = "x"\ntitle = "t"\npatterns = ["x"]\n' + speaker
                       + 'cause = "c"\nnext_step = "n"\nsources = ["bazel-docs"]\n')
        with pytest.raises(KnowledgeError, match=error):
            load_failures_from(bad)
    bad.write_text('[[failure]]\nid = "x"\ntitle = "t"\npatterns = ["x"]\nspeaker = "bazel"\n'
                   'superseded_by = ["y"]\ncause = "c"\nnext_step = "n"\n'
                   'sources = ["bazel-docs"]\n')
    with pytest.raises(KnowledgeError, match="known ids"):
        load_failures_from(bad)


def test_cli_diagnose_text_and_json():
    log = str(LOGS / "fixture-break.log.txt")
    status, out, _ = capture(["diagnose", log])
    assert status == ExitStatus.OK
    assert "compile-error: A C++ file failed to compile" in out and "next:" in out
    status, out, _ = capture(["diagnose", log, "--json"])
    data = json.loads(out)
    assert data["diagnoses"][0]["id"] == "compile-error"
    assert data["diagnoses"][0]["lines"][0] == 36
    status, out, err = capture(["diagnose", "/nonexistent/log.txt"])
    assert status == ExitStatus.USAGE and "no such log" in err


def test_cli_diagnose_a_clean_log(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("INFO: Build completed successfully, 30 total actions\n")
    status, out, _ = capture(["diagnose", str(log)])
    assert status == ExitStatus.OK and "no known failure" in out


def test_a_remote_cache_bazel_could_not_use_is_a_warning_with_its_words():
    """Issue 15 item 10: a real fixture build against an HTTP cache that answers HTTP/1.0
    (tests/docker/test_remote_cache.py makes it): Bazel warns and builds everything
    itself. The diagnosis is a warning and carries the line that says why."""
    found = diagnose_file(LOGS / "remote-cache-http10.log.txt")
    assert [d.id for d in found] == ["remote-cache-unusable"]
    d = found[0]
    assert d.severity == "warning"
    assert d.excerpt[:2] == ("WARNING: Reading from Remote Cache:",
                             "HTTP version 1.1 is required, was: HTTP/1.0")
    assert "HTTP/1.1" in d.next_step and "remote.upload = false" in d.next_step
    # a warning does not hide the generic diagnosis of a failed build
    both = diagnose(["WARNING: Writing to Remote Cache:", "4 errors during bulk transfer",
                     "ERROR: x.cc:1:1: Compiling x.cc failed: (Exit 1): gcc failed"])
    assert [x.id for x in both] == ["remote-cache-unusable", "compile-error"]
    assert both[0].excerpt == ("WARNING: Writing to Remote Cache:",
                               "4 errors during bulk transfer")


def test_a_name_of_the_source_s_own_is_a_compile_error_not_an_old_toolkit():
    """Only the toolkit's own names say the toolkit is old: a longer name that starts
    like one is the source's."""
    line = "a.cc:3:5: error: 'cudaMallocAsyncHelper' was not declared in this scope"
    assert [d.id for d in diagnose(["INFO: x", line])] == ["compile-error"]
    line = "a.cc:3:5: error: 'cudaMallocAsync' was not declared in this scope"
    assert [d.id for d in diagnose(["INFO: x", line])][0] == "cuda-toolkit-too-old"
