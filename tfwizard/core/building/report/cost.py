"""What a planned build will cost before it starts, and the plan said in plain words.

The Review and Build pages show these lines before anything runs: the versions, the
GPUs the wheel is for, the estimated time, download and disk use with the assumptions
behind them, and where the wheel and the record go. The time comes from `advise`'s model
(UNVERIFIED) until this machine has finished builds of the same backend: then their
record figures (elapsed hours x Bazel's jobs) replace the model's work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...advise import estimate_build
from ...host import HostProfile
from ...i18n import _, ngettext
from ...knowledge import KnowledgeBase
from ...vocab import duration_text
from ..plan.plan import BuildPlan
from .history import BuildSummary, calibration

GPU_BACKENDS = ("cuda", "rocm")


@dataclass(frozen=True)
class BuildCost:
    """A build's estimated time (hours, with a range), download and disk use."""

    hours: float
    low: float
    high: float
    jobs: int
    cpus: int
    download_gib: float
    disk_gib: float
    assumptions: tuple[str, ...]
    calibrated_from: tuple[str, ...]  # build ids of this machine's records used; ()=model
    sources: tuple[str, ...]

    @property
    def verified(self) -> bool:
        """True when this machine's own records gave the time, not the model."""
        return bool(self.calibrated_from)

    def time_text(self) -> str:
        """"about 9 h 00 min (5 h 24 min to 14 h 24 min) with 2 jobs on 2 CPUs"."""
        return _("about {time} ({low} to {high}) with {jobs} jobs on {cpus} CPUs").format(
            time=duration_text(self.hours * 3600), low=duration_text(self.low * 3600),
            high=duration_text(self.high * 3600), jobs=self.jobs, cpus=self.cpus)


def plan_jobs(plan: BuildPlan) -> int | None:
    """Bazel's --jobs in the plan, None when it sets none."""
    for flag in plan.flag_list:
        if flag.startswith("--jobs="):
            try:
                return int(flag.split("=", 1)[1])
            except ValueError:
                return None
    return None


def build_cost(kb: KnowledgeBase, host: HostProfile, plan: BuildPlan,
               past: Iterable[BuildSummary] = ()) -> BuildCost:
    """The estimate for `plan` on the build host `host`; `past` (this machine's history)
    calibrates the time when it holds a finished, mostly uncached build of the backend."""
    model = kb.raw.get("advise", {}).get("build_time", {})
    size = kb.raw.get("advise", {}).get("build_size", {})
    base = estimate_build(kb, host, plan.backend)
    jobs = plan_jobs(plan) or base.jobs
    gpu = plan.backend in GPU_BACKENDS
    overhead = float(model.get("overhead_hours", 0.3))
    targets = len([t for t in plan.compute_capabilities or plan.amdgpu_targets
                   if not t.startswith("compute_")])  # PTX rides along with its sm_
    share = float(size.get("cc_share", 0.15))
    factor = 1.0 + share * max(0, targets - 1) if gpu else 1.0
    found = calibration(past, plan.backend, overhead_hours=overhead)
    assumptions = [_("{jobs} Bazel jobs at once (the plan's --jobs) on {cpus} CPUs").format(
        jobs=jobs, cpus=base.cpus)]
    if found is not None:
        work = found.thread_hours
        assumptions.append(ngettext("the time comes from {count} finished build of this "
                                    "machine ({ids})", "the time comes from {count} finished "
                                    "builds of this machine ({ids})", found.builds).format(
                                        count=found.builds,
                                               ids=", ".join(found.build_ids[-3:])))
    else:
        work = float(model.get("gpu_thread_hours" if gpu else "cpu_thread_hours", 20.0))
        work *= factor
        assumptions.append(_("UNVERIFIED: {why}").format(
            why=_(base.unverified)))  # knowledge text: translated (knowledge.display_texts)
        if gpu:  # "% to", not "% of": Babel would take "% o" for a %-format
            assumptions.append(ngettext("{count} GPU target: each one after the first adds "
                                        "{share} % to the GPU work", "{count} GPU targets: "
                                        "each one after the first adds {share} % to the GPU "
                                        "work", targets).format(
                                     count=targets, share=round(share * 100)))
    assumptions.append(_("no cache hits: a rebuild with the disk cache is much faster"))
    assumptions.append(_("UNVERIFIED: download and disk: {why}").format(
        why=_(str(size.get("unverified", "")))))
    hours = overhead + work / max(1, jobs)
    return BuildCost(
        hours=round(hours, 2), low=round(hours * float(model.get("low", 0.6)), 2),
        high=round(hours * float(model.get("high", 1.6)), 2), jobs=jobs, cpus=base.cpus,
        download_gib=float(size.get("gpu_download_gib" if gpu else "cpu_download_gib", 2.0)),
        disk_gib=float(size.get("gpu_disk_gib" if gpu else "cpu_disk_gib", 20.0)),
        assumptions=tuple(assumptions),
        calibrated_from=found.build_ids if found is not None else (),
        sources=tuple(dict.fromkeys([*base.sources, *size.get("sources", ())])))


