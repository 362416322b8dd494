"""HostProfile: what a machine is, as far as building and running TensorFlow cares.

A profile is plain data, serialisable to JSON and back, so a profile saved on the
machine that will *run* the wheel can be used as the target on a GPU-less build server.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .errors import UsageError
from .i18n import _

#: bump when a field changes meaning; from_dict migrates older profiles
HOST_SCHEMA = 1


@dataclass
class NvidiaGpu:
    """One NVIDIA GPU as NVML or nvidia-smi reports it."""

    index: int
    name: str | None = None
    uuid: str | None = None
    #: "8.6"; None when it could not be read nor derived
    compute_capability: str | None = None
    #: True when the CC came from the GPU-name table, not from the driver
    cc_derived: bool = False
    memory_total_mib: int | None = None
    pci_bus_id: str | None = None
    architecture: str | None = None
    mig_enabled: bool | None = None
    #: set for a GPU that errors (e.g. "GPU is lost"): an explicit invalid entry
    error: str | None = None


@dataclass
class NvidiaInfo:
    """The NVIDIA side of a host: driver, CUDA driver version, GPUs, and why not when none."""

    #: ok | none | no_library | no_driver | mismatch | error
    status: str = "none"
    #: nvml | nvidia-smi | profile | none
    source: str = "none"
    driver_version: str | None = None
    #: the newest CUDA the driver supports, "12.4"
    cuda_driver_version: str | None = None
    gpus: list[NvidiaGpu] = field(default_factory=list)
    #: a sentence a person reads: what was found or what is missing and what to do
    message: str = ""


@dataclass
class AmdGpu:
    """One AMD GPU (a kfd topology node) and its gfx target."""

    node: int
    gfx_target: str  # "gfx90a"
    gfx_target_version: int | None = None  # 90010
    name: str | None = None
    device_id: int | None = None


@dataclass
class AmdInfo:
    """The AMD side of a host: ROCm version and GPUs."""

    status: str = "none"  # ok | none | error
    source: str = "none"  # sysfs | rocminfo | amd-smi | profile | none
    gpus: list[AmdGpu] = field(default_factory=list)
    rocm_version: str | None = None
    hsa_override_gfx_version: str | None = None
    message: str = ""


@dataclass
class CpuInfo:
    """The CPU: architecture, model, cores, instruction set flags."""

    arch: str = "x86_64"  # x86_64 | aarch64 | ...
    model: str | None = None
    cores: int = 1
    #: lower-case feature names that matter for -march: avx, avx2, avx512f, fma, sve, ...
    features: list[str] = field(default_factory=list)


@dataclass
class OsInfo:
    """The operating system: kernel, distribution, glibc, WSL."""

    system: str = "linux"  # linux | windows | darwin
    distro: str | None = None
    distro_version: str | None = None
    kernel: str | None = None
    glibc: str | None = None  # "2.36"
    wsl2: bool = False
    wsl_libcuda_path: str | None = None


@dataclass
class DockerInfo:
    """The Docker engine: whether it answers, its version and runtimes."""

    #: ok | not_installed | not_running | permission_denied | error
    status: str = "not_running"
    host: str | None = None  # DOCKER_HOST or the socket used
    server_version: str | None = None
    api_version: str | None = None
    runtimes: list[str] = field(default_factory=list)
    nvidia_runtime: bool = False
    cdi_spec_dirs: list[str] = field(default_factory=list)
    rootless: bool = False
    #: `docker info`'s DockerRootDir: where the engine keeps images, containers, volumes
    root_dir: str | None = None
    #: `docker info`'s NCPU and MemTotal: the engine's machine, which builds run on
    engine_cpus: int | None = None
    engine_ram_bytes: int | None = None
    message: str = ""

    @property
    def remote(self) -> bool:
        """Whether the engine answers from another machine (tcp://, ssh://): builds then
        run on its CPUs, RAM and disk, not this machine's."""
        return self.status == "ok" and bool(self.host) and not engine_is_local(self.host or "")


def engine_is_local(address: str) -> bool:
    """Whether a Docker engine address is on this machine, sharing its files: a unix socket
    or a Windows named pipe, as DOCKER_HOST names it (unix://, npipe://, a path) or as the
    docker SDK's client does (its base_url). tcp:// and ssh:// are another machine."""
    return address.startswith(("unix://", "npipe://", "/", "http+docker://localhost",
                               "http+docker://localunixsocket", "http+docker://localnpipe"))


@dataclass
class ResourcesInfo:
    """RAM, CPUs and free disk where builds go."""

    ram_total_bytes: int | None = None
    ram_available_bytes: int | None = None
    cpu_count: int | None = None
    disk_path: str | None = None
    disk_free_bytes: int | None = None


@dataclass
class PythonInterpreter:
    """A Python interpreter found on the host and its tags."""

    path: str
    version: str | None = None  # "3.11.7"
    is_venv: bool = False
    is_current: bool = False


@dataclass
class HostProfile:
    """Everything tfwizard knows of one machine; saved and read as JSON (`detect --json`)."""

    schema: int = HOST_SCHEMA
    created: str | None = None
    tfwizard_version: str | None = None
    nvidia: NvidiaInfo = field(default_factory=NvidiaInfo)
    amd: AmdInfo = field(default_factory=AmdInfo)
    cpu: CpuInfo = field(default_factory=CpuInfo)
    os: OsInfo = field(default_factory=OsInfo)
    docker: DockerInfo = field(default_factory=DockerInfo)
    resources: ResourcesInfo = field(default_factory=ResourcesInfo)
    pythons: list[PythonInterpreter] = field(default_factory=list)

    # -- convenience -------------------------------------------------------------
    def nvidia_ccs(self) -> list[str]:
        """Compute capabilities of the usable NVIDIA GPUs, unique, in index order."""
        seen: list[str] = []
        for gpu in self.nvidia.gpus:
            cc = gpu.compute_capability
            if gpu.error is None and cc and cc not in seen:
                seen.append(cc)
        return seen

    def amd_targets(self) -> list[str]:
        """The gfx targets of the AMD GPUs, each once."""
        seen: list[str] = []
        for gpu in self.amd.gpus:
            if gpu.gfx_target not in seen:
                seen.append(gpu.gfx_target)
        return seen

    # -- serialisation -----------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The profile as JSON data."""
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        """The profile as JSON text."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    @classmethod
    def from_dict(cls, data: Any, where: str = "profile") -> HostProfile:
        """A profile from JSON data; UsageError naming `where` when it is not one."""
        if not isinstance(data, dict):
            raise UsageError(_("{where}: a host profile must be a JSON object").format(where=where))
        schema = data.get("schema", HOST_SCHEMA)
        if not isinstance(schema, int) or schema > HOST_SCHEMA:
            raise UsageError(
                _("{where}: host profile schema {schema!r} is newer than this tfwizard "
                  "understands ({supported})").format(where=where, schema=schema,
                                                      supported=HOST_SCHEMA),
                _("Upgrade tfwizard, or re-create the profile with `tfwizard detect --json`."),
            )
        return _build(cls, data, where)

    @classmethod
    def from_json(cls, text: str, where: str = "profile") -> HostProfile:
        """A profile from JSON text; UsageError naming `where` when it is not one."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(
                _("{where}: not valid JSON (line {line}, column {column}: {error})").format(
                    where=where, line=exc.lineno, column=exc.colno, error=exc.msg),
                _("Create a profile with `tfwizard detect --json > target.json`."),
            ) from None
        return cls.from_dict(data, where)

    @classmethod
    def load(cls, path: str | Path) -> HostProfile:
        """A profile from a JSON file; UsageError when it cannot be read."""
        path = Path(path).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(
                _("{path}: no such host profile").format(path=path),
                _("Create one on the target machine with `tfwizard detect --json > target.json`."),
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(_("{path}: cannot read host profile: {error}").format(
                path=path, error=exc)) from None
        return cls.from_json(text, str(path))


T = TypeVar("T")

_NESTED: dict[tuple[type, str], type] = {}


@functools.cache  # a class's annotations do not change: resolve them once per process
def _field_types(cls: type) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls)


