"""TensorFlow's build facts as the source being built states them.

The knowledge base (releases.toml) says what a release builds with; it lags, and a
researcher builds a branch of their own. The source's own files are the truth, so they are
read as soon as the source is there (the user's checkout when a recipe is checked or
planned, the clone at the tag right after the build's fetch step) and win over the table
(srcoverlay.py):

| fact | file |
|---|---|
| `bazel` | `.bazelversion` (and `_TF_MIN/MAX_BAZEL_VERSION` in `configure.py`) |
| `configs`, `hermetic_cc_toolchain`, `use_pywrap_rules`, `hermetic` defaults, `compute_capabilities` | `.bazelrc` |
| `configure_vars`, `configure_default_ccs` | `configure.py` |
| `pythons` | `requirements_lock_3_*.txt` |
| `toolchain_pin` | the `rules_ml_toolchain` archive the workspace pins (`WORKSPACE`, `tensorflow/workspace*.bzl`) |
| `redist_cuda`, `redist_cudnn`, `redist_without_nccl` | a `cuda_redist_versions.bzl` in the tree |
| `wheel_style` | `tensorflow/tools/pip_package/BUILD` (`:wheel` or `:build_pip_package`) |
| `module_bazel`, `bzlmod` | `MODULE.bazel` there; `.bazelrc`'s `--enable_bzlmod` / `--noenable_bzlmod` |
| `tf_version` | `tf_version.bzl`'s `TF_VERSION`, else `setup.py`'s `_VERSION`, else `TF_*_VERSION` in `release_version.h` / `version.h` |

Every field is None (or empty) when the tree does not state it: a fact that is not there
is unknown, never "different". `origin` names the file each stated fact came from.
`read_source_facts(path)` reads a folder on this machine; `facts_from_files` reads the same
files from any mapping (the runner passes what it copied out of the build container).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from ..bazelversion import parse_bazelversion

#: the files read by their fixed paths, relative to the source's root
BAZELVERSION = ".bazelversion"
BAZELRC = ".bazelrc"
CONFIGURE = "configure.py"
SETUP_PY = "tensorflow/tools/pip_package/setup.py"
TF_VERSION_BZL = "tensorflow/tf_version.bzl"  # where TF keeps its version from 2.20 on
VERSION_HEADERS = ("tensorflow/core/public/release_version.h", "tensorflow/core/public/version.h")
PIP_BUILD = "tensorflow/tools/pip_package/BUILD"
#: where a workspace pins rules_ml_toolchain (TF 2.21: tensorflow/workspace0.bzl)
MODULE_BAZEL = "MODULE.bazel"
PIN_FILES = ("WORKSPACE", "tensorflow/workspace0.bzl", "tensorflow/workspace1.bzl",
             "tensorflow/workspace2.bzl", "tensorflow/workspace3.bzl", MODULE_BAZEL)
#: the hermetic CUDA/cuDNN lists when the tree carries them (TF 2.18-2.20 did)
REDIST_FILES = ("third_party/gpus/cuda/hermetic/cuda_redist_versions.bzl",
                "third_party/xla/third_party/gpus/cuda/hermetic/cuda_redist_versions.bzl",
                "third_party/xla/third_party/tsl/third_party/gpus/cuda/hermetic/"
                "cuda_redist_versions.bzl")
#: the lock files the Pythons are read from (3.8 to 3.16 are looked for by name where the
#: folder cannot be listed: a build container)
LOCK_FILE = re.compile(r"^requirements_lock_3_(\d+)\.txt$")
LOCK_CANDIDATES = tuple(f"requirements_lock_3_{minor}.txt" for minor in range(8, 17))
#: every file read by a fixed name
#: the files that may name the tree's TensorFlow version, in the order they are asked
VERSION_FILES = (TF_VERSION_BZL, SETUP_PY, *VERSION_HEADERS)
FIXED_FILES = (BAZELVERSION, BAZELRC, CONFIGURE, TF_VERSION_BZL, SETUP_PY, *VERSION_HEADERS,
               PIP_BUILD,
               *PIN_FILES, *REDIST_FILES)
#: files larger than this are not read (TF's biggest, configure.py, is ~55 kB)
MAX_FILE_BYTES = 4 << 20

#: the .bazelrc configs that set the hermetic defaults and the release's compute
#: capabilities, in the order TF's files have used them ("" = a plain build/common line)
DEFAULT_CONFIGS = ("cuda_version", "cuda", "cuda_clang", "cuda_clang_official", "")
CC_CONFIGS = ("cuda_clang", "cuda", "cuda_clang_official", "cuda_version", "")
HERMETIC_NAMES = ("HERMETIC_CUDA_VERSION", "HERMETIC_CUDNN_VERSION", "HERMETIC_NCCL_VERSION",
                  "HERMETIC_NVSHMEM_VERSION")
_TRUE = ("1", "true", "yes", "y", "t")


@dataclass(frozen=True)
class SourceFacts:
    """What one TensorFlow tree says about its own build (None/empty: not stated)."""

    where: str  # the folder, or git_url@ref for a clone
    commit: str = ""  # the checkout's HEAD when it could be read
    tf_version: str | None = None  # "2.21.0", "2.22.0rc0" (PEP 440)
    bazel: str | None = None  # .bazelversion's spec
    bazel_min: str | None = None  # configure.py _TF_MIN_BAZEL_VERSION
    bazel_max: str | None = None
    configs: tuple[str, ...] | None = None  # the .bazelrc configs, sorted
    hermetic_cc_toolchain: bool | None = None
    use_pywrap_rules: bool | None = None
    hermetic: dict[str, str] = field(default_factory=dict)  # HERMETIC_*_VERSION -> value
    compute_capabilities: tuple[str, ...] | None = None
    configure_vars: tuple[str, ...] | None = None  # the variables configure.py reads
    configure_default_ccs: str | None = None
    pythons: tuple[str, ...] | None = None
    toolchain_pin: str | None = None  # the rules_ml_toolchain commit
    redist_cuda: tuple[str, ...] | None = None
    redist_cudnn: tuple[str, ...] | None = None
    redist_without_nccl: tuple[str, ...] = ()
    wheel_style: str | None = None  # wheel | build_pip_package
    module_bazel: bool | None = None  # the tree has a MODULE.bazel (Bzlmod)
    bzlmod: bool | None = None  # .bazelrc's plain --enable_bzlmod / --noenable_bzlmod
    #: fact name -> the file (relative to the root) it was read from
    origin: dict[str, str] = field(default_factory=dict)

    @property
    def stated(self) -> bool:
        """Whether the tree stated anything at all."""
        return bool(self.origin)

    def cite(self, name: str) -> str:
        """Where a fact came from: "FILE @ COMMIT" (or FILE alone)."""
        file = self.origin.get(name, "")
        return f"{file} @ {self.commit[:12]}" if self.commit and file else file

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the build record keeps it)."""
        return asdict(self)


