"""Recipes: one TOML file that says what to build, replayable headlessly.

Loading reports **every** problem at once, each with its key path and line. Saving
keeps the user's comments (tomlkit) and is atomic, with the previous file kept as
a backup. The schema is declared once, in the section dataclasses below; validation,
the `recipe new` template and the docs reference are all derived from it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from . import safety
from .errors import RecipeError, UsageError
from .i18n import _, ngettext

RECIPE_SCHEMA = 1
#: the wheel extra that brings NVIDIA's CUDA libraries from pip: a CUDA recipe installs it
AND_CUDA = "and-cuda"
#: largest recipe we read; recipes are a few hundred bytes, anything huge is a mistake
MAX_RECIPE_BYTES = 1_000_000


def _key(
    help: str,
    *,
    choices: tuple[str, ...] = (),
    kind: str = "str",
    check: str = "",
    default: Any = None,
) -> Any:
    """A recipe key: its help text, allowed choices and value check live in metadata."""
    meta = {"help": help, "choices": choices, "kind": kind, "check": check}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TensorflowSection:
    """[tensorflow]: which TensorFlow, from where."""

    version: str = _key(
        "TensorFlow release (2.10.0 ... 2.21.0) or master; picks the knowledge used",
        check="release",
        default="",
    )
    ref: str = _key("git branch, tag or full commit hash to build instead of the release tag",
                    check="gitref", default="")
    source_dir: str = _key(
        "a TensorFlow checkout to build instead of cloning", check="path", default=""
    )
    git_url: str = _key(
        "where to clone TensorFlow from (a mirror)",
        check="url",
        default="https://github.com/tensorflow/tensorflow.git",
    )


@dataclass
class PythonSection:
    """[python]: the Python of the wheel."""

    version: str = _key("Python of the wheel, x.y; empty = newest the release supports",
                        check="pyversion", default="")


@dataclass
class BackendSection:
    """[backend]: CPU, CUDA or ROCm."""

    kind: str = _key("what the wheel runs on", choices=("cpu", "cuda", "rocm"), default="cpu")


@dataclass
class CudaSection:
    """[cuda]: CUDA, cuDNN and the GPU targets."""

    version: str = _key("hermetic CUDA, full x.y.z (x.y for releases before 2.18)",
                        check="version", default="")
    cudnn: str = _key("hermetic cuDNN version", check="version", default="")
    compute_capabilities: list[str] = _key(
        'GPU targets: "sm_xy" (cubin only), "compute_xy" (cubin and PTX), "x.y" (as '
        'compute_xy; in a list of only x.y entries, PTX for the highest only) or "auto"',
        kind="list",
        check="cc",
        default=[],
    )
    compiler: str = _key("CUDA compiler", choices=("clang", "nvcc"), default="clang")
    local_cuda_path: str = _key("use a local CUDA redistribution instead of downloading",
                                check="path", default="")
    local_cudnn_path: str = _key("use a local cuDNN redistribution", check="path", default="")
    local_nccl_path: str = _key("use a local NCCL redistribution", check="path", default="")


@dataclass
class RocmSection:
    """[rocm]: ROCm and the gfx targets."""

    version: str = _key("ROCm version of the build image", check="version", default="")
    amdgpu_targets: list[str] = _key("gfx targets, e.g. gfx90a; or auto", kind="list",
                                     check="gfx", default=[])
    path: str = _key("ROCm install path inside the build image", check="path",
                     default="/opt/rocm")


@dataclass
class ToolchainSection:
    """[toolchain]: the compiler."""

    clang: str = _key("clang major version: the hermetic LLVM the build downloads "
                      "(LLVM_VERSION) on releases with TF's hermetic C++ toolchain (2.21 on), "
                      "else the build image's /usr/lib/llvm-N", check="major", default="")
    local_clang: bool = _key("compile with the build image's compiler (its clang, or gcc with "
                             "toolchain.gcc) instead of the release's hermetic LLVM "
                             "(--config=clang_local; releases with TF's hermetic C++ "
                             "toolchain)", kind="bool", default=False)
    gcc: str = _key("gcc major version, when not building with clang", check="major",
                    default="")


@dataclass
class BuildSection:
    """[build]: image, flags, jobs."""

    opt_flags: list[str] = _key("flags for --config=opt (CC_OPT_FLAGS)", kind="list",
                                check="copt", default=["-Wno-sign-compare"])
    xla: bool = _key("build with XLA (TF_ENABLE_XLA)", kind="bool", default=True)
    jobs: int = _key("Bazel --jobs; 0 = decide from RAM and CPUs", kind="int", default=0)
    image: str = _key("build image; empty = the release's default image", check="image",
                      default="")
    bazel_flags: list[str] = _key("extra Bazel flags, appended last", kind="list",
                                  check="bazelflag", default=[])
    system_libs: list[str] = _key("TF_SYSTEM_LIBS: third-party libraries to take from the "
                                  "build image instead of building them", kind="list",
                                  check="name", default=[])
    network: str = _key("container network for the build", choices=("bridge", "none", "host"),
                        default="bridge")
    warm_idle_min: int = _key("minutes the warm build container (and its Bazel server) stays "
                              "up after a build; 0 = the default, 30", kind="int", default=30)


@dataclass
class TargetSection:
    """[target]: the machine that will run the wheel."""

    host_profile: str = _key(
        "a `tfwizard detect --json` file of the machine that will run the wheel; "
        "empty = this machine",
        check="path",
        default="",
    )


@dataclass
class InstallSection:
    """[install]: where the wheel goes after the build."""

    venv: str = _key("virtualenv to install the wheel into", check="path", default="")
    python: str = _key("interpreter to install into instead of a venv", check="path", default="")
    extras: list[str] = _key("wheel extras to install; left out, a CUDA recipe installs "
                             "and-cuda (NVIDIA's CUDA libraries from pip), any other none",
                             kind="list", check="name", default=[])
    index_url: str = _key("pip index URL (a mirror)", check="url", default="")
    trusted_host: str = _key("pip --trusted-host for the mirror", check="name", default="")


@dataclass
class CacheSection:
    """[cache]: Bazel's disk and repository caches."""

    disk_cache: bool = _key("keep Bazel's disk cache in a named volume", kind="bool",
                            default=True)
    repository_cache: bool = _key("keep Bazel's download cache in a named volume", kind="bool",
                                  default=True)
    volume_prefix: str = _key("prefix of the cache volume names", check="name",
                              default="tfwizard")
    shared: bool = _key("share the cache volumes with every user of this Docker engine (a "
                        "team's cache on purpose; false: the names carry your uid, so no "
                        "other user can read or poison them)", kind="bool", default=False)


