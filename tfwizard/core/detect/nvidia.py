"""NVIDIA GPUs: NVML first (``pynvml`` from nvidia-ml-py, imported lazily), nvidia-smi second.

Every NVML call is defensive: a field the GPU does not support becomes ``None``, a GPU that
fails becomes an ``NvidiaGpu`` with ``error`` set, and a missing or broken driver becomes a
status with a sentence saying what to do. Nothing here raises.
"""

from __future__ import annotations

import csv
import re
from typing import Any

from ..host import NvidiaGpu, NvidiaInfo
from ..i18n import _
from .process import RC_NOT_FOUND, Runner, safe_run

#: NVML return codes (nvml.h); used when an injected module does not define the constant
_NOT_SUPPORTED = 3
_DRIVER_NOT_LOADED = 9
_LIBRARY_NOT_FOUND = 12
_GPU_IS_LOST = 15
_RESET_REQUIRED = 16
_LIB_RM_VERSION_MISMATCH = 18

#: nvmlDeviceGetArchitecture enum values (nvml.h) -> names people use
_ARCHITECTURES = {
    2: "Kepler",
    3: "Maxwell",
    4: "Pascal",
    5: "Volta",
    6: "Turing",
    7: "Ampere",
    8: "Ada Lovelace",
    9: "Hopper",
    10: "Blackwell",
}
_MIG_ENABLE = 1

SMI_TIMEOUT = 10.0
SMI_FIELDS = (
    "index",
    "name",
    "uuid",
    "compute_cap",
    "memory.total",
    "pci.bus_id",
    "driver_version",
)
_SMI_NO_CC = 'Field "compute_cap" is not a valid field to query'
_SMI_MISMATCH = "Driver/library version mismatch"
_SMI_NO_DRIVER = "couldn't communicate with the NVIDIA driver"
_SMI_NO_DEVICES = "No devices were found"
#: nvidia-smi without the driver's user-space library (captured on a real machine:
#: tests/data/nvidia-smi/r580-no-libnvidia-ml-real)
_SMI_NO_LIBRARY = "couldn't find libnvidia-ml.so"
_SMI_MISSING = ("", "N/A", "[N/A]", "[Not Supported]", "[Unknown Error]")



# the messages are made when a probe runs, in the language of that moment
def msg_no_library() -> str:
    """The NvidiaInfo message when libnvidia-ml is not installed."""
    return _("no NVIDIA GPU detected (the NVIDIA driver library libnvidia-ml.so.1 is not "
             "installed)")


def msg_no_driver() -> str:
    """The NvidiaInfo message when the library is there but the kernel driver is not."""
    return _(
        "no NVIDIA GPU usable: the NVIDIA driver library is installed but the kernel driver is "
        "not loaded. If this machine has an NVIDIA GPU, reboot after installing the driver; if "
        "Secure Boot is on, the unsigned nvidia module may be blocked (check `sudo modprobe "
        "nvidia`)."
    )


def msg_mismatch() -> str:
    """The NvidiaInfo message when kernel module and library versions differ."""
    return _(
        "NVIDIA driver/library version mismatch: the loaded kernel module and the user-space "
        "library (libnvidia-ml) come from different driver builds, usually after a driver "
        "upgrade without a reboot. Reboot, or reinstall one driver version so both match."
    )


class _GpuFailed(Exception):
    """A GPU-level NVML failure (GPU lost, reset required): the GPU is unusable."""


def probe_nvidia(*, nvml: Any = None, run: Runner) -> NvidiaInfo:
    """Describe the NVIDIA driver and GPUs; never raises."""
    try:
        return _probe(nvml, run)
    except Exception as exc:  # an NVML module or runner broken in a way not foreseen
        return NvidiaInfo(status="error",
                          message=_("checking for NVIDIA GPUs failed: {error}").format(error=exc))


def _probe(nvml: Any, run: Runner) -> NvidiaInfo:
    if nvml is None:
        try:
            import pynvml  # lazy: keeps `import tfwizard` fast
        except Exception as exc:  # ImportError or a broken install
            fallback = NvidiaInfo(
                status="error",
                message=_(
                    "could not check for NVIDIA GPUs: the NVML bindings (nvidia-ml-py) do not "
                    "import ({error}) and nvidia-smi is not on PATH. Reinstall tfwizard."
                ).format(error=exc),
            )
            return probe_nvidia_smi(run, fallback)
        nvml = pynvml
    api = _SafeNvml(nvml)
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return _init_failed(api, exc, run)
    try:
        return _read_nvml(api)
    except Exception as exc:  # a bug-shaped failure in an unexpected place
        return NvidiaInfo(status="error", source="nvml",
                          message=_("NVML failed: {error}").format(error=exc))
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # shutting down a half-broken NVML must not hide the result
            pass


