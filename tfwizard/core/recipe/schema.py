"""The recipe schema: its sections and keys (each with its help text, choices and value
check), the Recipe they make up, and the rules that read it (key paths, path keys,
[and-cuda] following the backend)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from ..errors import UsageError
from ..i18n import N_, _

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
    """A recipe key: its help text, allowed choices and value check live in metadata.

    The help is English, marked with `N_()` for the catalog; where it is shown to a person
    (`commented_recipe_toml`) it goes through `translate()`, the generated reference keeps it
    English."""
    meta = {"help": help, "choices": choices, "kind": kind, "check": check}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TensorflowSection:
    """[tensorflow]: which TensorFlow, from where."""

    version: str = _key(
        N_("TensorFlow release (2.10.0 ... 2.21.0) or master; picks the knowledge used"),
        check="release",
        default="",
    )
    ref: str = _key(N_("git branch, tag or full commit hash to build instead of the release tag"),
                    check="gitref", default="")
    source_dir: str = _key(
        N_("a TensorFlow checkout to build instead of cloning"), check="path", default=""
    )
    git_url: str = _key(
        N_("where to clone TensorFlow from (a mirror)"),
        check="url",
        default="https://github.com/tensorflow/tensorflow.git",
    )


@dataclass
class PythonSection:
    """[python]: the Python of the wheel."""

    version: str = _key(N_("Python of the wheel, x.y; empty = newest the release supports"),
                        check="pyversion", default="")


@dataclass
class BackendSection:
    """[backend]: CPU, CUDA or ROCm."""

    kind: str = _key(N_("what the wheel runs on"), choices=("cpu", "cuda", "rocm"), default="cpu")


@dataclass
class CudaSection:
    """[cuda]: CUDA, cuDNN and the GPU targets."""

    version: str = _key(N_("hermetic CUDA, full x.y.z (x.y for releases before 2.18)"),
                        check="version", default="")
    cudnn: str = _key(N_("hermetic cuDNN version"), check="version", default="")
    compute_capabilities: list[str] = _key(
        N_('GPU targets: "sm_xy" (cubin only), "compute_xy" (cubin and PTX), "x.y" (as '
           'compute_xy; in a list of only x.y entries, PTX for the highest only) or "auto"'),
        kind="list",
        check="cc",
        default=[],
    )
    compiler: str = _key(N_("CUDA compiler"), choices=("clang", "nvcc"), default="clang")
    local_cuda_path: str = _key(N_("use a local CUDA redistribution instead of downloading"),
                                check="path", default="")
    local_cudnn_path: str = _key(N_("use a local cuDNN redistribution"), check="path", default="")
    local_nccl_path: str = _key(N_("use a local NCCL redistribution"), check="path", default="")


@dataclass
class RocmSection:
    """[rocm]: ROCm and the gfx targets."""

    version: str = _key(N_("ROCm version of the build image"), check="version", default="")
    amdgpu_targets: list[str] = _key(N_("gfx targets, e.g. gfx90a; or auto"), kind="list",
                                     check="gfx", default=[])
    path: str = _key(N_("ROCm install path inside the build image"), check="path",
                     default="/opt/rocm")


@dataclass
class ToolchainSection:
    """[toolchain]: the compiler."""

    clang: str = _key(N_("clang major version: the hermetic LLVM the build downloads "
                         "(LLVM_VERSION) on releases with TF's hermetic C++ toolchain (2.21 on), "
                         "else the build image's /usr/lib/llvm-N"), check="major", default="")
    local_clang: bool = _key(N_("compile with the build image's compiler (its clang, or gcc with "
                                "toolchain.gcc) instead of the release's hermetic LLVM "
                                "(--config=clang_local; releases with TF's hermetic C++ "
                                "toolchain)"), kind="bool", default=False)
    gcc: str = _key(N_("gcc major version, when not building with clang"), check="major",
                    default="")


@dataclass
class BuildSection:
    """[build]: image, flags, jobs."""

    opt_flags: list[str] = _key(N_("flags for --config=opt (CC_OPT_FLAGS)"), kind="list",
                                check="copt", default=["-Wno-sign-compare"])
    xla: bool = _key(N_("build with XLA (TF_ENABLE_XLA)"), kind="bool", default=True)
    jobs: int = _key(N_("Bazel --jobs; 0 = decide from RAM and CPUs"), kind="int", default=0)
    image: str = _key(N_("build image; empty = the release's default image"), check="image",
                      default="")
    bazel_flags: list[str] = _key(N_("extra Bazel flags, appended last"), kind="list",
                                  check="bazelflag", default=[])
    system_libs: list[str] = _key(N_("TF_SYSTEM_LIBS: third-party libraries to take from the "
                                     "build image instead of building them"), kind="list",
                                  check="name", default=[])
    network: str = _key(N_("container network for the build"), choices=("bridge", "none", "host"),
                        default="bridge")
    warm_idle_min: int = _key(N_("minutes the warm build container (and its Bazel server) stays "
                                 "up after a build; 0 = the default, 30"), kind="int", default=30)


@dataclass
class TargetSection:
    """[target]: the machine that will run the wheel."""

    host_profile: str = _key(
        N_("a `tfwizard detect --json` file of the machine that will run the wheel; "
           "empty = this machine"),
        check="path",
        default="",
    )


@dataclass
class InstallSection:
    """[install]: where the wheel goes after the build."""

    venv: str = _key(N_("virtualenv to install the wheel into"), check="path", default="")
    python: str = _key(N_("interpreter to install into instead of a venv"), check="path",
                        default="")
    extras: list[str] = _key(N_("wheel extras to install; left out, a CUDA recipe installs "
                                "and-cuda (NVIDIA's CUDA libraries from pip), any other none"),
                             kind="list", check="name", default=[])
    index_url: str = _key(N_("pip index URL (a mirror)"), check="url", default="")
    trusted_host: str = _key(N_("pip --trusted-host for the mirror"), check="name", default="")


@dataclass
class CacheSection:
    """[cache]: Bazel's disk and repository caches."""

    disk_cache: bool = _key(N_("keep Bazel's disk cache in a named volume"), kind="bool",
                            default=True)
    repository_cache: bool = _key(N_("keep Bazel's download cache in a named volume"), kind="bool",
                                  default=True)
    volume_prefix: str = _key(N_("prefix of the cache volume names"), check="name",
                              default="tfwizard")
    shared: bool = _key(N_("share the cache volumes with every user of this Docker engine (a "
                           "team's cache on purpose; false: the names carry your uid, so no "
                           "other user can read or poison them)"), kind="bool", default=False)