@dataclass
class RemoteSection:
    """[remote]: remote cache and execution."""

    cache: str = _key("Bazel remote cache: grpc://, grpcs://, http:// or https:// URL", check="url",
                      default="")
    upload: bool = _key("also write to the remote cache (false = read-only)", kind="bool",
                        default=False)
    headers: list[str] = _key('headers for the cache/executor/BES, "Name=${ENV_VAR}" so the '
                              "secret stays out of the recipe", kind="list", check="header",
                              default=[])
    executor: str = _key("Bazel remote execution endpoint (grpc:// or grpcs://)", check="url",
                         default="")
    instance_name: str = _key("--remote_instance_name", check="name", default="")
    bes_backend: str = _key("Build Event Service endpoint (grpc:// or grpcs://)", check="url",
                            default="")
    bes_results_url: str = _key("URL prefix of the build results UI", check="url", default="")
    exec_properties: list[str] = _key(
        'platform properties of every remote action, "NAME=VALUE"; "auto" = '
        "container-image=docker://<build image> (pinned by its repo digest where known); "
        "[] = none", kind="list", check="property", default=["auto"])
    jobs: int = _key("Bazel --jobs with an executor: the service's capacity; 0 = 50",
                     kind="int", default=0)
    timeout: int = _key("--remote_timeout in seconds; 0 = 600 with an executor, Bazel's own "
                        "60 without", kind="int", default=0)
    retries: int = _key("--remote_retries (Bazel's default: 5)", kind="int", default=5)
    local_fallback: bool = _key("--remote_local_fallback: run an action here when its remote "
                                "execution fails", kind="bool", default=False)
    probe: bool = _key("preflight submits one no-op action to check the platform properties",
                       kind="bool", default=True)
    tls_certificate: str = _key("--tls_certificate: a CA file (PEM) that signed the service's "
                                "certificate, mounted read-only", check="path", default="")
    tls_client_certificate: str = _key("--tls_client_certificate: client certificate (PEM) for "
                                       "services that want mTLS, mounted read-only",
                                       check="path", default="")
    tls_client_key: str = _key("--tls_client_key: the client certificate's key (PEM), "
                               "mounted read-only", check="path", default="")


