"""Configure answers: the recipe as the environment TensorFlow's own configure.py reads.

`configure_env` answers every question so configure never prompts. `simulate_configure`
predicts the `.tf_configure.bazelrc` that TF's configure.py writes for an environment,
line for line (checked against the goldens in shared/reference/tf-configure-goldens),
including its quiet fallback to the default compute capabilities on a bad value.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ... import cc as ccmod
from ...errors import UnsafeValue
from ...i18n import _
from ...knowledge import Release
from ...recipe import Recipe
from ...safety import check_env_value
from ...toolchain import FALLBACK_CLANG, cxx_toolchain

#: configure.py's default when HERMETIC_CUDA_COMPUTE_CAPABILITIES is unset or invalid
TF_DEFAULT_CCS = "3.5,7.0"
DEFAULT_PYTHON_BIN = "/usr/bin/python3"
DEFAULT_GCC = "/usr/bin/gcc"
_TRUE = ("1", "t", "true", "y", "yes")
_FALSE = ("0", "f", "false", "n", "no")


def clang_path(major: str | int) -> str:
    """Where Debian/Ubuntu's LLVM packages (and TF's build images) put clang N."""
    return f"/usr/lib/llvm-{major}/bin/clang"


def clang_major_of(path: str) -> int | None:
    """The major version in a clang path like /usr/lib/llvm-18/bin/clang (None: none)."""
    match = re.search(r"llvm-(\d+)", path)
    return int(match.group(1)) if match else None


def configure_env(
    recipe: Recipe,
    release: Release | None,
    *,
    compute_capabilities: list[str] | None = None,
    amdgpu_targets: list[str] | None = None,
    python_bin: str = DEFAULT_PYTHON_BIN,
) -> dict[str, str]:
    """Environment answers for configure.py, in the order configure asks its questions.

    `compute_capabilities` / `amdgpu_targets` are the resolved lists ("auto" already
    expanded by the rules engine); the recipe's own lists are used when they are None.
    """
    env: dict[str, str] = {}
    env["PYTHON_BIN_PATH"] = python_bin
    env["USE_DEFAULT_PYTHON_LIB_PATH"] = "1"
    env["TF_SET_ANDROID_WORKSPACE"] = "0"
    kind = recipe.backend.kind
    toolchain = cxx_toolchain(recipe, release)
    hermetic = release is None or release.hermetic_cuda

    env["TF_NEED_ROCM"] = "1" if kind == "rocm" else "0"
    if kind == "rocm":
        env["ROCM_PATH"] = recipe.rocm.path or "/opt/rocm"
        targets = amdgpu_targets if amdgpu_targets is not None else recipe.rocm.amdgpu_targets
        targets = [t for t in targets if t != "auto"]
        if targets:
            env["TF_ROCM_AMDGPU_TARGETS"] = ",".join(targets)
    env["TF_NEED_CUDA"] = "1" if kind == "cuda" else "0"
    if kind == "cuda":
        ccs = compute_capabilities if compute_capabilities is not None else (
            recipe.cuda.compute_capabilities)
        cc_text = ",".join(ccmod.normalize(c) for c in ccs if c != "auto")
        if hermetic:
            env["HERMETIC_CUDA_VERSION"] = recipe.cuda.version
            env["HERMETIC_CUDNN_VERSION"] = recipe.cuda.cudnn
            env["HERMETIC_CUDA_COMPUTE_CAPABILITIES"] = cc_text
            env["LOCAL_CUDA_PATH"] = recipe.cuda.local_cuda_path
            env["LOCAL_CUDNN_PATH"] = recipe.cuda.local_cudnn_path
            env["LOCAL_NCCL_PATH"] = recipe.cuda.local_nccl_path
        else:
            # pre-hermetic configure.py (<= 2.17) looks for a local CUDA install
            env["TF_NEED_TENSORRT"] = "0"
            env["TF_CUDA_VERSION"] = _major_minor(recipe.cuda.version)
            env["TF_CUDNN_VERSION"] = recipe.cuda.cudnn.split(".")[0] if recipe.cuda.cudnn else ""
            env["TF_CUDA_COMPUTE_CAPABILITIES"] = cc_text
            paths = legacy_cuda_paths(recipe.cuda.local_cuda_path, recipe.cuda.local_cudnn_path)
            if paths:  # unset, find_cuda_config.py searches its defaults, /usr among them
                env["TF_CUDA_PATHS"] = paths
            env["TF_NCCL_VERSION"] = ""
        if recipe.cuda.compiler == "clang":
            env["TF_CUDA_CLANG"] = "1"
            env["CLANG_CUDA_COMPILER_PATH"] = clang_path(toolchain.configure_clang
                                                         or FALLBACK_CLANG)
        else:
            env["TF_CUDA_CLANG"] = "0"
            gcc = recipe.toolchain.gcc
            env["GCC_HOST_COMPILER_PATH"] = f"/usr/bin/gcc-{gcc}" if gcc else DEFAULT_GCC
    elif toolchain.configure_clang:
        env["TF_NEED_CLANG"] = "1"
        env["CLANG_COMPILER_PATH"] = clang_path(toolchain.configure_clang)
    else:  # gcc, or the hermetic LLVM: configure names no compiler
        env["TF_NEED_CLANG"] = "0"
    env["CC_OPT_FLAGS"] = " ".join(recipe.build.opt_flags)
    if not recipe.build.xla:
        env["TF_ENABLE_XLA"] = "0"
    if recipe.build.system_libs:
        env["TF_SYSTEM_LIBS"] = ",".join(recipe.build.system_libs)
    for key, value in env.items():
        problem = check_env_value(value)
        if problem:
            raise UnsafeValue(_("configure answer {key}: {problem}").format(
                key=key, problem=problem))
    return env


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def legacy_cuda_paths(local_cuda: str, local_cudnn: str) -> str:
    """TF_CUDA_PATHS for a pre-hermetic release (<= 2.17), "" to leave it unset.

    Set, it replaces find_cuda_config.py's whole search list; TF's build images install
    cuDNN from apt under /usr, so /usr stays on it unless the recipe names cuDNN's place.
    """
    paths = [p for p in (local_cuda, local_cudnn) if p]
    if paths and not local_cudnn:
        paths.append("/usr")
    return ",".join(paths)


@dataclass
class ConfigureResult:
    """What configure.py would do with an environment."""

    lines: list[str] = field(default_factory=list)
    exit_code: int = 0
    error: str = ""
    messages: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The predicted .tf_configure.bazelrc as text."""
        return "".join(line + "\n" for line in self.lines)


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    if name not in env:
        return default
    value = env[name].strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise _UserInputError(
        f"Environment variable {name} must be set as a boolean indicator.\n"
        "The following are accepted as TRUE : 1, t, true, y, yes.\n"
        "The following are accepted as FALSE: 0, f, false, n, no.\n"
        f"Current value is {env[name]}."
    )


