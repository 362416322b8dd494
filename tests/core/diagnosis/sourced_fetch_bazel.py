"""The fetch/git/bazel/docker/system signatures on the messages their tools print, as
the tools' own sources word them: other releases, platforms and locales of failures the
catalogue knows. Data only: the lists run in test_round7_build_signatures.py's and
test_runtime_wordings_r7.py's tests, with the rounds' lists.

Every line was written for these tests from the speaking tool's format string (filled in
with plausible paths and versions); resources/knowledge/sources.toml cites each source.
"""

from __future__ import annotations

_SHA = "4d5b3c6a1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b"

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # bazel_skylib's versions.check (lib/versions.bzl), under Bazel 6's "Error in fail:"
    ("bazel-version-mismatch", ["Error in fail: Current Bazel version is 5.4.1; expected at "
                                "least 6.1.0"]),
    ("bazel-version-mismatch", ["Error in fail: Current Bazel version is 7.4.1; expected at "
                                "most 6.5.0"]),
    ("bazel-version-mismatch", ["Current Bazel version is lower than 0.2.1; expected at least "
                                "0.4.5"]),
    # TensorFlow's version_check.bzl, its fail() text alone on its line
    ("bazel-version-mismatch", ["Current Bazel version is 0.24.1, expected at least 0.26.1"]),
    # the options parser on a .bazelrc's option this Bazel does not have, whatever its name
    # (OptionsParser), with and without the option's source before it
    ("bazel-version-mismatch", ["ERROR: --legacy_external_runfiles=false :: Unrecognized "
                                "option: --legacy_external_runfiles=false"]),
    ("bazel-version-mismatch", ["ERROR: Unrecognized option: --copt_for_cuda=-O3"]),
    # a builtin's parameter given a value of another type (BuiltinFunction, Bazel 3+), or
    # by name where it is positional-only
    ("bazel-version-mismatch", [
        "ERROR: /r/external/rules_foo/foo.bzl:41:28: in call to label_list(), parameter "
        "'allow_files' got value of type 'string', want 'bool or sequence'"]),
    ("bazel-version-mismatch", ["Error in getattr: getattr() got named argument for "
                                "positional-only parameter 'name'"]),
    # Bazel 0.x-2.x: any argument that does not fit a builtin (FuncallExpression), and the
    # type check of BaseFunction
    ("bazel-version-mismatch", [
        "ERROR: /s/tensorflow/tensorflow.bzl:1461:20: parameter 'executable' has no default "
        "value, for call to method label(default = None, executable, allow_files = None) of "
        "'attr (a language module)'"]),
    ("bazel-version-mismatch", [
        "ERROR: /s/third_party/py/python_configure.bzl:92:3: expected value of type 'string' "
        "for parameter 'path', for call to function which(path)"]),
    ("bazel-version-mismatch", [
        "ERROR: /s/tensorflow/tensorflow.bzl:20:5: expected string or NoneType for 'doc' "
        "while calling rule but got int instead: 3"]),
    # Bazel's own words for a source of another Bazel's era, read from its source by two
    # helpers who saw neither the corpus nor its misses (session 15)
    ("bazel-version-mismatch", ["ERROR: While parsing option --lockfile_mode=refresh: Not a "
                                "valid Lockfile mode: 'refresh' (should be off, update or "
                                "error)"]),
    ("bazel-version-mismatch", ["Command 'mod' not found. Try 'bazel help'."]),
    ("bazel-version-mismatch", ['ERROR: Invalid source type "git_repository" for module '
                                "rules_foo@1.2.0"]),
    ("bazel-version-mismatch", [
        "Error: Accessing providers via the field syntax on structs is deprecated and "
        "removed."]),
    ("bazel-version-mismatch", [
        "ERROR: /s/third_party/py/BUILD:12:11: Couldn't auto load 'py_library' from "
        "'@rules_python//python:py_library.bzl'. Ensure that you have a 'bazel_dep(name = "
        "\"rules_python\", ...)' in your MODULE.bazel file or add an explicit load "
        "statement to your BUILD file."]),
    ("bazel-version-mismatch", [
        "ERROR: /s/protobuf.bzl:90:20: The value 'REPOSITORY_NAME' has been removed in favor "
        "of 'repository_name()', please use the latter."]),
    ("bazel-version-mismatch", ["ERROR: /s/tensorflow/tensorflow.bzl:2210:18: 'lambda' not "
                                "supported, declare a function instead"]),
    ("bazel-version-mismatch", ["ERROR: /s/rules/defs.bzl:40:5: nested functions are not "
                                "allowed. Move the function to the top level."]),
    ("bazel-version-mismatch", [
        "ERROR: /r/external/local_config_cuda/crosstool/BUILD:40:1: in cc_toolchain rule "
        "@local_config_cuda//crosstool:cc-compiler-local: cc_toolchain.toolchain_config "
        "attribute must be specified. See https://github.com/bazelbuild/bazel/issues/7320 "
        "for details."]),
    ("bazel-version-mismatch", ["ERROR: No installed Bazel version found, cannot continue."]),
    # Bazelisk 1.x with BAZELISK_VERIFY_SHA256 (core/core.go), under its download error
    ("download-checksum-mismatch", [
        "2024/05/02 10:00:00 could not download Bazel: /root/.cache/bazelisk/downloads/sha256/"
        "5a7ff389/bin/bazel has sha256=0c6bd5c6a1e2f3a4 but need sha256=8a4f2b9e7d6c5b4a"]),
    # curl (git over curl) with OpenSSL's verify texts
    ("download-certificate-untrusted", [
        "fatal: unable to access 'https://github.com/abseil/abseil-cpp.git/': SSL certificate "
        "problem: unable to get issuer certificate"]),
    ("download-certificate-untrusted", ["curl: (60) SSL certificate problem: certificate is not "
                                        "yet valid"]),
    ("download-certificate-untrusted", ["curl: (60) SSL certificate problem: unable to verify "
                                        "the first certificate"]),
    # curl and git for Windows over schannel (lib/vtls/schannel.c, Curl_sspi_strerror)
    ("download-certificate-untrusted", [
        "fatal: unable to access 'https://github.com/tensorflow/tensorflow.git/': schannel: next "
        "InitializeSecurityContext failed: SEC_E_UNTRUSTED_ROOT (0x80090325) - The certificate "
        "chain was issued by an authority that is not trusted."]),
    ("download-certificate-untrusted", [
        "curl: (60) schannel: CertGetCertificateChain trust error CERT_TRUST_IS_UNTRUSTED_ROOT"]),
    ("download-certificate-untrusted", [
        "fatal: unable to access 'https://github.com/google/re2.git/': schannel: next "
        "InitializeSecurityContext failed: SEC_E_CERT_EXPIRED (0x80090328) - The received "
        "certificate has expired."]),
    # the same SSPI status in Chinese Windows' words, from a .NET download
    ("download-certificate-untrusted", ["System.ComponentModel.Win32Exception (0x80090325): "
                                        "证书链是由不受信任的颁发机构颁发的。"]),
    # the JDK (Bazel's downloader) with a server certificate not valid yet (a wrong clock)
    ("download-certificate-untrusted", [
        "Caused by: java.security.cert.CertificateNotYetValidException: NotBefore: Mon Jan 01 "
        "00:00:00 UTC 2035"]),
    # curl's timeouts (lib/multi.c): resolve, connect, transfer
    ("download-failed", ["curl: (28) Resolving timed out after 5000 milliseconds"]),
    ("download-failed", ["curl: (28) Connection timed out after 300001 milliseconds"]),
    ("download-failed", ["curl: (28) Operation timed out after 30000 milliseconds with 0 out "
                         "of 0 bytes received"]),
    # curl with a proxy it cannot resolve, and TLS handshakes cut off (OpenSSL, GnuTLS)
    ("download-failed", ["curl: (5) Could not resolve proxy: proxy.corp.example"]),
    ("download-failed", [
        "fatal: unable to access 'https://github.com/google/re2.git/': OpenSSL SSL_connect: "
        "SSL_ERROR_SYSCALL in connection to github.com:443 "]),
    ("download-failed", [
        "fatal: unable to access 'https://github.com/google/re2.git/': gnutls_handshake() "
        "failed: The TLS connection was non-properly terminated."]),
    # Go programs (Bazelisk, Docker) on a resolver that fails (net/dnsclient_unix.go, cgo)
    ("download-failed", [
        "2024/05/02 10:00:00 could not download Bazel: could not fetch https://releases.bazel."
        "build/7.4.1/release/bazel-7.4.1-linux-x86_64: Get \"https://releases.bazel.build/"
        "7.4.1/release/bazel-7.4.1-linux-x86_64\": dial tcp: lookup releases.bazel.build on "
        "127.0.0.53:53: server misbehaving"]),
    ("download-failed", [
        "docker: Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial "
        "tcp: lookup registry-1.docker.io: Temporary failure in name resolution."]),
    # the Docker daemon's registry request that timed out (net/http's Client)
    ("download-failed", [
        "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": net/http: "
        "request canceled while waiting for connection (Client.Timeout exceeded while awaiting "
        "headers)"]),
    # OpenSSH's resolver, git cloning over ssh
    ("download-failed", ["ssh: Could not resolve hostname github.com: Temporary failure in "
                         "name resolution"]),
    # Bazelisk resolving "latest" without a network (repositories/gcs.go)
    ("download-failed", [
        "2024/05/02 10:00:00 could not resolve the version 'latest' to an actual version "
        "number: could not list Bazel versions in GCS bucket: could not list GCS objects at "
        "https://www.googleapis.com/storage/v1/b/bazel/o?delimiter=/: EOF"]),
    # Bazel's heap watchers: RetainedHeapLimiter printing alone (Bazel 3/4), and
    # GcThrashingDetector's OutOfMemoryError message (Bazel 7)
    ("bazel-server-oom", [
        "RetainedHeapLimiter forcing exit due to GC thrashing: tenured space 8531214336 out of "
        "8589934592 (>90%) occupied after back-to-back full GCs"]),
    ("bazel-server-oom", [
        "GcThrashingDetector forcing exit: the tenured space has been more than 90% occupied "
        "after 2 consecutive full GCs within the past 60 seconds."]),
    # grpc-java 1.4x+ in Bazel 6/7: a remote action whose cache call ran past its deadline
    ("remote-deadline-exceeded", [
        "ERROR: /src/tensorflow/core/BUILD:12:8: Compiling tensorflow/core/kernels/x.cc failed: "
        "(Exit 34): DEADLINE_EXCEEDED: CallOptions deadline exceeded after 59.999897474s. "
        "[closed=[], open=[[buffered_nanos=59999, remote_addr=rbe.example/10.0.0.2:443]]]"]),
    ("remote-deadline-exceeded", [
        "java.io.IOException: io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: Context "
        "deadline exceeded after 119.999s."]),
    # Bazel 7's module registry behind a proxy that refuses it (IndexRegistry.grabFile), and
    # the registry's file with other bytes than the lockfile pins
    ("download-failed", [
        "ERROR: Error computing the main repository mapping: Failed to fetch registry file "
        "https://bcr.bazel.build/modules/rules_cc/0.0.9/MODULE.bazel: GET returned 407 Proxy "
        "Authentication Required"]),
    ("download-checksum-mismatch", [
        "ERROR: Failed to fetch registry file https://bcr.bazel.build/modules/abseil-cpp/"
        "20240116.2/MODULE.bazel: Checksum was 0c6bd5c6a1e2 but wanted 8a4f2b9e7d6c"]),
    # git's upload-pack refusing a commit that no ref advertises (upload-pack.c)
    ("git-ref-not-found", [f"fatal: remote error: upload-pack: not our ref {_SHA}"]),
    # git in a zh_CN locale: fetch, clone --branch, checkout of a commit, a tag, a branch
    ("git-ref-not-found", ["致命错误：无法找到远程引用 v2.99.0"]),
    ("git-ref-not-found", ["fatal: 远程分支 r2.99 在上游 origin 未发现"]),
    ("git-ref-not-found", [f"fatal: 引用不是一个树：{_SHA}"]),
    ("git-ref-not-found", ["错误：路径规格 'v2.99.0' 未匹配任何 Git 已知文件"]),
    ("git-ref-not-found", ["致命错误：'origin/r2.99' 不是一个提交，不能基于它创建分支 'r2.99'"]),
    # git 2.35.2's words for a repository another user owns, on a file:// mirror
    ("git-dubious-ownership", [
        "fatal: unsafe repository ('/mirror/tensorflow.git' is owned by someone else)",
        "To add an exception for this directory, call:",
        "\tgit config --global --add safe.directory /mirror/tensorflow.git",
        "fatal: Could not read from remote repository."]),
    # Podman/Buildah (containers/image): a manifest list and an OCI index without arm64
    ("container-image-wrong-arch", [
        "Error: choosing an image from manifest list docker://docker.io/tensorflow/build:"
        "latest-python3.11: no image found in manifest list for architecture arm64, variant "
        "\"v8\", OS linux"]),
    ("container-image-wrong-arch", [
        "Error: choosing image instance: no image found in image index for architecture "
        "\"arm64\", variant \"v8\", OS \"linux\""]),
    # Docker asked for --platform linux/arm64 with only the amd64 image local (moby, both)
    ("container-image-wrong-arch", [
        "docker: Error response from daemon: image with reference tensorflow/build:latest-"
        "python3.11 was found but does not match the specified platform: wanted linux/arm64, "
        "actual: linux/amd64."]),
    ("container-image-wrong-arch", [
        "docker: Error response from daemon: image with reference tensorflow/build:latest-"
        "python3.11 was found but its platform (linux/amd64) does not match the specified "
        "platform (linux/arm64)."]),
    # nvidia-container-cli in a rootless engine (libnvidia-container src/cli/configure.c)
    ("docker-gpu-driver", [
        "nvidia-container-cli: permission error: capability change failed: operation not "
        "permitted"]),
    # bash and coreutils' env in a zh_CN locale, a genrule starting `python`
    ("python-not-on-path", ["/bin/bash: 行 1: python: 未找到命令"]),
    ("python-not-on-path", ["/usr/bin/env: \"python\": 没有那个文件或目录"]),
    ("python-not-on-path", ["/usr/bin/env: “python”: 没有那个文件或目录"]),
    # glibc's strerror in a zh_CN locale: cp and dd (ENOSPC, EDQUOT), a JVM
    ("disk-full", ["cp: 写入'/root/.cache/bazel/_bazel_root/cache/repos/v1/content_addressable/"
                   "sha256/0c6b/file' 出错: 设备上没有空间"]),
    ("disk-full", ["java.io.IOException: 设备上没有空间"]),
    # Windows' ERROR_DISK_FULL in Chinese, from Python and from rustc/cargo
    ("disk-full", ["OSError: [WinError 112] 磁盘空间不足。: 'C:\\\\tmp\\\\bazel\\\\x.o'"]),
    ("disk-full", ["error: failed to write C:\\b\\lib.rmeta: 磁盘空间不足。 (os error 112)"]),
    ("disk-full", ["dd: 写入\"/home/dev/.cache/bazel/swap\" 出错: 超出磁盘限额"]),
]