@dataclass
class NetworkSection:
    """[network]: proxies, mirrors, offline archives."""

    http_proxy: str = _key("HTTP_PROXY for the build container and Bazel; ${ENV_VAR} keeps "
                           "credentials out of the recipe", check="proxy", default="")
    https_proxy: str = _key("HTTPS_PROXY, likewise", check="proxy", default="")
    no_proxy: str = _key("NO_PROXY host list", check="hostlist", default="")
    distdir: str = _key("a host folder of pre-downloaded archives for --distdir (offline builds)",
                        check="path", default="")


@dataclass
class OutputSection:
    """[output]: where the wheel is copied."""

    dir: str = _key("folder the wheel is copied to; empty = the build record folder",
                    check="path", default="")


@dataclass
class WheelhouseSection:
    """[wheelhouse]: the team's package index for built wheels."""

    url: str = _key("the team's wheelhouse: a PEP 503 simple index URL (http(s)://HOST/simple/) "
                    "or a folder; `tfwizard publish` puts the wheel there, `advise` and "
                    "`install` look there first. Credentials stay out of it (TWINE_PASSWORD, "
                    "~/.pypirc or keyring); empty = TFWIZARD_WHEELHOUSE", check="wheelhouse",
                    default="")
    label: str = _key("an extra segment of the wheel's local version label (2.21.0+cu128.sm120"
                      ".LABEL), lower-case letters and digits: two builds for one target side "
                      "by side", check="label", default="")


SECTIONS: dict[str, type] = {
    "tensorflow": TensorflowSection,
    "python": PythonSection,
    "backend": BackendSection,
    "cuda": CudaSection,
    "rocm": RocmSection,
    "toolchain": ToolchainSection,
    "build": BuildSection,
    "target": TargetSection,
    "install": InstallSection,
    "cache": CacheSection,
    "remote": RemoteSection,
    "network": NetworkSection,
    "output": OutputSection,
    "wheelhouse": WheelhouseSection,
}
TOP_KEYS = ("schema", "name", "description")
#: the keys that name a file or folder on this machine. One rule for all of them, in the CLI
#: and the GUI alike (Recipe.resolve_path): "~" is the user's home, and a relative path is
#: relative to the folder of the recipe file (the current folder while a recipe has no file).
#: install.python without a "/" is a command name, looked up on PATH.
HOST_PATH_KEYS = ("tensorflow.source_dir", "cuda.local_cuda_path", "cuda.local_cudnn_path",
                  "cuda.local_nccl_path", "target.host_profile", "install.venv",
                  "install.python", "network.distdir", "output.dir", "remote.tls_certificate",
                  "remote.tls_client_certificate", "remote.tls_client_key")