class _UserInputError(Exception):
    pass


def _valid_cc_list(text: str) -> bool:
    """configure.py's compute capability check (hermetic era)."""
    tokens = [t.strip() for t in text.replace(" ", "").split(",")]
    if not tokens or any(not t for t in tokens):
        return False
    for token in tokens:
        m = re.fullmatch(r"([0-9]+)\.([0-9]+)", token)
        if m:
            if float(token) < 3.0:
                return False
            continue
        m = re.fullmatch(r"(sm|compute)_?([0-9]+[0-9]+)[af]?", token)
        if m:
            if int(m.group(2)) < 30:
                return False
            continue
        return False
    return True


def simulate_configure(
    env: Mapping[str, str],
    *,
    python_lib_path: str = "/usr/lib/python3/dist-packages",
    hermetic: bool = True,
) -> ConfigureResult:
    """Predict the .tf_configure.bazelrc TF's configure.py writes for this environment."""
    result = ConfigureResult()
    lines = result.lines
    python_bin = env.get("PYTHON_BIN_PATH", DEFAULT_PYTHON_BIN)
    lines.append(f'build --action_env PYTHON_BIN_PATH="{python_bin}"')
    lines.append(f'build --action_env PYTHON_LIB_PATH="{env.get("PYTHON_LIB_PATH", python_lib_path)}"')
    lines.append(f'build --python_path="{python_bin}"')
    try:
        if "TF_ENABLE_XLA" in env:
            xla = _bool(env, "TF_ENABLE_XLA", True)
            lines.append(f"build --define=with_xla_support={'true' if xla else 'false'}")
        need_rocm = _bool(env, "TF_NEED_ROCM", False)
        if need_rocm:
            lines.append("build --config=rocm")
            for name in ("ROCM_PATH", "HIP_PLATFORM"):
                if env.get(name):
                    lines.append(f'build --action_env {name}="{env[name]}"')
        need_cuda = _bool(env, "TF_NEED_CUDA", False)
        if need_rocm and need_cuda:
            raise _UserInputError("CUDA / ROCm are mututally exclusive. At most 1 GPU platform "
                                  "can be configured.")
        if need_cuda:
            if hermetic:
                _hermetic_cuda_lines(env, result)
            else:
                _legacy_cuda_lines(env, result)
            if env.get("LD_LIBRARY_PATH") and env["LD_LIBRARY_PATH"] != "1":
                lines.append(f'build --action_env LD_LIBRARY_PATH="{env["LD_LIBRARY_PATH"]}"')
            cuda_clang = _bool(env, "TF_CUDA_CLANG", hermetic)
            if cuda_clang:
                lines.append("build --config=cuda_clang")
                path = env.get("CLANG_CUDA_COMPILER_PATH", clang_path(18))
                lines.append(f'build --action_env CLANG_CUDA_COMPILER_PATH="{path}"')
                if clang_major_of(path) in (16, 17):
                    lines.append("build --copt=-Wno-gnu-offsetof-extensions")
                lines.append("build --config=cuda_clang")
            else:
                gcc = env.get("GCC_HOST_COMPILER_PATH", DEFAULT_GCC)
                lines.append(f'build --action_env GCC_HOST_COMPILER_PATH="{gcc}"')
                lines.append("build --config=cuda")
        else:
            if _bool(env, "TF_NEED_CLANG", True):
                path = env.get("CLANG_COMPILER_PATH", clang_path(18))
                lines.append(f'build --action_env CLANG_COMPILER_PATH="{path}"')
                lines.append(f"build --repo_env=CC={path}")
                lines.append(f"build --repo_env=BAZEL_COMPILER={path}")
                if clang_major_of(path) in (16, 17):
                    lines.append("build --copt=-Wno-gnu-offsetof-extensions")
        for flag in env.get("CC_OPT_FLAGS", "-Wno-sign-compare").split():
            lines.append(f"build:opt --copt={flag}")
            lines.append(f"build:opt --host_copt={flag}")
        if env.get("TF_SYSTEM_LIBS"):
            libs = ",".join(sorted(x for x in env["TF_SYSTEM_LIBS"].split(",") if x))
            lines.append(f'build --action_env TF_SYSTEM_LIBS="{libs}"')
        gpu = need_cuda or need_rocm
        tag = "-no_gpu" if gpu else "-gpu"
        lines.append("test --test_size_filters=small,medium")
        if gpu:
            lines.append("test --test_env=LD_LIBRARY_PATH")
        base = f"-benchmark-test,-no_oss,-oss_excluded,{tag}"
        lines.append(f"test:v1 --test_tag_filters={base},-oss_serial")
        lines.append(f"test:v1 --build_tag_filters={base}")
        lines.append(f"test:v2 --test_tag_filters={base},-oss_serial,-v1only")
        lines.append(f"test:v2 --build_tag_filters={base},-v1only")
    except _UserInputError as exc:
        result.exit_code = 1
        result.error = f"UserInputError: {exc}"
    return result