# -- parsing one file at a time ---------------------------------------------------------------


def parse_bazelrc(text: str) -> tuple[set[str], dict[str, dict[str, str]]]:
    """(every config named, config -> {repo_env name: value}); config "" is the lines with no
    config (`build`, `common`). Both `--repo_env=N=V` and `--repo_env N=V` count."""
    configs, env, _flags = parse_bazelrc_flags(text)
    return configs, env


def parse_bazelrc_flags(text: str) -> tuple[set[str], dict[str, dict[str, str]],
                                            dict[str, list[str]]]:
    """parse_bazelrc's answer and, per config, every option word in order."""
    configs: set[str] = set()
    env: dict[str, dict[str, str]] = {}
    flags: dict[str, list[str]] = {}
    for line in _logical_lines(text):
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if not words:
            continue
        command, _colon, config = words[0].partition(":")
        if not re.fullmatch(r"[a-z_-]+", command):
            continue
        if config:
            configs.add(config)
        flags.setdefault(config, []).extend(words[1:])
        for name, value in _repo_envs(words[1:]):
            env.setdefault(config, {})[name] = value
    return configs, env, flags


def _logical_lines(text: str) -> list[str]:
    """The rc file's lines with backslash continuations joined."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        out.append(pending + raw)
        pending = ""
    if pending:
        out.append(pending)
    return out


def _repo_envs(words: list[str]) -> list[tuple[str, str]]:
    out = []
    for i, word in enumerate(words):
        if word.startswith("--repo_env="):
            assignment = word[len("--repo_env="):]
        elif word == "--repo_env" and i + 1 < len(words):
            assignment = words[i + 1]
        else:
            continue
        name, eq, value = assignment.partition("=")
        if eq:
            out.append((name, value))
    return out


def _first_set(env: Mapping[str, Mapping[str, str]], configs: tuple[str, ...],
               name: str) -> str | None:
    for config in configs:
        value = env.get(config, {}).get(name)
        if value is not None:
            return value
    return None


#: a variable name configure.py reads: an upper-case string literal with an underscore
_CONFIGURE_VAR = re.compile(r"""['"]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['"]""")
_CONFIGURE_CONST = re.compile(r"""^(_[A-Z_]+)\s*=\s*['"]([^'"]*)['"]""", re.MULTILINE)


