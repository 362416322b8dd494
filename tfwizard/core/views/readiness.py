"""Is this machine ready to build? One pass, warn or fail row per host-level need.

The Welcome page shows these rows as its checklist: Docker and its rights, the
NVIDIA container runtime, CPUs and RAM (what they mean for jobs and build time), free disk
against what the build needs, the CUDA the driver supports, and the target machine. The
figures come from the host profile and the knowledge base (platforms.toml [memory],
advise.toml [build_time]); nothing here probes the machine.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..advise import estimate_build
from ..compat import cuda_support
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase
from ..recipe import Recipe

#: the row statuses, best first
PASS, WARN, FAIL = "pass", "warn", "fail"

#: the rows, in the order they are shown
KEYS = ("docker", "nvidia_runtime", "resources", "disk", "driver_cuda", "target")


@dataclass(frozen=True)
class Check:
    """One row of the checklist: what is checked, how it stands, and what that means."""

    key: str  # one of KEYS
    status: str  # PASS, WARN or FAIL
    title: str
    text: str


def readiness(recipe: Recipe, build: HostProfile | None, target: HostProfile | None,
              kb: KnowledgeBase, target_path: str = "") -> list[Check]:
    """The checklist for building `recipe` on `build` for `target` (None: the build host).

    Empty while the build host is not detected yet.
    """
    if build is None:
        return []
    return [_docker(build), _runtime(build, recipe), _resources(build, recipe, kb),
            _disk(build, recipe, kb), _driver(target or build, recipe),
            _target(target, target_path)]


def overall(checks: list[Check]) -> str:
    """The worst status of the rows (PASS when there are none)."""
    order = (PASS, WARN, FAIL)
    return max((c.status for c in checks), key=order.index, default=PASS)


def _docker(host: HostProfile) -> Check:
    d, title = host.docker, _("Docker")
    if d.status == "ok":
        rights = _("rootless: containers run with your user's rights") if d.rootless else \
            _("a root engine: access to its socket is root-equivalent")
        return Check("docker", PASS, title, _("Docker {version} answers at {host}; {rights}.")
                     .format(version=d.server_version or "?", host=d.host or "?", rights=rights))
    why = {"not_installed": _("Docker is not installed: install Docker Engine, then Refresh."),
           "not_running": _("The Docker engine does not answer: start it (`sudo systemctl "
                            "start docker`), then Refresh."),
           "permission_denied": _("No rights to the Docker socket: add your user to the "
                                  "`docker` group (then log in again), or use rootless "
                                  "Docker.")}.get(d.status, _("Docker is not usable."))
    detail = f" ({d.message})" if d.message else ""
    return Check("docker", FAIL, title, _("{why} Nothing can be built without it.{detail}")
                 .format(why=why, detail=detail))


def _runtime(host: HostProfile, recipe: Recipe) -> Check:
    title = _("NVIDIA container runtime")
    if host.docker.nvidia_runtime or host.docker.cdi_spec_dirs:
        return Check("nvidia_runtime", PASS, title,
                     _("Containers can use this machine's NVIDIA GPUs."))
    if not host.nvidia.gpus:
        return Check("nvidia_runtime", PASS, title,
                     _("Not needed: this machine has no NVIDIA GPU, and the build needs none "
                       "(hermetic CUDA)."))
    return Check("nvidia_runtime", WARN, title,
                 _("Not installed: the build needs no GPU (hermetic CUDA), but containers "
                   "cannot use the GPU. `sudo nvidia-ctk runtime configure --runtime=docker` "
                   "sets it up."))


def _resources(host: HostProfile, recipe: Recipe, kb: KnowledgeBase) -> Check:
    title = _("CPUs and RAM")
    est = estimate_build(kb, host, recipe.backend.kind)
    if est.ram_gib is None:
        return Check("resources", WARN, title,
                     _("{cpus} CPUs, RAM unknown: the number of Bazel jobs cannot be sized.")
                     .format(cpus=est.cpus))
    text = _("{cpus} CPUs and {ram:.0f} GiB RAM: Bazel runs {jobs} jobs at once; this build "
             "takes {time} (a rough estimate, UNVERIFIED).").format(
        cpus=est.cpus, ram=est.ram_gib, jobs=est.jobs, time=est.text())
    return Check("resources", WARN if est.jobs < 4 else PASS, title, text)


def _disk(host: HostProfile, recipe: Recipe, kb: KnowledgeBase) -> Check:
    title = _("Free disk")
    mem = kb.platforms["memory"]
    need = mem["min_free_disk_gib_cuda"] if recipe.is_gpu else mem["min_free_disk_gib_cpu"]
    free = host.resources.disk_free_bytes
    if free is None:
        return Check("disk", WARN, title, _("Free space unknown; the build needs ~{need} GiB.")
                     .format(need=need))
    free_gib = free / 2**30
    status = FAIL if free_gib < need / 2 else WARN if free_gib < need else PASS
    return Check("disk", status, title,
                 _("{free:.0f} GiB free at {path}; the build needs ~{need} GiB.")
                 .format(free=free_gib, path=host.resources.disk_path or "?", need=need))


def _driver(host: HostProfile, recipe: Recipe) -> Check:
    title = _("CUDA of the driver")
    nv = host.nvidia
    if recipe.backend.kind != "cuda":
        return Check("driver_cuda", PASS, title, _("Not needed: the wheel does not use CUDA."))
    if not nv.cuda_driver_version:
        return Check("driver_cuda", WARN, title,
                     _("No NVIDIA driver found: the build needs none, but the wheel only "
                       "uses a GPU on a machine with a driver."))
    text = _("Driver {driver} supports CUDA up to {cuda}; the wheel uses CUDA {wanted}.").format(
        driver=nv.driver_version or "?", cuda=nv.cuda_driver_version,
        wanted=recipe.cuda.version or "?")
    return Check("driver_cuda", _cuda_status(nv.cuda_driver_version, recipe.cuda.version),
                 title, text)


def _cuda_status(driver: str, wanted: str) -> str:
    """PASS when the driver covers the CUDA version, WARN for a newer minor (minor-version
    compatibility), FAIL for a newer major."""
    return {"minor": WARN, "major": FAIL}.get(cuda_support(driver, wanted) or "native", PASS)


def _target(target: HostProfile | None, path: str) -> Check:
    title = _("Target machine")
    if target is None:
        return Check("target", PASS, title, _("This machine: the wheel is built for it."))
    gpus = ", ".join(g.name or "GPU" for g in target.nvidia.gpus) or _("no NVIDIA GPU")
    return Check("target", PASS, title, _("{path}: {gpus}").format(path=path or "?", gpus=gpus))