def _hermetic_cuda_lines(env: Mapping[str, str], result: ConfigureResult) -> None:
    lines = result.lines
    for name in ("HERMETIC_CUDA_VERSION", "HERMETIC_CUDNN_VERSION"):
        if env.get(name):
            lines.append(f'build:cuda --repo_env {name}="{env[name]}"')
    ccs = env.get("HERMETIC_CUDA_COMPUTE_CAPABILITIES", "")
    if not ccs or not _valid_cc_list(ccs):
        if ccs:
            result.messages.append(_(
                "ERROR: invalid compute capability {ccs!r}; configure.py falls back to "
                "{default} without asking again").format(ccs=ccs, default=TF_DEFAULT_CCS))
        ccs = TF_DEFAULT_CCS
    lines.append(f'build:cuda --repo_env HERMETIC_CUDA_COMPUTE_CAPABILITIES="{ccs}"')
    for name in ("LOCAL_CUDA_PATH", "LOCAL_CUDNN_PATH", "LOCAL_NCCL_PATH"):
        if env.get(name):
            lines.append(f'build:cuda --repo_env {name}="{env[name]}"')


def _legacy_cuda_lines(env: Mapping[str, str], result: ConfigureResult) -> None:
    """Pre-hermetic configure.py (<= TF 2.17), best effort: attribution is UNVERIFIED."""
    lines = result.lines
    if _bool(env, "TF_NEED_TENSORRT", False):
        lines.append("build --config=tensorrt")
    for name in ("TF_CUDA_VERSION", "TF_CUDNN_VERSION", "TF_NCCL_VERSION", "TF_CUDA_PATHS"):
        if env.get(name):
            lines.append(f'build --action_env {name}="{env[name]}"')
    ccs = env.get("TF_CUDA_COMPUTE_CAPABILITIES", "")
    if not ccs or not _valid_cc_list(ccs):
        ccs = TF_DEFAULT_CCS
    lines.append(f'build --action_env TF_CUDA_COMPUTE_CAPABILITIES="{ccs}"')


def parse_env_file(text: str) -> dict[str, str]:
    """KEY=VALUE lines, split at the first '=' (the goldens' env.txt format)."""
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip():
            key, _sep, value = line.partition("=")
            env[key] = value
    return env


