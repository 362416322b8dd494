"""The build signatures round 8 of the real-log corpus added or widened, on wordings the
corpus does not hold (CASES and NEAR_MISSES run in test_round7_build_signatures.py): other versions, quotes, prefixes and wrapping of the same failures
(the corpus's own excerpts are checked by test_real_logs_diagnosis.py)."""

from __future__ import annotations

from tfwizard.core.diagnosis.build import diagnose

CASES: list[tuple[str, list[str]]] = [
    # python_configure without ./configure's variables: either variable, either quoting
    ("configure-not-run", ["Python Configuration Error: PYTHON_BIN_PATH environment variable "
                           "is not set"]),
    ("configure-not-run", ["00:12:01 'PYTHON_LIB_PATH' environment variable is not set"]),
    # 32-bit ARM options: gcc's other options and spelling, clang naming the target
    ("arm32-flags-on-aarch64", ["cc1plus: error: unrecognized command line option "
                                "‘-mfpu=neon-vfpv4’"]),
    ("arm32-flags-on-aarch64", ["gcc: error: unrecognized command-line option '-mthumb'"]),
    ("arm32-flags-on-aarch64", ["clang: error: unsupported option '-mfpu=' for target "
                                "'aarch64-unknown-linux-gnu'"]),
    # no C++ toolchain: Bazel 7 puts the type on its own line; the older crosstool wording
    ("cc-toolchain-unresolved", [
        "ERROR: /src/BUILD:3:11: While resolving toolchains for target //x:y (a1b2c3d): No "
        "matching toolchains found for types:",
        "  @@bazel_tools//tools/cpp:toolchain_type"]),
    ("cc-toolchain-unresolved", [
        "ERROR: /root/.cache/bazel/_bazel_root/4f1e/external/local_config_cc/BUILD:52:1: The "
        "crosstool_top you specified was resolved to '@local_config_cc//:toolchain', which "
        "does not contain a toolchain for cpu 'riscv64'"]),
    # gcc 11 without <limits>: gcc's note, clang's words
    ("compiler-version-unsupported", [
        "src/util.h:9:30: note: 'std::numeric_limits' is defined in header '<limits>'; did "
        "you forget to '#include <limits>'?"]),
    ("compiler-version-unsupported", [
        "src/util.h:9:30: error: no template named 'numeric_limits' in namespace 'std'"]),
    # every find_cuda_config header list, one name or several
    ("cuda-config-not-found", ["Could not find any NvInfer.h, NvInferVersion.h matching "
                               "version '10' in any subdirectory:"]),
    ("cuda-config-not-found", ["Could not find any nccl.h matching version '2' in any "
                               "subdirectory:"]),
    # Bazel 0.x's sandbox tool failing another call
    ("bazel-sandbox-mount-failed", ["src/main/tools/namespace-sandbox.c:612: unshare(CLONE_NEW"
                                    "USER): Operation not permitted"]),
    # setup.py without the wheel package, with typographic quotes
    ("numpy-missing-in-image", ["error: invalid command ‘bdist_wheel’"]),
    # Docker's Go wording of a full disk
    ("disk-full", ["failed to copy files: copy file range failed: no space left on device"]),
    # Bazel's built-ins that lost a member; a select() Bazel can no longer rank
    ("bazel-version-mismatch", ["Error: 'native' value has no field or method "
                                "'cc_proto_library'"]),
    ("bazel-version-mismatch", ["Error: 'cc_common' value has no field or method "
                                "'create_linking_context_from_compilation_outputs'"]),
    # (in a pinned rule set: round 17 found one in a source's own package that was its
    # BUILD file's, round17_wordings.BUILD_NEAR_MISSES)
    ("bazel-version-mismatch", ["ERROR: /x/external/y/BUILD:10:1: Illegal ambiguous match on "
                                "configurable attribute \"srcs\" in @y//:y:"]),
    # the toolkit's hook in its other stages
    ("docker-gpu-driver", ["nvidia-container-cli: initialization error: nvml error: driver "
                           "not loaded: unknown."]),
    ("docker-gpu-driver", ["stderr: nvidia-container-cli: requirement error: unsatisfied "
                           "condition: cuda>=12.4, please update your driver to a newer "
                           "version, or use an earlier cuda container: unknown."]),
]


#: lines that look like the above and mean something else (test_round7_build_signatures
#: runs these and CASES with its own)
NEAR_MISSES = [
    # x86 and ARM64 options that are not 32-bit ARM's
    "gcc: error: unrecognized command-line option '-mfma4'",
    "cc1: warning: unrecognized command line option '-mfpu=neon'",  # a warning, not an error
    # another toolchain type than C++'s
    "No matching toolchains found for types @rules_python//python:toolchain_type",
    # a Starlark value of the user's own
    "Error: 'struct' value has no field or method 'deps'",
    "Failed to initialize NVML: Driver/library version mismatch",  # the host's, not Docker's
]
#: the causes a near miss must not be
NOT_THESE = {"arm32-flags-on-aarch64", "cc-toolchain-unresolved", "bazel-version-mismatch",
             "docker-gpu-driver"}


def test_a_version_check_says_more_than_the_undefined_config_it_causes():
    found = diagnose([
        "WARNING: Config value opt is not defined in any .rc file",
        "Current Bazel version is 0.12.0, expected at least 0.15.0"])
    assert [d.id for d in found] == ["bazel-version-mismatch"]


def test_assembler_input_cut_mid_line_is_a_killed_compiler():
    found = diagnose(["{standard input}: Assembler messages:",
                      "{standard input}:48213: Warning: end of file not at end of a line; "
                      "newline inserted",
                      "{standard input}:48214: Error: unknown pseudo-op: `.lvl21'"])
    assert [d.id for d in found] == ["oom-compiler-killed"]


def test_the_cc_rules_own_words_for_no_toolchain():
    found = diagnose(["Error in fail: Unable to find a CC toolchain using toolchain resolution. "
                      "Target: @@rules_cc+//cc:current_cc_toolchain, Platform: //:rv64"])
    assert [d.id for d in found] == ["cc-toolchain-unresolved"]