def _init_failed(api: _SafeNvml, exc: Exception, run: Runner) -> NvidiaInfo:
    code = api.error_code(exc)
    if code == api.code("NVML_ERROR_DRIVER_NOT_LOADED", _DRIVER_NOT_LOADED):
        return NvidiaInfo(status="no_driver", source="nvml", message=msg_no_driver())
    if code == api.code("NVML_ERROR_LIB_RM_VERSION_MISMATCH", _LIB_RM_VERSION_MISMATCH):
        return NvidiaInfo(status="mismatch", source="nvml", message=msg_mismatch())
    if code == api.code("NVML_ERROR_LIBRARY_NOT_FOUND", _LIBRARY_NOT_FOUND):
        return probe_nvidia_smi(run, NvidiaInfo(status="no_library", message=msg_no_library()))
    fallback = NvidiaInfo(
        status="error",
        source="nvml",
        message=_("NVML could not start ({error}) and nvidia-smi is absent.").format(
            error=exc or type(exc).__name__),
    )
    return probe_nvidia_smi(run, fallback)


class _SafeNvml:
    """An NVML module wrapper whose calls return None instead of raising (gpustat's idea)."""

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        error_class = getattr(nvml, "NVMLError", None)
        self.error_class: type | None = error_class if isinstance(error_class, type) else None
        self.gpu_fatal = {
            self.code("NVML_ERROR_GPU_IS_LOST", _GPU_IS_LOST),
            self.code("NVML_ERROR_RESET_REQUIRED", _RESET_REQUIRED),
        }

    def code(self, name: str, default: int) -> int:
        value = getattr(self.nvml, name, default)
        return value if isinstance(value, int) else default

    def error_code(self, exc: BaseException) -> int | None:
        if self.error_class is None or not isinstance(exc, self.error_class):
            return None
        value = getattr(exc, "value", None)
        return value if isinstance(value, int) else None

    def get(self, function: str, *args: Any) -> Any:
        """``nvml.function(*args)``, or None when unsupported, missing or failing.

        A GPU-level failure (lost, needs reset) raises ``_GpuFailed`` so the caller marks
        the whole GPU invalid instead of reporting a GPU with blank fields.
        """
        fn = getattr(self.nvml, function, None)
        if fn is None:  # bindings older than the function
            return None
        try:
            return fn(*args)
        except Exception as exc:  # NotSupported, FunctionNotFound, NVMLLibraryMismatchError
            if self.error_code(exc) in self.gpu_fatal:
                raise _GpuFailed(str(exc) or type(exc).__name__) from exc
            return None


def _read_nvml(api: _SafeNvml) -> NvidiaInfo:
    info = NvidiaInfo(source="nvml")
    try:
        info.driver_version = _text(api.get("nvmlSystemGetDriverVersion"))
        cuda = api.get("nvmlSystemGetCudaDriverVersion_v2")
        if not isinstance(cuda, int) or cuda <= 0:
            # _v2 reads the loaded libcuda and fails without one; the plain call does not
            cuda = api.get("nvmlSystemGetCudaDriverVersion")
        info.cuda_driver_version = decode_cuda_version(cuda)
    except _GpuFailed:  # not a per-GPU call, but a lost GPU can poison system calls too
        pass
    try:
        count = int(api.nvml.nvmlDeviceGetCount())
    except Exception as exc:
        info.status = "error"
        info.message = _("NVML started but could not count the GPUs: {error}").format(error=exc)
        return info
    info.gpus = [_read_gpu(api, index) for index in range(count)]
    return _summarise(info)