def _targets_text(plan: BuildPlan) -> str:
    if plan.backend == "cuda":
        tokens = [c if c.startswith(("sm_", "compute_")) else "sm_" + c.replace(".", "")
                  for c in plan.compute_capabilities]
        return _("NVIDIA GPUs: {targets}").format(targets=" + ".join(tokens) or "?")
    if plan.backend == "rocm":
        return _("AMD GPUs: {targets}").format(targets=" + ".join(plan.amdgpu_targets) or "?")
    return _("CPU only (no GPU support in the wheel)")


def versions_text(plan: BuildPlan) -> str:
    """"TensorFlow 2.18.0 · Python 3.11 · CUDA 12.5.1 / cuDNN 9.3.0"."""
    parts = [_("TensorFlow {release}").format(release=plan.release),
             _("Python {python}").format(python=plan.python)]
    cuda = plan.configure_env.get("HERMETIC_CUDA_VERSION")
    cudnn = plan.configure_env.get("HERMETIC_CUDNN_VERSION")
    if cuda:
        parts.append(_("CUDA {cuda} / cuDNN {cudnn}").format(cuda=cuda, cudnn=cudnn or "?"))
    elif plan.backend == "rocm":
        parts.append("ROCm")
    return " · ".join(parts)


@dataclass(frozen=True)
class SummaryLine:
    """One line of the plain summary: a label and its text."""

    key: str  # versions | targets | time | size | wheel | record | steps
    label: str
    text: str


def plain_summary(plan: BuildPlan, cost: BuildCost, *, wheel_dir: Path | None,
                  builds_dir: Path) -> list[SummaryLine]:
    """The build in plain words, in the order a person asks: what, for which GPUs, how long
    and how big, where the wheel and the record go, which steps."""
    time_text = cost.time_text()
    if not cost.verified:
        time_text += " · " + _("UNVERIFIED estimate")
    wheel = (str(wheel_dir) if wheel_dir is not None
             else _("the build's record folder ({path}/<build id>)").format(path=builds_dir))
    return [
        SummaryLine("versions", _("Builds"), versions_text(plan)),
        SummaryLine("targets", _("For"), _targets_text(plan)),
        SummaryLine("time", _("Build time"), time_text),
        SummaryLine("size", _("Download and disk"),
                    _("about {download} GiB download, about {disk} GiB disk").format(
                        download=f"{cost.download_gib:g}", disk=f"{cost.disk_gib:g}")),
        SummaryLine("wheel", _("Wheel goes to"), wheel),
        SummaryLine("record", _("Build record"),
                    _("{path}/<build id>: log, plan, result").format(path=builds_dir)),
        SummaryLine("steps", _("Steps"), steps_text(plan)),
    ]


def steps_text(plan: BuildPlan) -> str:
    """The plan's steps in order: "prepare the image → fetch → configure → build → package"."""
    names = [_("prepare the image")] + [s.name for s in plan.steps if s.role != "list"]
    return " → ".join(dict.fromkeys(names))