@dataclass
class RemoteSection:
    """[remote]: remote cache and execution."""

    cache: str = _key(N_("Bazel remote cache: grpc://, grpcs://, http:// or https:// URL"),
                      check="url", default="")
    upload: bool = _key(N_("also write to the remote cache (false = read-only)"), kind="bool",
                        default=False)
    headers: list[str] = _key(N_('headers for the cache/executor/BES, "Name=${ENV_VAR}" so the '
                                 "secret stays out of the recipe"), kind="list", check="header",
                              default=[])
    executor: str = _key(N_("Bazel remote execution endpoint (grpc:// or grpcs://)"), check="url",
                         default="")
    instance_name: str = _key(N_("--remote_instance_name"), check="name", default="")
    bes_backend: str = _key(N_("Build Event Service endpoint (grpc:// or grpcs://)"), check="url",
                            default="")
    bes_results_url: str = _key(N_("URL prefix of the build results UI"), check="url", default="")
    exec_properties: list[str] = _key(
        N_('platform properties of every remote action, "NAME=VALUE"; "auto" = '
           "container-image=docker://<build image> (pinned by its repo digest where known); "
           "[] = none"), kind="list", check="property", default=["auto"])
    jobs: int = _key(N_("Bazel --jobs with an executor: the service's capacity; 0 = 50"),
                     kind="int", default=0)
    timeout: int = _key(N_("--remote_timeout in seconds; 0 = 600 with an executor, Bazel's own "
                           "60 without"), kind="int", default=0)
    retries: int = _key(N_("--remote_retries (Bazel's default: 5)"), kind="int", default=5)
    local_fallback: bool = _key(N_("--remote_local_fallback: run an action here when its remote "
                                   "execution fails"), kind="bool", default=False)
    probe: bool = _key(N_("preflight submits one no-op action to check the platform properties"),
                       kind="bool", default=True)
    tls_certificate: str = _key(N_("--tls_certificate: a CA file (PEM) that signed the service's "
                                   "certificate, mounted read-only"), check="path", default="")
    tls_client_certificate: str = _key(N_("--tls_client_certificate: client certificate (PEM) for "
                                          "services that want mTLS, mounted read-only"),
                                       check="path", default="")
    tls_client_key: str = _key(N_("--tls_client_key: the client certificate's key (PEM), "
                                  "mounted read-only"), check="path", default="")


@dataclass
class NetworkSection:
    """[network]: proxies, mirrors, offline archives."""

    http_proxy: str = _key(N_("HTTP_PROXY for the build container and Bazel; ${ENV_VAR} keeps "
                              "credentials out of the recipe"), check="proxy", default="")
    https_proxy: str = _key(N_("HTTPS_PROXY, likewise"), check="proxy", default="")
    no_proxy: str = _key(N_("NO_PROXY host list"), check="hostlist", default="")
    distdir: str = _key(N_("a host folder of pre-downloaded archives for --distdir "
                           "(offline builds)"), check="path", default="")


@dataclass
class OutputSection:
    """[output]: where the wheel is copied."""

    dir: str = _key(N_("folder the wheel is copied to; empty = the build record folder"),
                    check="path", default="")


@dataclass
class WheelhouseSection:
    """[wheelhouse]: the team's package index for built wheels."""

    url: str = _key(N_("the team's wheelhouse: a PEP 503 simple index URL (http(s)://HOST/simple/) "
                       "or a folder; `tfwizard publish` puts the wheel there, `advise` and "
                       "`install` look there first. Credentials stay out of it (TWINE_PASSWORD, "
                       "~/.pypirc or keyring); empty = TFWIZARD_WHEELHOUSE"), check="wheelhouse",
                    default="")
    label: str = _key(N_("an extra segment of the wheel's local version label (2.21.0+cu128.sm120"
                         ".LABEL), lower-case letters and digits: two builds for one target side "
                         "by side"), check="label", default="")


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