def _read_gpu(api: _SafeNvml, index: int) -> NvidiaGpu:
    gpu = NvidiaGpu(index=index)
    try:
        handle = api.nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:
        gpu.error = str(exc) or type(exc).__name__
        return gpu
    try:
        gpu.name = _text(api.get("nvmlDeviceGetName", handle))
        gpu.uuid = _text(api.get("nvmlDeviceGetUUID", handle))
        cc = api.get("nvmlDeviceGetCudaComputeCapability", handle)
        if isinstance(cc, (tuple, list)) and len(cc) == 2:
            gpu.compute_capability = f"{int(cc[0])}.{int(cc[1])}"
        memory = api.get("nvmlDeviceGetMemoryInfo", handle)
        total = getattr(memory, "total", None)
        if isinstance(total, int):
            gpu.memory_total_mib = total // (1024 * 1024)
        pci = api.get("nvmlDeviceGetPciInfo", handle)
        gpu.pci_bus_id = _text(getattr(pci, "busId", None))
        arch = api.get("nvmlDeviceGetArchitecture", handle)
        gpu.architecture = _ARCHITECTURES.get(arch) if isinstance(arch, int) else None
        mig = api.get("nvmlDeviceGetMigMode", handle)
        if isinstance(mig, (tuple, list)) and mig:
            gpu.mig_enabled = mig[0] == api.code("NVML_DEVICE_MIG_ENABLE", _MIG_ENABLE)
    except _GpuFailed as exc:
        gpu.error = str(exc)
        return gpu
    if gpu.compute_capability is None and gpu.name:
        gpu.compute_capability = cc_from_name(gpu.name)
        gpu.cc_derived = gpu.compute_capability is not None
    return gpu


def probe_nvidia_smi(run: Runner, fallback: NvidiaInfo) -> NvidiaInfo:
    """Ask nvidia-smi; return ``fallback`` when it is not installed."""
    rc, out, err = safe_run(run, _smi_query(SMI_FIELDS), SMI_TIMEOUT)
    if rc == RC_NOT_FOUND:
        return fallback
    text = f"{out}\n{err}"
    fields: tuple[str, ...] = SMI_FIELDS
    if _SMI_NO_CC in text:
        # R470 drivers predate the compute_cap field and reject the whole query
        fields = tuple(f for f in SMI_FIELDS if f != "compute_cap")
        rc, out, err = safe_run(run, _smi_query(fields), SMI_TIMEOUT)
        text = f"{out}\n{err}"
    info = NvidiaInfo(source="nvidia-smi")
    if _SMI_MISMATCH in text:
        info.status, info.message = "mismatch", msg_mismatch()
        return info
    if _SMI_NO_DRIVER in text:
        info.status, info.message = "no_driver", msg_no_driver()
        return info
    if _SMI_NO_LIBRARY in text:
        info.status = "no_library"
        info.message = _(
            "no NVIDIA GPU usable: nvidia-smi is installed, but the NVIDIA driver library "
            "libnvidia-ml.so.1 is not on the loader path (a partly installed or removed "
            "driver, or a container started without the NVIDIA runtime's libraries: run it "
            "with --gpus all).")
        return info
    if _SMI_NO_DEVICES in text:
        info.status = "none"
        info.message = _("no NVIDIA GPU detected: nvidia-smi found no devices.")
        return info
    if rc != 0:
        first = next((line for line in text.splitlines() if line.strip()), _("no output"))
        info.status = "error"
        info.message = _("nvidia-smi failed (exit {code}): {output}").format(
            code=rc, output=first.strip())
        return info
    info.gpus, info.driver_version = _parse_smi_query(out, fields)
    _rc, banner, _err = safe_run(run, ["nvidia-smi"], SMI_TIMEOUT)
    match = re.search(r"CUDA Version:\s*([0-9]+\.[0-9]+)", banner)
    info.cuda_driver_version = match.group(1) if match else None
    if info.driver_version is None:
        match = re.search(r"Driver Version:\s*([0-9][0-9.]*)", banner)
        info.driver_version = match.group(1) if match else None
    return _summarise(info)


def _smi_query(fields: tuple[str, ...]) -> list[str]:
    return ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]


def _split_csv(line: str) -> list[str]:
    rows = list(csv.reader([line], skipinitialspace=True))
    return [cell.strip() for cell in rows[0]] if rows else []


def _smi_value(cell: str) -> str | None:
    return None if cell.strip() in _SMI_MISSING else cell.strip()