@dataclass
class Recipe:
    """What to build: every section, and the file it came from."""

    name: str = "tensorflow-build"
    description: str = ""
    tensorflow: TensorflowSection = field(default_factory=TensorflowSection)
    python: PythonSection = field(default_factory=PythonSection)
    backend: BackendSection = field(default_factory=BackendSection)
    cuda: CudaSection = field(default_factory=CudaSection)
    rocm: RocmSection = field(default_factory=RocmSection)
    toolchain: ToolchainSection = field(default_factory=ToolchainSection)
    build: BuildSection = field(default_factory=BuildSection)
    target: TargetSection = field(default_factory=TargetSection)
    install: InstallSection = field(default_factory=InstallSection)
    cache: CacheSection = field(default_factory=CacheSection)
    remote: RemoteSection = field(default_factory=RemoteSection)
    network: NetworkSection = field(default_factory=NetworkSection)
    output: OutputSection = field(default_factory=OutputSection)
    wheelhouse: WheelhouseSection = field(default_factory=WheelhouseSection)
    schema: int = RECIPE_SCHEMA
    #: where it was loaded from (not saved)
    path: Path | None = field(default=None, compare=False, repr=False)
    #: the parsed document, kept so saving preserves comments (not compared)
    document: Any = field(default=None, compare=False, repr=False)

    # -- key paths -----------------------------------------------------------------
    def get(self, key_path: str) -> Any:
        """The value of a "section.key" path; UsageError for an unknown key."""
        section, _sep, key = key_path.partition(".")
        if not key:
            return getattr(self, section)
        return getattr(getattr(self, section), key)

    def implied_changes(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """`changes` and what they imply: a backend change moves [and-cuda] with it (on for
        cuda, off for cpu and rocm), unless the same changes set install.extras."""
        out = dict(changes)
        kind = out.get("backend.kind")
        if kind is not None and kind != self.backend.kind and "install.extras" not in out:
            out["install.extras"] = extras_for_backend(str(kind), self.install.extras)
        return out

    def with_changes(self, changes: Mapping[str, Any]) -> Recipe:
        """A copy with some keys changed, e.g. {"cuda.version": "12.5.1"} (a finding's fix),
        and what they imply (`implied_changes`)."""
        changes = self.implied_changes(changes)
        new = dataclasses.replace(self)
        for name in SECTIONS:
            setattr(new, name, dataclasses.replace(getattr(self, name)))
        for key_path, value in changes.items():
            section, _sep, key = key_path.partition(".")
            if not key:
                if section not in TOP_KEYS:
                    raise UsageError(_("unknown recipe key {key!r}").format(key=key_path))
                setattr(new, section, value)
                continue
            if section not in SECTIONS or key not in _field_names(SECTIONS[section]):
                raise UsageError(_("unknown recipe key {key!r}").format(key=key_path))
            setattr(getattr(new, section), key, value)
        return new

    def resolve_path(self, key_path: str, *, base: Path | None = None) -> Path | None:
        """A path key's value as a path on this machine, or None when it is empty.

        See HOST_PATH_KEYS for the rule; `base` stands in for the recipe's folder (a recipe
        replayed from a build record, say).
        """
        if key_path not in HOST_PATH_KEYS:
            raise UsageError(_("{key} is not a path key").format(key=key_path))
        value = str(self.get(key_path) or "")
        if not value:
            return None
        if key_path == "install.python" and "/" not in value and os.sep not in value:
            return Path(value)  # a command name (python3.11), found on PATH
        path = Path(value).expanduser()
        if path.is_absolute():
            return path
        if base is None:
            base = self.path.parent if self.path is not None else Path.cwd()
        return Path(base).absolute() / path

    @property
    def is_gpu(self) -> bool:
        """Whether the backend is CUDA or ROCm."""
        return self.backend.kind in ("cuda", "rocm")

    # -- TOML ------------------------------------------------------------------------
    def to_toml(self) -> str:
        """The recipe as TOML, keeping the comments of the file it was loaded from."""
        doc = self.document if self.document is not None else tomlkit.document()
        doc = tomlkit.parse(tomlkit.dumps(doc))  # never mutate the loaded document
        _set(doc, "schema", self.schema)
        _set(doc, "name", self.name)
        if self.description or "description" in doc:
            _set(doc, "description", self.description)
        for name, cls in SECTIONS.items():
            section = getattr(self, name)
            defaults = cls()
            table = doc.get(name)
            for f in dataclasses.fields(cls):
                value = getattr(section, f.name)
                present = isinstance(table, dict) and f.name in table
                if not present and value == getattr(defaults, f.name):
                    continue  # keep files short: defaults stay implicit
                if table is None:
                    table = tomlkit.table()
                    doc[name] = table
                _set(table, f.name, value)
        return tomlkit.dumps(doc)


def extras_for_backend(kind: str, extras: Sequence[str] = ()) -> list[str]:
    """`extras` with [and-cuda] following the backend `kind`: first for cuda, gone otherwise
    (the one rule for `recipe new`, `recipe set`, the wizard and a recipe without the key)."""
    rest = [e for e in extras if e != AND_CUDA]
    return [AND_CUDA, *rest] if kind == "cuda" else rest


def _set(container: Any, key: str, value: Any) -> None:
    if key in container and container[key] == value:
        return  # unchanged: keep formatting and trailing comment
    if key in container:
        old = container[key]
        trivia = getattr(old, "trivia", None)
        new = tomlkit.item(value)
        comment = getattr(trivia, "comment", "") if trivia is not None else ""
        if comment:
            new.comment(comment.lstrip("# "))
        container[key] = new
    else:
        container[key] = value


def _field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


# -- problems -------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One problem found while loading a recipe: the key and what is wrong."""

    key_path: str
    message: str
    line: int | None = None
    suggestion: str = ""

    def __str__(self) -> str:
        if self.line:
            text = _("line {line}: {key}: {message}").format(
                line=self.line, key=self.key_path, message=self.message)
        else:
            text = _("{key}: {message}").format(key=self.key_path, message=self.message)
        if self.suggestion:
            return _("{problem}; {suggestion}").format(problem=text, suggestion=self.suggestion)
        return text

    def to_dict(self) -> dict[str, Any]:
        """The problem as JSON data."""
        return {
            "key": self.key_path,
            "line": self.line,
            "message": self.message,
            "suggestion": self.suggestion,
        }


def recipe_error(where: str, problems: list[Problem]) -> RecipeError:
    """The RecipeError listing every problem of the recipe at `where`, worded here."""
    lines = [ngettext("{path}: {count} problem", "{path}: {count} problems",
                      len(problems)).format(path=where, count=len(problems))]
    lines += [f"  {p}" for p in problems]
    return RecipeError(where, problems, "\n".join(lines))


_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-\"'.]+(?:\s*\.\s*[A-Za-z0-9_\-\"']+)*)\s*=")