def parse_configure(text: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """(the variable names configure.py reads, its `_NAME = 'value'` constants)."""
    names = sorted(set(_CONFIGURE_VAR.findall(text)))
    return tuple(names), dict(_CONFIGURE_CONST.findall(text))


def parse_tf_version(setup_py: str | None, header: str | None) -> str | None:
    """TensorFlow's version as PEP 440 ("2.22.0rc0"): setup.py's `_VERSION`, else the
    header's TF_MAJOR/MINOR/PATCH_VERSION and TF_VERSION_SUFFIX."""
    text = None
    if setup_py:
        found = re.search(r"""^_VERSION\s*=\s*['"]([^'"]+)['"]""", setup_py, re.MULTILINE)
        text = found.group(1) if found else None
    if text is None and header:
        parts = {k: re.search(rf"^#define\s+TF_{k}_VERSION\s+(\d+)", header, re.MULTILINE)
                 for k in ("MAJOR", "MINOR", "PATCH")}
        if all(parts.values()):
            suffix = re.search(r'^#define\s+TF_VERSION_SUFFIX\s+"([^"]*)"', header, re.MULTILINE)
            text = ".".join(m.group(1) for m in parts.values() if m) + (
                suffix.group(1) if suffix else "")
    if text is None:
        return None
    try:
        return str(Version(text))
    except InvalidVersion:
        return None


def parse_toolchain_pin(text: str) -> str | None:
    """The rules_ml_toolchain commit a workspace file downloads, or None."""
    found = re.search(r"rules_ml_toolchain(?:/archive/|-)([0-9a-f]{40})", text)
    return found.group(1) if found else None


def _dict_block(text: str, name: str) -> str | None:
    """The body of `NAME = {...}` up to its closing brace at the line start, with the rest
    of that line (where a `| {v: ... if v.startswith("12")}` union may follow)."""
    start = re.search(rf"^{name}\s*=\s*\{{", text, re.MULTILINE)
    if start is None:
        return None
    end = re.search(r"^\}.*$", text[start.end():], re.MULTILINE)
    return text[start.end(): start.end() + end.end()] if end else None


def _keys(block: str) -> tuple[str, ...]:
    """The top-level keys of a Starlark dict's body (4-space indent)."""
    return tuple(re.findall(r'^ {4}"([^"]+)"\s*:', block, re.MULTILINE))


def parse_redist(text: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """(CUDA versions, cuDNN versions, CUDA versions without an NCCL wheel) of a
    cuda_redist_versions.bzl: the keys of CUDA_REDIST_JSON_DICT and CUDNN_REDIST_JSON_DICT;
    a CUDA version lacks NCCL when CUDA_NCCL_WHEELS has neither it nor its major."""
    cuda_block = _dict_block(text, "CUDA_REDIST_JSON_DICT")
    cudnn_block = _dict_block(text, "CUDNN_REDIST_JSON_DICT")
    if cuda_block is None or cudnn_block is None:
        return None
    cuda, cudnn = _keys(cuda_block), _keys(cudnn_block)
    nccl_block = _dict_block(text, "CUDA_NCCL_WHEELS")
    if nccl_block is None:
        return cuda, cudnn, ()
    keys = set(_keys(nccl_block))
    prefixes = tuple(re.findall(r'startswith\("([0-9.]+)"\)', nccl_block))
    without = tuple(v for v in cuda if v not in keys and v.split(".")[0] not in keys
                    and not v.startswith(prefixes or ("\0",)))
    return cuda, cudnn, without


def parse_wheel_style(text: str) -> str | None:
    """`wheel` when the pip_package BUILD defines :wheel, `build_pip_package` when it defines
    only that, None when neither."""
    names = set(re.findall(r"""\bname\s*=\s*['"]([A-Za-z0-9_]+)['"]""", text))
    if "wheel" in names:
        return "wheel"
    return "build_pip_package" if "build_pip_package" in names else None


def _cc_tokens(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


# -- the whole tree -------------------------------------------------------------------------


def facts_from_files(files: Mapping[str, str], where: str, commit: str = "") -> SourceFacts:
    """The facts the given files state; `files` maps a path relative to the source's root
    to its text (absent: the tree lacks it)."""
    origin: dict[str, str] = {}
    values: dict[str, Any] = {}

    def stated(name: str, value: Any, file: str) -> None:
        if value is not None:
            values[name], origin[name] = value, file

    if BAZELVERSION in files:
        spec = parse_bazelversion(files[BAZELVERSION])
        stated("bazel", spec or None, BAZELVERSION)
    if BAZELRC in files:
        _bazelrc_facts(files[BAZELRC], stated)
    if CONFIGURE in files:
        names, consts = parse_configure(files[CONFIGURE])
        stated("configure_vars", names or None, CONFIGURE)
        stated("configure_default_ccs", consts.get("_DEFAULT_CUDA_COMPUTE_CAPABILITIES"),
               CONFIGURE)
        stated("bazel_min", consts.get("_TF_MIN_BAZEL_VERSION"), CONFIGURE)
        stated("bazel_max", consts.get("_TF_MAX_BAZEL_VERSION"), CONFIGURE)
    stated("tf_version", *tf_version_of(files))
    locks = sorted(int(m.group(1)) for m in map(LOCK_FILE.match, files) if m)
    if locks:
        stated("pythons", tuple(f"3.{minor}" for minor in locks),
               "requirements_lock_3_*.txt")
    for pin_file in PIN_FILES:
        pin = parse_toolchain_pin(files[pin_file]) if pin_file in files else None
        if pin:
            stated("toolchain_pin", pin, pin_file)
            break
    for redist_file in REDIST_FILES:
        lists = parse_redist(files[redist_file]) if redist_file in files else None
        if lists is not None:
            stated("redist_cuda", lists[0], redist_file)
            stated("redist_cudnn", lists[1], redist_file)
            values["redist_without_nccl"] = lists[2]
            break
    if PIP_BUILD in files:
        stated("wheel_style", parse_wheel_style(files[PIP_BUILD]), PIP_BUILD)
    if MODULE_BAZEL in files:
        stated("module_bazel", True, MODULE_BAZEL)
    return SourceFacts(where=where, commit=commit, origin=origin, **values)


def tf_version_of(files: Mapping[str, str]) -> tuple[str | None, str]:
    """(the tree's TensorFlow version, the file it came from), from `VERSION_FILES`."""
    found = re.search(r'^TF_VERSION\s*=\s*"([^"]+)"', files.get(TF_VERSION_BZL) or "", re.M)
    if found:
        try:
            return str(Version(found.group(1))), TF_VERSION_BZL
        except InvalidVersion:
            pass
    version = parse_tf_version(files.get(SETUP_PY), None)
    if version is not None:
        return version, SETUP_PY
    for header in VERSION_HEADERS:
        version = parse_tf_version(None, files.get(header))
        if version is not None:
            return version, header
    return None, ""


def _bazelrc_facts(text: str, stated: Callable[[str, Any, str], None]) -> None:
    configs, env, flags = parse_bazelrc_flags(text)
    stated("configs", tuple(sorted(configs)), BAZELRC)
    switches = [f for f in flags.get("", []) if f in ("--enable_bzlmod", "--noenable_bzlmod")]
    stated("bzlmod", switches[-1] == "--enable_bzlmod" if switches else None, BAZELRC)
    common = env.get("", {})
    stated("hermetic_cc_toolchain",
           common.get("USE_HERMETIC_CC_TOOLCHAIN", "0").strip().lower() in _TRUE, BAZELRC)
    stated("use_pywrap_rules",
           common.get("USE_PYWRAP_RULES", "0").strip().lower() in _TRUE, BAZELRC)
    hermetic = {name: value for name in HERMETIC_NAMES
                if (value := _first_set(env, DEFAULT_CONFIGS, name))}
    if hermetic:
        stated("hermetic", hermetic, BAZELRC)
    ccs = (_first_set(env, CC_CONFIGS, "HERMETIC_CUDA_COMPUTE_CAPABILITIES")
           or _first_set(env, CC_CONFIGS, "TF_CUDA_COMPUTE_CAPABILITIES"))
    if ccs:
        stated("compute_capabilities", _cc_tokens(ccs), BAZELRC)


def _read_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return None


def _git_head(root: Path) -> str:
    """The commit a checkout's HEAD names, read from .git without running git ("" when
    it cannot be read: no .git, a worktree link, a packed ref not found)."""
    git = root / ".git"
    head = _read_text(git / "HEAD") if git.is_dir() else None
    if head is None:
        return ""
    head = head.strip()
    if re.fullmatch(r"[0-9a-f]{40}", head):
        return head
    if not head.startswith("ref: "):
        return ""
    ref = head[len("ref: "):]
    loose = _read_text(git / ref)
    if loose and re.fullmatch(r"[0-9a-f]{40}", loose.strip()):
        return loose.strip()
    for line in (_read_text(git / "packed-refs") or "").splitlines():
        commit, _space, name = line.partition(" ")
        if name == ref and re.fullmatch(r"[0-9a-f]{40}", commit):
            return commit
    return ""


def _stamp(root: Path) -> tuple[Any, ...]:
    """What changes when the tree's facts may: each read file's size and mtime, the lock
    files there, and HEAD (so a cache never serves an edited tree's old facts)."""
    parts: list[Any] = []
    for rel in (*FIXED_FILES, ".git/HEAD"):
        try:
            st = (root / rel).stat()
            parts.append((rel, st.st_size, st.st_mtime_ns))
        except OSError:
            parts.append((rel, None))
    try:
        parts.append(tuple(sorted(n for n in os.listdir(root) if LOCK_FILE.match(n))))
    except OSError:
        parts.append(())
    return tuple(parts)


def read_source_facts(path: Path | str) -> SourceFacts:
    """The facts of the TensorFlow tree at `path` on this machine (cached while its files
    stay the same: the GUI checks a recipe on every change)."""
    root = Path(path)
    return _read_cached(str(root), _stamp(root))


@lru_cache(maxsize=16)
def _read_cached(root_text: str, _stamp_key: tuple[Any, ...]) -> SourceFacts:
    root = Path(root_text)
    files: dict[str, str] = {}
    for rel in FIXED_FILES:
        text = _read_text(root / rel)
        if text is not None:
            files[rel] = text
    try:
        names = sorted(n for n in os.listdir(root) if LOCK_FILE.match(n))
    except OSError:
        names = []
    for name in names:
        files[name] = ""  # only the name counts
    return facts_from_files(files, root_text, _git_head(root))