def _parse_smi_query(out: str, fields: tuple[str, ...]) -> tuple[list[NvidiaGpu], str | None]:
    """GPUs and the driver version from the CSV nvidia-smi prints."""
    gpus: list[NvidiaGpu] = []
    driver: str | None = None
    for line in out.splitlines():
        if not line.strip():
            continue
        row = _split_csv(line)
        if len(row) != len(fields):
            # e.g. "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost."
            gpus.append(NvidiaGpu(index=len(gpus), error=line.strip()))
            continue
        value = dict(zip(fields, (_smi_value(cell) for cell in row), strict=True))
        driver = driver or value.get("driver_version")
        gpu = NvidiaGpu(index=_int(value.get("index"), len(gpus)))
        gpu.name = value.get("name")
        gpu.uuid = value.get("uuid")
        gpu.compute_capability = value.get("compute_cap")
        gpu.memory_total_mib = _int(value.get("memory.total"), None)
        gpu.pci_bus_id = value.get("pci.bus_id")
        if gpu.compute_capability is None and gpu.name:
            gpu.compute_capability = cc_from_name(gpu.name)
            gpu.cc_derived = gpu.compute_capability is not None
        if gpu.compute_capability:  # nvidia-smi has no architecture field
            gpu.architecture = arch_from_cc(gpu.compute_capability)
        gpus.append(gpu)
    return gpus, driver


def _summarise(info: NvidiaInfo) -> NvidiaInfo:
    """Set status and message from what was read."""
    usable = [g for g in info.gpus if g.error is None]
    broken = [g for g in info.gpus if g.error is not None]
    version = info.driver_version or _("(version unknown)")
    if info.cuda_driver_version:
        driver = _("driver {version} supports CUDA up to {cuda}").format(
            version=version, cuda=info.cuda_driver_version)
    else:
        driver = _("driver {version}").format(version=version)
    if not info.gpus:
        info.status = "none"
        info.message = _("no NVIDIA GPU detected: the NVIDIA {driver} but reports no GPU.").format(
            driver=driver)
        return info
    parts = []
    if usable:
        info.status = "ok"
        names = ", ".join(_gpu_label(g) for g in usable)
        if len(usable) > 1:
            parts.append(_("{count} NVIDIA GPUs: {names}; {driver}.").format(
                count=len(usable), names=names, driver=driver))
        else:
            parts.append(_("1 NVIDIA GPU: {names}; {driver}.").format(names=names, driver=driver))
    else:
        info.status = "error"
        parts.append(_("NVIDIA {driver}, but no GPU is usable.").format(driver=driver))
    parts += [unusable_gpu(gpu.index, gpu.error or "") for gpu in broken]
    info.message = " ".join(parts)
    return info


def _gpu_label(gpu: NvidiaGpu) -> str:
    name = gpu.name or _("unknown GPU")
    cc = gpu.compute_capability or _("unknown")
    if gpu.cc_derived:
        return _("{name} (CC {cc}, from the name table)").format(name=name, cc=cc)
    return _("{name} (CC {cc})").format(name=name, cc=cc)


def unusable_gpu(index: int, error: str) -> str:
    """The advice for a GPU that fails (lost, needs a reset)."""
    return _("GPU {index} is unusable ({error}): reset it (`sudo nvidia-smi -r -i {index}`) "
             "or reboot.").format(index=index, error=error)


def decode_cuda_version(value: Any) -> str | None:
    """NVML's integer CUDA version (12040) as "12.4"."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def cc_from_name(name: str) -> str | None:
    """The compute capability for a GPU name from the knowledge base, or None."""
    try:
        from ..knowledge import load_knowledge  # lazy: loading the TOML data costs time

        cc = load_knowledge().cc_for_gpu_name(name)
    except Exception:  # a broken knowledge base must not break detection: CC stays unknown
        return None
    return cc if isinstance(cc, str) and cc else None


def arch_from_cc(cc: str) -> str | None:
    """The architecture name ("Ampere") for a compute capability from the knowledge base."""
    try:
        from ..knowledge import load_knowledge

        arch = load_knowledge().gpu_arch_name(cc)
    except Exception:  # as in cc_from_name
        return None
    return arch if isinstance(arch, str) and arch else None


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        value = value.strip("\x00").strip()
        return value or None
    return None


def _int(value: str | None, default: int | None) -> Any:
    try:
        return int(float(value)) if value is not None else default
    except ValueError:
        return default