#: ids the near misses must not be diagnosed as
NOT_BUILD = {"bazel-version-mismatch", "download-failed", "download-certificate-untrusted",
             "download-checksum-mismatch", "git-dubious-ownership", "git-ref-not-found",
             "container-image-wrong-arch", "disk-full", "docker-gpu-driver",
             "python-not-on-path", "bazel-server-oom", "remote-deadline-exceeded"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # TensorFlow's version_check.bzl on a Bazel built from source: a notice, not a failure
    "DEBUG: Current Bazel is not a release version, cannot check for compatibility.",
    "Make sure that you are running at least Bazel 6.5.0.",
    # the JVM refusing a flag of a newer Java (a JDK too old, not Bazel's options); a
    # function written in Starlark called wrongly (the source's own macro, not the API)
    "Unrecognized option: --add-opens=java.base/java.lang=ALL-UNNAMED",
    "Error: Could not create the Java Virtual Machine.",
    "Error in tf_cc_test: tf_cc_test() missing 1 required positional argument: name",
    # Bazel 8's notice in every build that some rule sets are not there to autoload from;
    # a keyword Starlark never had (a mistake on every release)
    "WARNING: Couldn't auto load rules or symbols, because no dependency on module/"
    "repository 'rules_android' found. This will result in a failure if there's a "
    "reference to those rules or symbols.",
    "ERROR: /s/BUILD:3:1: 'while' not supported, use a for loop instead",
    # curl's own retry notice, and a verified handshake (curl -v)
    "Warning: Transient problem: timeout Will retry in 1 seconds. 3 retries left.",
    "*  SSL certificate verify ok.",
    # Bazelisk starting a download that then succeeds
    "2024/05/02 10:00:00 Downloading https://releases.bazel.build/7.4.1/release/"
    "bazel-7.4.1-linux-x86_64...",
    # git 2.35.2's refusal alone: a script asking git for a version string goes past it
    "fatal: unsafe repository ('/src' is owned by someone else)",
    # a genrule that found python3 (bash's xtrace of it), and the toolkit's info log
    "+ python3 tensorflow/tools/git/gen_git_source.py --generate",
    "I0101 12:00:00.000000 1234 nvc_info.c:796] requesting device information with ''",
    # curl -v of a handshake that worked; the startup options that turn a heap watcher on
    "*  SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384",
    "INFO: Options provided by the client:",
    "  --experimental_oom_more_eagerly_threshold=90",
    # a cache lookup Bazel warns about and goes past (remote-cache-unusable's)
    "WARNING: Remote Cache: DEADLINE_EXCEEDED: CallOptions deadline exceeded after "
    "59.999897474s.",
    # a Go tool's own warning that it goes past (kubeadm's version lookup, falling back)
    "W1220 21:38:53.193913   18919 version.go:102] could not fetch a Kubernetes version from "
    "the internet: unable to get URL \"https://dl.k8s.io/release/stable-1.txt\": Get "
    "https://dl.k8s.io/release/stable-1.txt: net/http: request canceled while waiting for "
    "connection (Client.Timeout exceeded while awaiting headers)",
    # a program's own words for low disk space, with no system error behind them
    "提示：磁盘空间不足。请清理缓存后重试。",
    # git in a zh_CN locale cloning fine
    "正克隆到 'tensorflow'...",
    # a fetch that found the commit
    f" * branch            {_SHA} -> FETCH_HEAD",
]