def _build(cls: type[T], data: dict[str, Any], where: str) -> T:
    """Build a dataclass from a dict, ignoring unknown keys and checking simple types."""
    import types
    import typing

    hints = _field_types(cls)  # type: ignore[arg-type]  # a class is hashable
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            continue
        value = data[f.name]
        hint = hints[f.name]
        path = f"{where}.{f.name}"
        kwargs[f.name] = _convert(hint, value, path, typing, types)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise UsageError(_("{where}: an entry is incomplete ({error})").format(
            where=where, error=exc)) from None


def _convert(hint: Any, value: Any, path: str, typing: Any, types: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, path, typing, types)
    if origin is list:
        if not isinstance(value, list):
            raise UsageError(_("{path}: expected a list, got {type}").format(
                path=path, type=type(value).__name__))
        return [_convert(args[0], v, f"{path}[{i}]", typing, types) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise UsageError(_("{path}: expected an object, got {type}").format(
                path=path, type=type(value).__name__))
        return _build(hint, value, path)  # type: ignore[arg-type]
    if hint is bool:
        if not isinstance(value, bool):
            raise UsageError(_("{path}: expected true/false, got {value!r}").format(
                path=path, value=value))
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(_("{path}: expected a whole number, got {value!r}").format(
                path=path, value=value))
        return value
    if hint is str:
        if not isinstance(value, str):
            raise UsageError(_("{path}: expected a string, got {value!r}").format(
                path=path, value=value))
        return value
    return value


def auto_host(build_host: HostProfile | None,
              target_host: HostProfile | None) -> HostProfile | None:
    """The machine "auto" GPU targets come from: the target profile, else the build host.

    The one rule for "auto" (check, plan, build, the GUI): a recipe without
    target.host_profile builds for the machine it is built on.
    """
    return target_host if target_host is not None else build_host
