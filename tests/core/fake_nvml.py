"""Fake NVIDIA driver pieces for detection tests, by named scenario.

``FakeNvml`` quacks like the ``pynvml`` module for the calls detection makes and raises the
*real* ``pynvml.NVMLError`` subclasses, so the code under test sees what a driver would
give it. ``write_fake_nvidia_smi`` puts an executable ``nvidia-smi`` in a folder that
prints captured output from ``tests/data/nvidia-smi/<scenario>/``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pynvml

DATA = Path(__file__).resolve().parent.parent / "data"
NVIDIA_SMI_DATA = DATA / "nvidia-smi"

MIB = 1024 * 1024


def nvml_error(code: int) -> pynvml.NVMLError:
    """A real NVML exception; ``NVMLError(code)`` maps to the subclass for that code."""
    return pynvml.NVMLError(code)


@dataclass
class FakeGpu:
    name: str
    cc: tuple[int, int] = (8, 6)
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    memory_total_mib: int = 8192
    pci_bus_id: str = "00000000:01:00.0"
    architecture: int = pynvml.NVML_DEVICE_ARCH_AMPERE
    #: (current, pending) as nvmlDeviceGetMigMode returns it; None: NotSupported
    mig: tuple[int, int] | None = None
    #: NVML function name -> error code it raises for this GPU
    errors: dict[str, int] = field(default_factory=dict)
    #: error code nvmlDeviceGetHandleByIndex raises for this GPU
    handle_error: int | None = None


class _Memory:
    def __init__(self, total: int) -> None:
        self.total = total
        self.free = total
        self.used = 0


class _Pci:
    def __init__(self, bus_id: str) -> None:
        self.busId = bus_id.encode()  # bytes, as the ctypes struct holds it


class FakeNvml:
    """A pynvml stand-in. Constants and exception classes come from the real module."""

    def __init__(
        self,
        *,
        gpus: list[FakeGpu] | None = None,
        driver: str = "550.54.14",
        cuda: int = 12040,
        init_error: int | None = None,
        count_error: int | None = None,
        missing: tuple[str, ...] = (),
    ) -> None:
        self.gpus = gpus or []
        self.driver = driver
        self.cuda = cuda
        self.init_error = init_error
        self.count_error = count_error
        #: functions the "driver" lacks: they raise FunctionNotFound, like an old libnvidia-ml
        self.missing = set(missing)
        self.initialised = False
        self.shutdowns = 0
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith(("NVML_", "NVMLError")):
            return getattr(pynvml, name)
        raise AttributeError(name)

    # -- helpers -------------------------------------------------------------------
    def _enter(self, name: str) -> None:
        self.calls.append(name)
        if name in self.missing:
            raise nvml_error(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        if not self.initialised and name != "nvmlInit":
            raise nvml_error(pynvml.NVML_ERROR_UNINITIALIZED)

    def _gpu(self, name: str, handle: FakeGpu) -> FakeGpu:
        self._enter(name)
        if name in handle.errors:
            raise nvml_error(handle.errors[name])
        return handle

    # -- the pynvml API used by detection -----------------------------------------
    def nvmlInit(self) -> None:
        self._enter("nvmlInit")
        if self.init_error is not None:
            raise nvml_error(self.init_error)
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self._enter("nvmlShutdown")
        self.initialised = False
        self.shutdowns += 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._enter("nvmlSystemGetDriverVersion")
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion")
        return self.cuda

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        self._enter("nvmlSystemGetCudaDriverVersion_v2")
        return self.cuda

    def nvmlDeviceGetCount(self) -> int:
        self._enter("nvmlDeviceGetCount")
        if self.count_error is not None:
            raise nvml_error(self.count_error)
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        self._enter("nvmlDeviceGetHandleByIndex")
        if index >= len(self.gpus):
            raise nvml_error(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        gpu = self.gpus[index]
        if gpu.handle_error is not None:
            raise nvml_error(gpu.handle_error)
        return gpu

    def nvmlDeviceGetName(self, handle: FakeGpu) -> str:
        return self._gpu("nvmlDeviceGetName", handle).name

    def nvmlDeviceGetUUID(self, handle: FakeGpu) -> str:
        return self._gpu("nvmlDeviceGetUUID", handle).uuid

    def nvmlDeviceGetCudaComputeCapability(self, handle: FakeGpu) -> tuple[int, int]:
        return self._gpu("nvmlDeviceGetCudaComputeCapability", handle).cc

    def nvmlDeviceGetMemoryInfo(self, handle: FakeGpu) -> _Memory:
        return _Memory(self._gpu("nvmlDeviceGetMemoryInfo", handle).memory_total_mib * MIB)

    def nvmlDeviceGetPciInfo(self, handle: FakeGpu) -> _Pci:
        return _Pci(self._gpu("nvmlDeviceGetPciInfo", handle).pci_bus_id)

    def nvmlDeviceGetArchitecture(self, handle: FakeGpu) -> int:
        return self._gpu("nvmlDeviceGetArchitecture", handle).architecture

    def nvmlDeviceGetMigMode(self, handle: FakeGpu) -> list[int]:
        gpu = self._gpu("nvmlDeviceGetMigMode", handle)
        if gpu.mig is None:
            raise nvml_error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return list(gpu.mig)


# -- named scenarios -------------------------------------------------------------------

_LOST = pynvml.NVML_ERROR_GPU_IS_LOST
_NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED


def _rtx3060() -> FakeGpu:
    return FakeGpu(
        name="NVIDIA GeForce RTX 3060 Laptop GPU",
        cc=(8, 6),
        uuid="GPU-5f1c2d7e-8a4b-4c6e-9d3f-1a2b3c4d5e6f",
        memory_total_mib=6144,
        pci_bus_id="00000000:01:00.0",
    )


def _scenarios() -> dict[str, Any]:
    return {
        # libnvidia-ml.so.1 absent: a machine without the NVIDIA driver
        "no_library": lambda: FakeNvml(init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND),
        # user-space driver installed, kernel module not loaded (e.g. Secure Boot)
        "driver_not_loaded": lambda: FakeNvml(init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED),
        # driver upgraded without a reboot
        "version_mismatch": lambda: FakeNvml(init_error=pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH),
        "no_gpus": lambda: FakeNvml(gpus=[]),
        "one_gpu": lambda: FakeNvml(gpus=[_rtx3060()]),
        # an Ada and a Pascal card; the Pascal one supports neither MIG nor PCI info here
        "two_mixed_gpus": lambda: FakeNvml(
            gpus=[
                FakeGpu(
                    name="NVIDIA GeForce RTX 4090",
                    cc=(8, 9),
                    uuid="GPU-11111111-2222-3333-4444-555555555555",
                    memory_total_mib=24564,
                    pci_bus_id="00000000:01:00.0",
                    architecture=pynvml.NVML_DEVICE_ARCH_ADA,
                ),
                FakeGpu(
                    name="NVIDIA GeForce GTX 1080 Ti",
                    cc=(6, 1),
                    uuid="GPU-66666666-7777-8888-9999-000000000000",
                    memory_total_mib=11264,
                    pci_bus_id="00000000:02:00.0",
                    architecture=pynvml.NVML_DEVICE_ARCH_PASCAL,
                    errors={"nvmlDeviceGetPciInfo": _NOT_SUPPORTED},
                ),
            ],
            driver="550.54.14",
            cuda=12040,
        ),
        # an R418-era libnvidia-ml: no _v2 CUDA call, no CC/architecture/MIG functions
        "old_driver": lambda: FakeNvml(
            gpus=[
                FakeGpu(
                    name="Tesla K80",
                    uuid="GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                    memory_total_mib=11441,
                    pci_bus_id="00000000:04:00.0",
                )
            ],
            driver="418.226.00",
            cuda=10010,
            missing=(
                "nvmlSystemGetCudaDriverVersion_v2",
                "nvmlDeviceGetCudaComputeCapability",
                "nvmlDeviceGetArchitecture",
                "nvmlDeviceGetMigMode",
            ),
        ),
        # GPU 1 fell off the bus before we got a handle; GPU 2 while we read it
        "gpu_is_lost": lambda: FakeNvml(
            gpus=[
                FakeGpu(name="NVIDIA A100-SXM4-40GB", cc=(8, 0), memory_total_mib=40960),
                FakeGpu(name="NVIDIA A100-SXM4-40GB", handle_error=_LOST),
                FakeGpu(
                    name="NVIDIA A100-SXM4-40GB",
                    cc=(8, 0),
                    errors={"nvmlDeviceGetMemoryInfo": _LOST},
                ),
            ],
            driver="535.183.01",
            cuda=12020,
        ),
        "mig_enabled": lambda: FakeNvml(
            gpus=[
                FakeGpu(
                    name="NVIDIA H100 80GB HBM3",
                    cc=(9, 0),
                    memory_total_mib=81559,
                    pci_bus_id="00000000:19:00.0",
                    architecture=pynvml.NVML_DEVICE_ARCH_HOPPER,
                    mig=(pynvml.NVML_DEVICE_MIG_ENABLE, pynvml.NVML_DEVICE_MIG_ENABLE),
                )
            ],
            driver="560.35.03",
            cuda=12060,
        ),
        # read from a real H200 with nvidia-ml-py (2026-11-28; tests/data/nvidia-smi/README.md):
        # nvmlSystemGetCudaDriverVersion 13000, memory 150754820096 bytes, MIG (0, 0)
        "h200_driver580_real": lambda: FakeNvml(
            gpus=[
                FakeGpu(
                    name="NVIDIA H200",
                    cc=(9, 0),
                    uuid="GPU-00000000-0000-4000-8000-000000000200",
                    memory_total_mib=150754820096 // MIB,
                    pci_bus_id="00000000:00:06.0",
                    architecture=pynvml.NVML_DEVICE_ARCH_HOPPER,
                    mig=(0, 0),
                )
            ],
            driver="580.159.04",
            cuda=13000,
        ),
        # NVML starts but cannot even count the GPUs
        "count_fails": lambda: FakeNvml(gpus=[_rtx3060()], count_error=pynvml.NVML_ERROR_UNKNOWN),
    }


SCENARIOS = _scenarios()


def scenario(name: str) -> FakeNvml:
    """A fresh FakeNvml for the named scenario (see ``SCENARIOS``)."""
    return SCENARIOS[name]()


# -- fake nvidia-smi -------------------------------------------------------------------

_SCRIPT = """#!/bin/sh
# fake nvidia-smi for scenario {scenario}; only shell builtins, so PATH may hold nothing else
data={data}
log={log}
printf '%s\\n' "$*" >> "$log"
case "$*" in
  *--query-gpu=*compute_cap*) what=query-cc ;;
  *--query-gpu=*) what=query ;;
  *) what=banner ;;
esac
[ -f "$data/$what.out" ] || what=default
[ -f "$data/$what.out" ] || {{ echo "fake nvidia-smi: no $what.out" >&2; exit 99; }}
while IFS= read -r line || [ -n "$line" ]; do printf '%s\\n' "$line"; done < "$data/$what.out"
rc=0
[ -f "$data/$what.rc" ] && read -r rc < "$data/$what.rc"
exit "$rc"
"""


def write_fake_nvidia_smi(folder: Path, scenario: str) -> Path:
    """Write ``folder/nvidia-smi`` replaying ``tests/data/nvidia-smi/<scenario>``; return it.

    Arguments of every call are appended to ``folder/calls.log``.
    """
    data = NVIDIA_SMI_DATA / scenario
    assert data.is_dir(), f"no nvidia-smi scenario {scenario!r}"
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "nvidia-smi"
    script.write_text(
        _SCRIPT.format(
            scenario=scenario,
            data=shlex.quote(str(data)),
            log=shlex.quote(str(folder / "calls.log")),
        )
    )
    script.chmod(0o755)
    return script


def nvidia_smi_calls(folder: Path) -> list[str]:
    log = folder / "calls.log"
    return log.read_text().splitlines() if log.exists() else []