def key_lines(text: str) -> dict[str, int]:
    """Map "table.key" (and "table") to the 1-based line where it is defined."""
    lines: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and not _ASSIGN.match(line):
            table = ".".join(p.strip().strip("\"'") for p in header.group(1).split("."))
            lines.setdefault(table, number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            key = ".".join(p.strip().strip("\"'") for p in assign.group(1).split("."))
            full = f"{table}.{key}" if table else key
            lines.setdefault(full, number)
    return lines


class _Collector:
    def __init__(self, text: str) -> None:
        self.lines = key_lines(text)
        self.problems: list[Problem] = []

    def add(self, key_path: str, message: str, suggestion: str = "") -> None:
        line = self.lines.get(key_path)
        if line is None and "." in key_path:
            line = self.lines.get(key_path.rsplit(".", 1)[0])
        self.problems.append(Problem(key_path, message, line, suggestion))


def _did_you_mean(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if close:
        return _('did you mean "{word}"?').format(word=close[0])
    return _("known keys: {keys}").format(keys=", ".join(options))


# -- loading ----------------------------------------------------------------------------


def parse_recipe(data: bytes | str, where: str = "recipe") -> Recipe:
    """Parse and validate recipe text; raises RecipeError listing every problem."""
    if isinstance(data, bytes):
        if len(data) > MAX_RECIPE_BYTES:
            raise recipe_error(where, [Problem("(file)", _too_large(len(data)))])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise recipe_error(where, [Problem(
                "(file)", _("is not UTF-8 text (byte {offset})").format(offset=exc.start), line,
                _("save the file as UTF-8"))]) from None
    else:
        text = data
        if len(text) > MAX_RECIPE_BYTES:
            raise recipe_error(where, [Problem("(file)", _("is too large for a recipe"))])
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        doc = tomlkit.parse(text)
        plain = doc.unwrap()
    except tomlkit.exceptions.ParseError as exc:
        message = str(exc).split(" at line ")[0]
        # tomlkit's own words (English) say what is wrong; the suggestion is ours
        raise recipe_error(where, [Problem("(toml)", message, exc.line,
                                          _("fix the TOML syntax"))]) from None
    except tomlkit.exceptions.TOMLKitError as exc:  # e.g. KeyAlreadyPresent, which has no line
        message = str(exc)
        raise recipe_error(where, [Problem("(toml)", message, _duplicate_line(text),
                                          _("each key and table may appear only once"))]) \
            from None
    except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        # tomlkit raises plain errors on some pathological inputs (deep nesting, odd keys)
        raise recipe_error(where, [Problem("(toml)", _("cannot be parsed: {error}").format(
            error=type(exc).__name__))]) from None
    recipe = validate(plain, text, where)
    recipe.document = doc
    return recipe


def _duplicate_line(text: str) -> int | None:
    """The line of the first key or table defined a second time, if any."""
    seen: set[str] = set()
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and not _ASSIGN.match(line):
            table = ".".join(p.strip().strip("\"'") for p in header.group(1).split("."))
            if not line.lstrip().startswith("[["):
                if f"[{table}]" in seen:
                    return number
                seen.add(f"[{table}]")
            continue
        assign = _ASSIGN.match(line)
        if assign:
            key = ".".join(p.strip().strip("\"'") for p in assign.group(1).split("."))
            full = f"{table}.{key}" if table else key
            if full in seen:
                return number
            seen.add(full)
    return None


def load_recipe(path: str | Path) -> Recipe:
    """Load a recipe file; every problem is reported at once."""
    path = Path(path).expanduser()
    try:
        data = _read_regular(path)
    except FileNotFoundError:
        raise UsageError(_("{path}: no such recipe file").format(path=path),
                         _("Create one with `tfwizard recipe new recipe.toml`.")) from None
    except IsADirectoryError:
        raise UsageError(_("{path}: is a folder, not a recipe file").format(path=path)) from None
    except OSError as exc:
        raise UsageError(_("{path}: cannot read: {error}").format(
            path=path, error=exc.strerror)) from None
    recipe = parse_recipe(data, str(path))
    recipe.path = path
    return recipe


def _read_regular(path: Path) -> bytes:
    """A recipe file's bytes: a regular file only (a device, a FIFO or a /proc file has
    no size to check and may never end), at most MAX_RECIPE_BYTES."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(str(path))
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(_("{path}: is not a regular file (a device, a FIFO or a "
                               "socket); a recipe is a TOML file").format(path=path),
                             _("Name the recipe file itself."))
        if st.st_size > MAX_RECIPE_BYTES:
            raise recipe_error(str(path), [Problem("(file)", _too_large(st.st_size))])
        data = fh.read(MAX_RECIPE_BYTES + 1)  # a file that grew since: still bounded
    if len(data) > MAX_RECIPE_BYTES:
        raise recipe_error(str(path), [Problem("(file)", _too_large(len(data)))])
    return data


def _too_large(size: int) -> str:
    return _("is {size:,} bytes; a recipe is at most {limit:,}").format(
        size=size, limit=MAX_RECIPE_BYTES)


def validate(plain: dict[str, Any], text: str, where: str = "recipe") -> Recipe:
    """Check a parsed document against the schema; collect all problems."""
    from .knowledge import load_knowledge

    kb = load_knowledge()
    col = _Collector(text)
    recipe = Recipe()

    schema = plain.get("schema")
    if schema is None:
        col.add("schema", _("is missing"),
                _("add `schema = {schema}` at the top").format(schema=RECIPE_SCHEMA))
    elif isinstance(schema, bool) or not isinstance(schema, int):
        col.add("schema", _("must be a whole number, not {value!r}").format(value=schema),
                _("use {schema}").format(schema=RECIPE_SCHEMA))
    elif schema > RECIPE_SCHEMA:
        col.add("schema", _("{schema} is newer than this tfwizard understands ({supported})")
                .format(schema=schema, supported=RECIPE_SCHEMA), _("upgrade tfwizard"))
    elif schema < 1:
        col.add("schema", _("{schema} is not a recipe schema").format(schema=schema),
                _("use {schema}").format(schema=RECIPE_SCHEMA))
    else:
        recipe.schema = schema

    name = plain.get("name")
    if name is None:
        col.add("name", _("is missing"), _('add e.g. `name = "tf218-cuda"`'))
    elif not isinstance(name, str):
        col.add("name", _("must be a string, not {type}").format(type=type(name).__name__))
    else:
        err = safety.check_name(name)
        if err:
            col.add("name", err)
        else:
            recipe.name = name
    description = plain.get("description", "")
    if not isinstance(description, str):
        col.add("description", _("must be a string"))
    elif "\x00" in description:
        col.add("description", _("contains a NUL character"))
    else:
        recipe.description = description

    known_top = list(TOP_KEYS) + list(SECTIONS)
    for key, value in plain.items():
        if key in TOP_KEYS:
            continue
        if key not in SECTIONS:
            col.add(str(key), _("is not a recipe key"), _did_you_mean(str(key), known_top))
            continue
        if not isinstance(value, dict):
            col.add(key, _("must be a table ([{key}]), not {type}").format(
                key=key, type=type(value).__name__))
            continue
        section = getattr(recipe, key)
        cls = SECTIONS[key]
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for sub, sub_value in value.items():
            path = f"{key}.{sub}"
            if sub not in fields:
                col.add(path, _("is not a recipe key"), _did_you_mean(str(sub), list(fields)))
                continue
            checked = _check_value(path, sub_value, fields[sub].metadata, col)
            if checked is not _INVALID:
                setattr(section, sub, checked)

    install = plain.get("install")
    if not isinstance(install, dict) or "extras" not in install:
        recipe.install.extras = extras_for_backend(recipe.backend.kind)
    _cross_checks(recipe, plain, col, kb)
    if col.problems:
        col.problems.sort(key=lambda p: (p.line is None, p.line or 0))
        raise recipe_error(where, col.problems)
    return recipe


_INVALID = object()


def _check_value(path: str, value: Any, meta: Any, col: _Collector) -> Any:
    kind = meta["kind"]
    if kind == "bool":
        if not isinstance(value, bool):
            col.add(path, _("must be true or false, not {value!r}").format(value=value))
            return _INVALID
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            col.add(path, _("must be a whole number, not {value!r}").format(value=value))
            return _INVALID
        if value < 0 or value > 4096:
            col.add(path, _("{value} is out of range").format(value=value),
                    _("use 0 (automatic) or 1 to 4096"))
            return _INVALID
        return value
    if kind == "list":
        if not isinstance(value, list):
            if isinstance(value, str):
                col.add(path, _("must be a list of strings"),
                        _('write ["{value}"]').format(value=value))
            else:
                col.add(path, _("must be a list of strings, not {type}").format(
                    type=type(value).__name__))
            return _INVALID
        if len(value) > 256:
            col.add(path, _("has {count} entries; at most 256").format(count=len(value)))
            return _INVALID
        ok = True
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                col.add(path, _("entry {number} must be a string, not {value!r}").format(
                    number=i + 1, value=item))
                ok = False
                continue
            err = _check_string(meta["check"], item)
            if err:
                col.add(path, _("entry {number} {value!r}: {problem}").format(
                    number=i + 1, value=item, problem=err))
                ok = False
            out.append(item)
        return out if ok else _INVALID
    # strings
    if not isinstance(value, str):
        col.add(path, _("must be a string, not {type} {value!r}").format(
            type=type(value).__name__, value=value)[:200])
        return _INVALID
    if meta["choices"] and value not in meta["choices"]:
        col.add(path, _('"{value}" is not one of {choices}').format(
                    value=value, choices=", ".join(meta["choices"])),
                _did_you_mean(value, list(meta["choices"])))
        return _INVALID
    if value == "":
        return value
    err = _check_string(meta["check"], value)
    if err:
        col.add(path, err)
        return _INVALID
    return value


def _check_string(check: str, value: str) -> str | None:
    """Format and safety check of one string value; returns an error or None."""
    base = safety.check_text(value)
    if base:
        return base
    if check == "version":
        if not re.fullmatch(r"\d+(\.\d+){1,3}", value):
            return _('"{value}" is not a version like 12.5.1').format(value=value)
    elif check == "pyversion":
        if not re.fullmatch(r"3\.\d{1,2}", value):
            return _('"{value}" is not a Python version like 3.11').format(value=value)
    elif check == "major":
        if not re.fullmatch(r"\d{1,3}", value):
            return _('"{value}" is not a major version like 18').format(value=value)
    elif check == "cc":
        if value != "auto" and not re.fullmatch(r"(\d{1,2}\.\d[af]?|(sm|compute)_\d{2,3}[af]?)",
                                                value):
            return _('"{value}" is not a compute capability; use "8.6", "sm_86", "compute_90" '
                     'or "auto"').format(value=value)
    elif check == "gfx":
        if value != "auto" and not re.fullmatch(r"gfx[0-9a-f]{3,5}(:[a-z+\-:]+)?", value):
            return _('"{value}" is not an AMD GPU target like gfx90a').format(value=value)
    elif check in ("copt", "bazelflag"):
        return safety.check_flag(value, bazel=check == "bazelflag")
    elif check == "image":
        return safety.check_image(value)
    elif check == "path":
        return safety.check_path_text(value)
    elif check == "url":
        return safety.check_url(value)
    elif check == "gitref":
        return safety.check_git_ref(value)
    elif check == "name":
        return safety.check_name(value)
    elif check == "header":
        match = re.fullmatch(r"([A-Za-z0-9\-_]{1,100})=(\S{1,2000})", value)
        if not match:
            return _('"{value}" is not a header like "x-api-key=${{API_KEY}}"').format(value=value[:60])
        if re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", match.group(2)):
            return None
        return safety.check_flag("--x=" + value, bazel=True)
    elif check == "property":
        if value == "auto":
            return None
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}=\S{0,2000}", value):
            return _('"{value}" is not a platform property like '
                     '"container-image=docker://IMAGE" (or "auto")').format(value=value[:60])
        return safety.check_flag("--remote_default_exec_properties=" + value, bazel=True)
    elif check == "proxy":
        if value.startswith("${") and value.endswith("}"):
            return None if re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", value) else \
                _('"{value}" is not an environment reference like ${{HTTPS_PROXY}}').format(value=value)
        return safety.check_url(value)
    elif check == "wheelhouse":
        return _check_wheelhouse(value)
    elif check == "label":
        if not re.fullmatch(r"[a-z0-9]{1,32}", value):
            return _('"{value}" is not a label segment: 1 to 32 lower-case letters and '
                     'digits').format(value=value[:60])
    elif check == "hostlist":
        if not re.fullmatch(r"[A-Za-z0-9.*_\-/:,\[\]]+", value):
            return _('"{value}" is not a comma-separated host list').format(value=value[:60])
    return None


def _check_wheelhouse(value: str) -> str | None:
    """A wheelhouse: an http(s):// or file:// URL without a password, or a folder."""
    if "://" not in value:
        return safety.check_path_text(value)
    if not value.startswith(("http://", "https://", "file://")):
        return _('"{value}" is not an http(s):// or file:// URL or a folder').format(
            value=value[:80])
    err = safety.check_url(value)
    if err:
        return err
    if re.match(r"[a-z]+://[^/@]*:[^/@]*@", value):
        return _("a password in the recipe: keep it in TWINE_PASSWORD, ~/.pypirc or keyring")
    return None


def _cross_checks(recipe: Recipe, plain: dict[str, Any], col: _Collector, kb: Any) -> None:
    tf = recipe.tensorflow
    tf_table = plain.get("tensorflow") if isinstance(plain.get("tensorflow"), dict) else None
    if tf_table is None:
        col.add("tensorflow", _("is missing"), _('add [tensorflow] with version = "2.18.0"'))
    elif not (tf.version or tf.ref or tf.source_dir):
        col.add("tensorflow.version", _("is missing"),
                _("set version (a release), ref (a git ref) or source_dir (a checkout)"))
    if tf.version and kb.release(tf.version) is None:
        versions = kb.release_versions()
        close = difflib.get_close_matches(tf.version, versions, n=1, cutoff=0.5)
        known = ", ".join(versions)
        hint = (_('did you mean "{version}"? known: {known}').format(version=close[0], known=known)
                if close else _("known: {known}").format(known=known))
        col.add("tensorflow.version",
                _('"{version}" is not a release tfwizard knows').format(version=tf.version), hint)
    if tf.ref and tf.source_dir:
        col.add("tensorflow.ref", _("and tensorflow.source_dir are both set"),
                _("a checkout is built as it is; remove one of them"))

    backend_table = plain.get("backend")
    if not isinstance(backend_table, dict) or "kind" not in backend_table:
        if isinstance(plain.get("cuda"), dict) and plain["cuda"].get("version"):
            col.add("backend.kind", _("is missing but [cuda] is set"), _('add kind = "cuda"'))

    release = kb.release(tf.version) if tf.version else None
    if recipe.cuda.version and "cuda.version" not in _bad_keys(col):
        version = recipe.cuda.version
        if release is not None and release.hermetic_cuda and version:
            supported = _cuda_list(kb, release)
            if version.count(".") != 2 and not (version == "11.8" and "11.8" in supported):
                matches = [v for v in supported if v.startswith(version + ".")]
                col.add("cuda.version",
                        _('"{version}" is not a full version').format(version=version),
                        _("supported for {release}: {versions}").format(
                            release=release.version, versions=", ".join(matches or supported)))


def _bad_keys(col: _Collector) -> set[str]:
    return {p.key_path for p in col.problems}


def _cuda_list(kb: Any, release: Any) -> list[str]:
    redist = kb.redist.get(release.cuda_list or "")
    return list(redist.cuda) if redist else []


# -- saving -------------------------------------------------------------------------------


def save_recipe(recipe: Recipe, path: str | Path, *, backup: bool = True) -> Path:
    """Write the recipe atomically; the previous content is kept as NAME.toml.bak.

    A symlink is followed: the file it points to is edited (and keeps its mode); a file
    with hard links is rewritten in place, so it stays one file."""
    path = Path(path).expanduser()
    text = recipe.to_toml()
    parse_recipe(text, str(path))  # never write a recipe we could not load again
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = target.stat()
    except FileNotFoundError:
        old = None
    if backup and old is not None:
        bak = path.with_name(path.name + ".bak")
        bak.unlink(missing_ok=True)  # a .bak that is a symlink is replaced, not followed
        shutil.copy2(target, bak, follow_symlinks=True)
    if old is not None and old.st_nlink > 1:
        with target.open("r+", encoding="utf-8") as fh:
            fh.write(text)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
        recipe.path = path
        return path
    tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp"
    try:
        # 0666 less the umask for a new recipe, as any file the user writes
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if old is not None:
                os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode))
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:  # named by the recipe, not by the temporary file beside it
        with contextlib.suppress(OSError):  # a read-only folder refuses even this
            tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    recipe.path = path
    return path


def schema_reference() -> list[dict[str, Any]]:
    """Every recipe key with its type, default, choices and help (for docs and the GUI)."""
    rows: list[dict[str, Any]] = [
        {"key": "schema", "kind": "int", "default": RECIPE_SCHEMA, "choices": (),
         "help": "recipe format version"},
        {"key": "name", "kind": "str", "default": "", "choices": (),
         "help": "a short name: letters, digits, . _ -"},
        {"key": "description", "kind": "str", "default": "", "choices": (),
         "help": "free text"},
    ]
    for name, cls in SECTIONS.items():
        defaults = cls()
        for f in dataclasses.fields(cls):
            rows.append({
                "key": f"{name}.{f.name}",
                "kind": f.metadata["kind"],
                "default": getattr(defaults, f.name),
                "choices": f.metadata["choices"],
                "help": f.metadata["help"],
            })
    return rows