# -- find_cuda_config.py: where configure looks for a local CUDA (TF <= 2.17) ---------------

#: the search list when TF_CUDA_PATHS is unset, before the folders `ldconfig -p` names;
#: {version} is TF_CUDA_VERSION ("12.3"; "12.*" for a major alone, "*" when empty)
CUDA_DEFAULT_BASES = ("/usr/local/cuda-{version}", "/usr/local/cuda", "/usr", "/usr/local/cudnn")
#: the folders under each base it looks for headers in
CUDA_HEADER_DIRS = ("", "include", "include/cuda", "include/*-linux-gnu", "extras/CUPTI/include",
                    "include/cuda/CUPTI", "local/cuda/extras/CUPTI/include")
CUDA_HEADERS = ("cuda.h",)
CUDNN_HEADERS = ("cudnn.h", "cudnn_version.h")


def cuda_search_bases(env: Mapping[str, str]) -> list[str]:
    """The base folders find_cuda_config.py searches: TF_CUDA_PATHS replaces the defaults."""
    if "TF_CUDA_PATHS" in env:
        return env["TF_CUDA_PATHS"].split(",")
    version = env.get("TF_CUDA_VERSION", "")
    version = version if "." in version else (f"{version}.*" if version else "*")
    return [base.format(version=version) for base in CUDA_DEFAULT_BASES]


def _library_bases(env: Mapping[str, str], name: str, bases: list[str]) -> list[str]:
    """CUDA_TOOLKIT_PATH (cuda) or CUDNN_INSTALL_PATH (cudnn) when set, else `bases`."""
    if name not in env:
        return bases
    legacy = re.match(r"^((?:/[^/ ]*)+)/lib/\w+-linux-gnu/?$", env[name])
    return [legacy.group(1)] if legacy and name == "CUDNN_INSTALL_PATH" else env[name].split(",")


def header_candidates(env: Mapping[str, str], library: str) -> list[str]:
    """Every place find_cuda_config.py would look for `library`'s ("cuda", "cudnn") header,
    in its order; glob patterns stay patterns."""
    cuda = library == "cuda"
    bases = _library_bases(env, "CUDA_TOOLKIT_PATH" if cuda else "CUDNN_INSTALL_PATH",
                           cuda_search_bases(env))
    names: tuple[str, ...] = CUDA_HEADERS if cuda else CUDNN_HEADERS
    return [posixpath.join(base, sub, name)
            for base in bases for sub in CUDA_HEADER_DIRS for name in names]


def _glob_match(pattern: str, path: str) -> bool:
    """glob.glob semantics for one path: `*` does not cross a `/`."""
    parts, names = pattern.split("/"), path.split("/")
    return len(parts) == len(names) and all(fnmatch.fnmatchcase(n, p)
                                            for p, n in zip(parts, names, strict=True))


@dataclass
class CudaSearch:
    """What find_cuda_config.py would find: the header per library, or its error."""

    found: dict[str, str] = field(default_factory=dict)
    error: str = ""


def simulate_find_cuda(env: Mapping[str, str], headers: Mapping[str, str | None]
                       ) -> CudaSearch:
    """find_cuda_config.py's header search for CUDA and cuDNN in an image.

    `headers`: the image's header files, path -> the version it defines (CUDA_VERSION as
    "12.3", CUDNN_MAJOR.MINOR.PATCHLEVEL as "8.9.6"), None when it defines none (cuDNN 8's
    cudnn.h only includes cudnn_version.h). A header counts when its version starts with
    TF_CUDA_VERSION / TF_CUDNN_VERSION, as find_cuda_config.py's _matches_version does.
    """
    result = CudaSearch()
    for library, wanted in (("cuda", env.get("TF_CUDA_VERSION", "")),
                            ("cudnn", env.get("TF_CUDNN_VERSION", ""))):
        candidates = header_candidates(env, library)
        hit = next((path for pattern in candidates for path, version in headers.items()
                    if _glob_match(pattern, path) and version is not None
                    and version.startswith(wanted)), None)
        if hit is None:
            cuda = library == "cuda"
            names = ", ".join(CUDA_HEADERS if cuda else CUDNN_HEADERS)
            bases = _library_bases(env, "CUDA_TOOLKIT_PATH" if cuda else "CUDNN_INSTALL_PATH",
                                   cuda_search_bases(env))
            # find_cuda_config.py's ConfigError, shortened (TF's words: not translated)
            result.error = (f"Could not find any {names} matching version '{wanted}' in any "
                            f"subdirectory of: {', '.join(sorted(bases))}")
            return result
        result.found[library] = hit
    return result
