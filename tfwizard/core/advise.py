"""Build only when it pays: does an official TensorFlow wheel serve the machine, and if not, why.

`advise()` takes the machine that will *run* the wheel (a target profile, else this host),
what the person wants (`Intent`) and optionally a release and a Python, and answers with an
`Advice`: a verdict, the wheel that serves (`tensorflow[and-cuda]==2.18.0`, its pip command)
or every reason a source build (or another fix) is needed, each with the facts compared,
the knowledge-base sources and the fixes. It is pure: no I/O, no clock.

The facts come from the knowledge base: what each official wheel needs (wheels.toml: SASS
and PTX targets, CPU baseline, glibc floor, Pythons, driver floors), what a hermetic CUDA
can compile (cuda.toml), what PTX JIT costs and where it is reported to fail, and the
build-time model (advise.toml). The rules for GPU code are NVIDIA's (see `cc.py`): a cubin
for sm_XY runs on CC X.Z with Z >= Y (same major only); PTX compute_XY is JIT-compiled by the
driver for any CC >= X.Y when the driver is at least as new as the toolkit that wrote it.

Verdicts, from the findings' severities and fixes:
- ``official``: nothing stands in the way;
- ``official-with-caveats``: the wheel runs, with costs (PTX JIT, a local CUDA to install);
- ``fixable``: it does not run as the machine is, but every reason has a fix short of a
  build (a driver update, another Python, another release, a container);
- ``build``: some reason only a source build removes (a GPU no wheel covers, no AVX, your
  own changes);
- ``unsupported``: some reason nothing here removes;
- ``unknown``: the facts to decide are missing (no target profile, not Linux, ROCm).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from packaging.version import Version

from . import cc as ccmod
from . import compat
from .errors import UsageError
from .host import HostProfile, NvidiaGpu
from .i18n import _
from .knowledge import KnowledgeBase, OfficialWheel, Release
from .toolchain import has_hermetic_cc, llvm_choices, llvm_default, llvm_for

if TYPE_CHECKING:
    from .recipe import Recipe


class Intent(str, Enum):
    """What the person wants from TensorFlow."""

    GPU = "gpu"  # a working GPU TensorFlow
    CPU = "cpu"  # a CPU TensorFlow
    CHANGES = "changes"  # TensorFlow with my own changes
    OTHER_MACHINE = "other-machine"  # a wheel for another machine


VERDICTS = ("official", "official-with-caveats", "fixable", "build", "unsupported", "unknown")
BACKENDS = ("cpu", "cuda", "rocm")

#: remedies that make an official wheel serve without a build
RESOLVING_KINDS = frozenset({"release", "python", "driver", "container", "reboot"})
#: findings that mean the facts to decide are missing
UNKNOWN_CODES = frozenset({"NO_TARGET_PROFILE", "NO_GPU_ON_HOST", "OS_NOT_LINUX",
                           "ROCM_NOT_ASSESSED"})
#: findings another release can remove (they get a "use release X" remedy when one serves)
RELEASE_DEPENDENT = frozenset({
    "NO_OFFICIAL_WHEEL", "PYTHON_NOT_PUBLISHED", "GLIBC_TOO_OLD", "DRIVER_TOO_OLD",
    "GPU_NOT_COVERED", "GPU_PTX_DRIVER", "GPU_PTX_JIT", "GPU_PTX_JIT_FAILS",
    "LOCAL_CUDA_NEEDED",
})


@dataclass(frozen=True)
class Remedy:
    """One way out of a finding.

    kind: build | release | prerelease | python | driver | container | reboot | env |
    cpu-wheel | profile.
    A build's `changes` are recipe keys (as `recipe set` takes them); a release's or a
    package's `requirement` is what pip installs.
    """

    kind: str
    label: str
    changes: Mapping[str, Any] = field(default_factory=dict)
    requirement: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The remedy as JSON data."""
        return {"kind": self.kind, "label": self.label, "changes": dict(self.changes),
                "requirement": self.requirement}


@dataclass(frozen=True)
class Reason:
    """A finding about the official wheel on the machine: a reason to build, or a check passed.

    severity: error (the wheel does not serve), warning (it serves at a cost) or info (a
    check that passed, with its evidence). `evidence` are the facts compared, as sentences;
    `facts` the same values for machines (and tests).
    """

    code: str
    severity: str
    message: str
    evidence: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    fixes: tuple[Remedy, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The reason as JSON data."""
        return {"code": self.code, "severity": self.severity, "message": self.message,
                "evidence": list(self.evidence), "facts": dict(self.facts),
                "sources": list(self.sources), "fixes": [f.to_dict() for f in self.fixes]}


@dataclass(frozen=True)
class BuildEstimate:
    """How long a source build would take on the build host: a rough model (advise.toml)."""

    hours: float
    low: float
    high: float
    jobs: int
    cpus: int
    ram_gib: float | None
    backend: str
    sources: tuple[str, ...]
    unverified: str

    def text(self) -> str:
        """"about 3 hours", in the current language."""
        if self.hours <= 1.0:
            return _("about an hour")
        return _("about {hours} hours").format(hours=f"{self.hours:g}")

    def to_dict(self) -> dict[str, Any]:
        """The estimate as JSON data."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Advice:
    """The answer: does an official wheel serve the machine, and if not, why."""

    verdict: str
    summary: str
    intent: Intent
    backend: str
    release: str
    #: given | newest-serving | newest-with-caveats | newest
    release_choice: str
    arch: str
    python: str | None
    package: str | None
    requirement: str | None
    #: the pip command, an argv list to run on the machine the advice is about
    install: tuple[str, ...]
    #: the verdict about the machine alone (without your changes or custom options)
    machine_verdict: str
    findings: tuple[Reason, ...]
    estimate: BuildEstimate
    on_target: bool

    @property
    def official_serves(self) -> bool:
        """Whether an official wheel serves the machine (perhaps with caveats)."""
        return self.machine_verdict in ("official", "official-with-caveats")

    @property
    def build_proposed(self) -> bool:
        """Whether the advice proposes a source build (its verdict, or a fix of a reason);
        where the wheel serves without one, no build time is offered."""
        return self.verdict == "build" or any(r.kind == "build" for f in self.reasons
                                              for r in f.fixes)

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """The findings that stand in the way or cost something (errors and warnings)."""
        return tuple(f for f in self.findings if f.severity != "info")

    def codes(self, severity: str | None = None) -> list[str]:
        """The codes of the findings, of one severity when given."""
        return [f.code for f in self.findings if severity is None or f.severity == severity]

    def finding(self, code: str) -> Reason | None:
        """The finding with this code, or None."""
        return next((f for f in self.findings if f.code == code), None)

    def to_dict(self) -> dict[str, Any]:
        """The advice as JSON data (`tfwizard check --advise --json`)."""
        return {
            "verdict": self.verdict, "summary": self.summary, "intent": self.intent.value,
            "backend": self.backend, "release": self.release,
            "release_choice": self.release_choice, "arch": self.arch, "python": self.python,
            "package": self.package, "requirement": self.requirement,
            "install": list(self.install), "machine_verdict": self.machine_verdict,
            "official_serves": self.official_serves, "on_target": self.on_target,
            "build_proposed": self.build_proposed,
            "findings": [f.to_dict() for f in self.findings],
            "estimate": self.estimate.to_dict(),
        }


# -- entry point --------------------------------------------------------------------------


def advise(
    kb: KnowledgeBase,
    *,
    host: HostProfile,
    target: HostProfile | None = None,
    release: str | None = None,
    python: str | None = None,
    intent: Intent,
    backend: str | None = None,
    recipe: Recipe | None = None,
) -> Advice:
    """Whether an official wheel serves the machine that will run TensorFlow, and every reason
    a source build (or another fix) is needed when it does not.

    The machine is `target` when given, else `host`; a build would run on `host` (the time
    estimate is for it). `release` is "2.18.0", "2.18" or "master"; None picks the newest
    release whose official wheel serves the machine. `python` is "3.11"; None takes the
    machine's current interpreter. `backend` (cpu | cuda | rocm) defaults from the intent and
    the machine's GPUs. A `recipe` fills what is not given and counts its non-default build
    options and source (a branch, a checkout) as reasons to build.
    """
    intent = Intent(intent)
    if recipe is not None:
        release = release or recipe.tensorflow.version or None
        python = python or recipe.python.version or None
        if intent in (Intent.CHANGES, Intent.OTHER_MACHINE):  # GPU/CPU say it themselves
            backend = backend or recipe.backend.kind
    machine = target if target is not None else host
    on_target = target is not None
    backend = _backend(intent, backend, machine if (on_target or intent is not Intent.OTHER_MACHINE)
                       else None)
    ctx = _Ctx(kb, machine, on_target,
               _("the target machine") if on_target else _("this machine"),
               backend, _python_of(machine, python), machine.cpu.arch)
    estimate = estimate_build(kb, host, backend)

    given = _find_release(kb, release) if release else None
    scope = _scope_findings(ctx, intent)
    if scope:
        rel = given or kb.latest_release()
        wheel, requirement = _wheel_and_requirement(ctx, rel)
        findings = scope + ([_wheel_needs(ctx, rel, wheel, requirement)]
                            if scope[0].code == "NO_TARGET_PROFILE" and wheel is not None
                            and requirement else [])
        return _advice(ctx, intent, rel, "given" if release else "newest", findings, findings,
                       wheel, requirement, estimate)

    rel, choice, machine_findings = _choose_release(ctx, given)
    machine_findings = _with_release_alternative(ctx, rel, machine_findings)
    wheel, requirement = _wheel_and_requirement(ctx, rel)
    findings = list(machine_findings)
    if choice != "given":
        findings.insert(0, _release_chosen(ctx, rel, choice))
    findings += _intent_findings(ctx, intent, rel, recipe)
    return _advice(ctx, intent, rel, choice, findings, machine_findings, wheel, requirement,
                   estimate)


def estimate_build(kb: KnowledgeBase, host: HostProfile, backend: str) -> BuildEstimate:
    """A source build's duration on `host`: overhead + work / jobs (advise.toml [build_time]).

    jobs = min(logical CPUs, RAM / platforms.toml memory.gib_per_job), as the plan limits
    Bazel's jobs. UNVERIFIED: a model fitted by eye to reported builds, not a measurement.
    """
    model = kb.raw.get("advise", {}).get("build_time", {})
    cpus = host.resources.cpu_count or host.cpu.cores or 1
    ram = host.resources.ram_total_bytes
    ram_gib = round(ram / 2**30, 1) if ram else None
    per_job = float(kb.platforms.get("memory", {}).get("gib_per_job", 2.5))
    jobs = min(cpus, max(1, math.floor(ram_gib / per_job))) if ram_gib else cpus
    work = float(model.get("gpu_thread_hours" if backend in ("cuda", "rocm")
                           else "cpu_thread_hours", 20.0))
    hours = float(model.get("overhead_hours", 0.3)) + work / jobs
    return BuildEstimate(
        hours=_round_hours(hours),
        low=round(hours * float(model.get("low", 0.6)), 1),
        high=round(hours * float(model.get("high", 1.6)), 1),
        jobs=jobs, cpus=cpus, ram_gib=ram_gib, backend=backend,
        sources=tuple(model.get("sources", ())), unverified=str(model.get("unverified", "")),
    )


def _round_hours(hours: float) -> float:
    if hours < 4:
        return max(1.0, round(hours * 2) / 2)
    return float(round(hours))


# -- context --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    kb: KnowledgeBase
    machine: HostProfile
    on_target: bool
    where: str  # "this machine" / "the target machine", translated
    backend: str
    python: str | None  # "3.11"
    arch: str


def _backend(intent: Intent, backend: str | None, machine: HostProfile | None) -> str:
    if backend:
        if backend not in BACKENDS:
            raise UsageError(_("backend must be one of {choices}, not {backend!r}.").format(
                choices=", ".join(BACKENDS), backend=backend))
        return backend
    if intent is Intent.CPU or machine is None:
        return "cpu"
    if machine.nvidia.gpus:
        return "cuda"
    if machine.amd.gpus:
        return "rocm"
    return "cuda" if intent is Intent.GPU else "cpu"


def _python_of(machine: HostProfile, python: str | None) -> str | None:
    if python:
        return compat.xy(python) or python
    current = next((p for p in machine.pythons if p.is_current), None)
    chosen = current or (machine.pythons[0] if machine.pythons else None)
    return compat.xy(chosen.version) if chosen is not None else None


def _find_release(kb: KnowledgeBase, release: str) -> Release:
    rel = kb.release(release)
    if rel is None and release.count(".") == 1:  # a series: "2.18"
        rel = next((r for r in kb.releases if r.series == release), None)
    if rel is None:
        raise UsageError(_("TensorFlow {version!r} is not in the knowledge base.").format(
            version=release), _("Known releases: {releases}.").format(
            releases=", ".join(kb.release_versions())))
    return rel


def _published_releases(kb: KnowledgeBase) -> list[Release]:
    """Releases with official wheels tfwizard read, newest first: finals only (a patch
    release's wheels are its base's in wheels.toml, a release candidate's are not read)."""
    return [r for r in reversed(kb.releases)
            if not r.is_master and not r.is_prerelease and r.patch_of is None]


# -- the wheel --------------------------------------------------------------------------------


def _package(ctx: _Ctx) -> str:
    if ctx.arch == "x86_64" and ctx.backend != "cuda":
        return "tensorflow-cpu"
    return "tensorflow"


def _wheel_and_requirement(ctx: _Ctx, rel: Release) -> tuple[OfficialWheel | None, str | None]:
    """The wheel pip installs for the machine and backend, and the requirement naming it."""
    if rel.is_master or ctx.arch not in ("x86_64", "aarch64"):
        return None, None
    package = _package(ctx)
    wheel = ctx.kb.official_wheel(rel.version, ctx.arch, package)
    if wheel is None:
        return None, None
    extra = "[and-cuda]" if ctx.backend == "cuda" and wheel.kind == "gpu" and wheel.and_cuda \
        else ""
    return wheel, f"{package}{extra}=={wheel.release}"


def _wheel_label(requirement: str | None, rel: Release) -> str:
    return f"`{requirement}`" if requirement else _("TensorFlow {release}").format(
        release=rel.version)


def _install_argv(ctx: _Ctx, requirement: str | None) -> tuple[str, ...]:
    if not requirement:
        return ()
    python = "python3"
    for p in ctx.machine.pythons:
        if compat.xy(p.version) == ctx.python:
            python = p.path
            break
    return (python, "-m", "pip", "install", requirement)


# -- choosing the release -----------------------------------------------------------------------


def _choose_release(ctx: _Ctx, given: Release | None) -> tuple[Release, str, list[Reason]]:
    if given is not None:
        return given, "given", _assess(ctx, given)
    with_caveats: tuple[Release, list[Reason]] | None = None
    for rel in _published_releases(ctx.kb):
        findings = _assess(ctx, rel)
        verdict = _classify(findings)
        if verdict == "official":
            return rel, "newest-serving", findings
        if verdict == "official-with-caveats" and with_caveats is None:
            with_caveats = (rel, findings)
    if with_caveats is not None:
        return with_caveats[0], "newest-with-caveats", with_caveats[1]
    rel = ctx.kb.latest_release()
    return rel, "newest", _assess(ctx, rel)


def _release_chosen(ctx: _Ctx, rel: Release, choice: str) -> Reason:
    if choice == "newest-serving":
        text = _("No release was given: TensorFlow {release} is the newest release whose "
                 "official wheel serves {where}.")
    elif choice == "newest-with-caveats":
        text = _("No release was given: TensorFlow {release} is the newest release whose "
                 "official wheel runs on {where}, with the caveats below; none runs without.")
    else:
        text = _("No release was given, and no release's official wheel serves {where}: the "
                 "newest, TensorFlow {release}, is assessed.")
    return Reason("RELEASE_CHOSEN", "info", text.format(release=rel.version, where=ctx.where),
                  facts={"release": rel.version, "choice": choice}, sources=("pypi-wheel-files",))


def _serving_alternative(ctx: _Ctx, rel: Release) -> tuple[Release, OfficialWheel, str] | None:
    """The newest other release whose official wheel serves the machine without a caveat."""
    for other in _published_releases(ctx.kb):
        if other.version == rel.version:
            continue
        if _classify(_assess(ctx, other)) == "official":
            wheel, requirement = _wheel_and_requirement(ctx, other)
            if wheel is not None and requirement:
                return other, wheel, requirement
    return None


def _with_release_alternative(ctx: _Ctx, rel: Release, findings: list[Reason]) -> list[Reason]:
    if not any(f.code in RELEASE_DEPENDENT and f.severity != "info" for f in findings):
        return findings
    alt = _serving_alternative(ctx, rel)
    if alt is None:
        return findings
    other, wheel, requirement = alt
    remedy = Remedy("release", _("Use TensorFlow {release} instead: `{requirement}` serves "
                                 "{where}").format(release=other.version,
                                                   requirement=requirement, where=ctx.where),
                    requirement=requirement)
    out = []
    for f in findings:
        if f.code in RELEASE_DEPENDENT and f.severity != "info":
            extra: tuple[str, ...] = ()
            if f.code == "GLIBC_TOO_OLD":
                extra = (_("TensorFlow {release}'s wheel is {manylinux} (glibc {floor} or newer), "
                           "which {where} meets.").format(release=other.version,
                                                          manylinux=wheel.manylinux,
                                                          floor=wheel.glibc_floor,
                                                          where=ctx.where),)
            f = dataclasses.replace(f, fixes=f.fixes + (remedy,), evidence=f.evidence + extra,
                                    facts={**f.facts, "alternative": other.version})
        out.append(f)
    return out


# -- what stops the advice before any wheel is looked at ----------------------------------------


def _scope_findings(ctx: _Ctx, intent: Intent) -> list[Reason]:
    m = ctx.machine
    if intent is Intent.OTHER_MACHINE and not ctx.on_target:
        return [Reason(
            "NO_TARGET_PROFILE", "warning",
            _("A wheel for another machine: tfwizard knows nothing about that machine yet, so "
              "it cannot tell whether an official wheel serves it."),
            sources=("tfwizard-testing",),
            fixes=(_profile_remedy(),))]
    if m.os.system != "linux":
        return [Reason(
            "OS_NOT_LINUX", "warning",
            _("This advice covers TensorFlow's Linux wheels only; {where} runs {system} (on "
              "Windows, WSL2 counts as Linux).").format(where=ctx.where, system=m.os.system),
            facts={"system": m.os.system}, sources=("tf-pip-md",))]
    if ctx.backend == "rocm":
        return [Reason(
            "ROCM_NOT_ASSESSED", "warning",
            _("TensorFlow publishes no ROCm wheel (AMD publishes ROCm builds of its own, which "
              "tfwizard does not assess); a source build with backend rocm is what tfwizard "
              "can do for {where}.").format(where=ctx.where),
            facts={"gpus": m.amd_targets()}, sources=("tf-pip-md", "rocm-matrix"),
            fixes=(Remedy("build", _("Build TensorFlow from source for ROCm"),
                          {"backend.kind": "rocm", "rocm.amdgpu_targets": ["auto"]}),))]
    return []


def _profile_remedy() -> Remedy:
    return Remedy("profile", _("Describe the machine that will run the wheel: run `tfwizard "
                               "detect --json > target.json` there and give that file as the "
                               "target"))


def _wheel_needs(ctx: _Ctx, rel: Release, wheel: OfficialWheel, requirement: str) -> Reason:
    """What the official wheel asks of a machine, for a machine tfwizard has not seen."""
    evidence = [
        _("Python {pythons}.").format(pythons=", ".join(wheel.pythons)),
        _("glibc {floor} or newer ({manylinux}).").format(floor=wheel.glibc_floor,
                                                         manylinux=wheel.manylinux),
    ]
    if wheel.cpu_baseline:
        evidence.append(_("A CPU with {baseline}.").format(baseline=_baseline(wheel)))
    if wheel.kind == "gpu" and ctx.backend == "cuda":
        if wheel.driver_min:
            evidence.append(_("NVIDIA driver {driver} or newer.").format(driver=wheel.driver_min))
        evidence.append(_("GPUs with a cubin in SASS {sass}, or of CC {ptx_cc} or newer through "
                          "PTX JIT ({ptx}).").format(sass=", ".join(wheel.sass),
                                                     ptx_cc=", ".join(wheel.ptx_ccs) or "-",
                                                     ptx=", ".join(wheel.ptx) or "-"))
    return Reason("WHEEL_NEEDS", "info",
                  _("The official {wheel} wheel runs on a Linux {arch} machine with all of "
                    "these:").format(wheel=_wheel_label(requirement, rel), arch=ctx.arch),
                  tuple(evidence),
                  {"release": rel.version, "pythons": list(wheel.pythons),
                   "glibc_floor": wheel.glibc_floor, "cpu_baseline": wheel.cpu_baseline,
                   "sass": list(wheel.sass), "ptx": list(wheel.ptx),
                   "driver_min": wheel.driver_min},
                  tuple(wheel.sources))


# -- one release on the machine ---------------------------------------------------------------


def _assess(ctx: _Ctx, rel: Release) -> list[Reason]:
    """Every finding about `rel`'s official wheel on the machine (no intent, no alternatives)."""
    if ctx.arch not in ("x86_64", "aarch64"):
        return [Reason("ARCH_NO_WHEEL", "error",
                       _("TensorFlow publishes Linux wheels for x86_64 and aarch64 only; {where} "
                         "is {arch}.").format(where=ctx.where, arch=ctx.arch),
                       facts={"arch": ctx.arch}, sources=("pypi-wheel-files",))]
    if rel.is_master:
        return [Reason("NO_OFFICIAL_WHEEL", "error",
                       _("TensorFlow master has no official release wheel (tf-nightly builds "
                         "are not assessed here): only a source build makes one."),
                       facts={"release": rel.version}, sources=("pypi-wheel-files",),
                       fixes=_build_fixes(ctx, rel, _("Build TensorFlow {release} from source")))]
    wheel, requirement = _wheel_and_requirement(ctx, rel)
    if wheel is None:
        return [Reason("NO_OFFICIAL_WHEEL", "error",
                       _("TensorFlow {release} publishes no {package} wheel for {arch}.").format(
                           release=rel.version, package=_package(ctx), arch=ctx.arch),
                       facts={"release": rel.version, "arch": ctx.arch},
                       sources=("pypi-wheel-files",),
                       fixes=_build_fixes(ctx, rel, _("Build TensorFlow {release} from source")))]
    out: list[Reason] = []
    if ctx.backend == "cuda" and wheel.kind != "gpu":
        cpu_req = f"tensorflow=={wheel.release}" if ctx.arch == "aarch64" else \
            f"tensorflow-cpu=={wheel.release}"
        out.append(Reason(
            "NO_GPU_WHEEL_FOR_ARCH", "error",
            _("TensorFlow publishes no CUDA wheel for {arch}: its {arch} wheel runs on the CPU "
              "only.").format(arch=ctx.arch),
            facts={"arch": ctx.arch, "release": rel.version},
            sources=("pypi-wheel-files", "tf-pip-md"),
            fixes=_build_fixes(ctx, rel, _("Build TensorFlow {release} from source for CUDA "
                                           "on {arch}"), arch=ctx.arch)
            + (Remedy("cpu-wheel", _("Install the CPU wheel instead: {requirement}").format(
                requirement=cpu_req), requirement=cpu_req),)))
    out += _python_findings(ctx, rel, wheel)
    out += _glibc_findings(ctx, rel, wheel)
    out += _cpu_findings(ctx, rel, wheel)
    if ctx.backend == "cuda" and wheel.kind == "gpu":
        out += _gpu_findings(ctx, rel, wheel, requirement or "")
    return out


def _build_fixes(ctx: _Ctx, rel: Release, label: str, **fmt: str) -> tuple[Remedy, ...]:
    """A plain source build of `rel` (or of the nearest release whose build takes the Python)."""
    target = _buildable_release(ctx, rel)
    if target is None:
        return ()
    changes: dict[str, Any] = {"tensorflow.version": target.version,
                               "backend.kind": ctx.backend}
    if ctx.python:
        changes["python.version"] = ctx.python
    return (Remedy("build", label.format(release=target.version, **fmt), changes),)


def _buildable_release(ctx: _Ctx, rel: Release) -> Release | None:
    """`rel` if its build takes the Python, else the nearest newer release (master last) whose
    build does."""
    py = compat.as_version(ctx.python)
    if py is None or py in rel.python:
        return rel
    releases = list(ctx.kb.releases)
    index = releases.index(rel)
    for other in releases[index + 1:] + list(reversed(releases[:index])):
        if py in other.python:
            return other
    return None


# -- Python ---------------------------------------------------------------------------------------


def _python_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel) -> list[Reason]:
    published = ", ".join(wheel.pythons)
    py = ctx.python
    facts: dict[str, Any] = {"python": py, "published": list(wheel.pythons),
                             "release": rel.version}
    if py is None:
        return [Reason("PYTHON_UNKNOWN", "info",
                       _("The profile of {where} lists no Python; TensorFlow {release} publishes "
                         "{package} wheels for Python {published}.").format(
                           where=ctx.where, release=rel.version, package=wheel.package,
                           published=published),
                       facts=facts, sources=("pypi-wheel-files",))]
    if py in wheel.pythons:
        return [Reason("PYTHON_PUBLISHED", "info",
                       _("TensorFlow {release} publishes {package} wheels for Python {python} "
                         "(of {published}).").format(release=rel.version, package=wheel.package,
                                                      python=py, published=published),
                       facts=facts, sources=("pypi-wheel-files",))]
    package = _package(ctx)
    releases = [r.version for r in reversed(_published_releases(ctx.kb))
                if (w := ctx.kb.official_wheel(r.version, ctx.arch, package)) is not None
                and py in w.pythons]
    facts["releases_with_python"] = releases
    pre = None if releases else _prerelease_with(ctx, py)
    if releases:
        evidence = [_("Python {python} wheels are published by TensorFlow {releases}.").format(
            python=py, releases=", ".join(releases))]
    elif pre is not None:
        evidence = [_("No final TensorFlow release publishes Python {python} wheels; the "
                      "pre-release {pre} (uploaded {date}) does.").format(
            python=py, pre=pre["version"], date=pre.get("uploaded", "-"))]
    else:
        evidence = [_("No TensorFlow release publishes Python {python} wheels.").format(python=py)]
    fixes: list[Remedy] = []
    for interp in ctx.machine.pythons:
        version = compat.xy(interp.version)
        if version in wheel.pythons and not any(f.label.endswith(f"({interp.path})")
                                               for f in fixes):
            fixes.append(Remedy("python", _("Use Python {version}, which {where} has ({path})")
                                .format(version=version, where=ctx.where, path=interp.path)))
    if not fixes:
        fixes.append(Remedy("python", _("Install a Python that TensorFlow {release} publishes "
                                        "wheels for ({published}) and use it").format(
                                            release=rel.version, published=published)))
    if pre is not None:
        extra = "[and-cuda]" if ctx.backend == "cuda" else ""
        requirement = f"{package}{extra}=={pre['version']}"
        fixes.append(Remedy("prerelease", _("Try the pre-release: `pip install --pre "
                                             "{requirement}` (tfwizard has not assessed its "
                                             "wheel)").format(requirement=requirement),
                            requirement=requirement))
    pv = Version(py)
    if pv in rel.python:
        fixes += _build_fixes(ctx, rel, _("Build TensorFlow {release} from source for Python "
                                          "{python}"), python=py)
    else:
        evidence.append(_("A source build of TensorFlow {release} does not help: its build "
                          "takes Python {first} to {last} only.").format(
            release=rel.version, first=rel.pythons[0], last=rel.pythons[-1]))
        if not releases:
            fixes += _build_fixes(ctx, rel, _("Build TensorFlow {release} from source for "
                                              "Python {python}"), python=py)
    return [Reason("PYTHON_NOT_PUBLISHED", "error",
                   _("TensorFlow {release} publishes no {package} wheel for Python {python}, "
                     "the Python of {where}; it publishes Python {published}.").format(
                       release=rel.version, package=wheel.package, python=py, where=ctx.where,
                       published=published),
                   tuple(evidence), facts, ("pypi-wheel-files", "tf-source-md"), tuple(fixes))]


def _prerelease_with(ctx: _Ctx, python: str) -> dict[str, Any] | None:
    """The newest pre-release (advise.toml) with wheels for `python` that is not a final
    release the knowledge base knows (a pre-release entry in releases.toml still counts), or
    None."""
    known = {r.version for r in _published_releases(ctx.kb)}
    entries = [e for e in ctx.kb.raw.get("advise", {}).get("prerelease", [])
               if python in e.get("pythons", []) and e.get("version") not in known]
    return max(entries, key=lambda e: Version(e["version"]), default=None)


# -- glibc --------------------------------------------------------------------------------------


def _glibc_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel) -> list[Reason]:
    glibc = ctx.machine.os.glibc
    facts = {"glibc": glibc, "floor": wheel.glibc_floor, "manylinux": wheel.manylinux,
             "release": rel.version}
    have, floor = compat.as_version(glibc), compat.as_version(wheel.glibc_floor)
    if have is None or floor is None:
        return [Reason("GLIBC_UNKNOWN", "info",
                       _("The profile of {where} has no glibc version; the {release} wheel needs "
                         "glibc {floor} or newer ({manylinux}).").format(
                           where=ctx.where, release=rel.version, floor=wheel.glibc_floor,
                           manylinux=wheel.manylinux),
                       facts=facts, sources=("pypi-wheel-files",))]
    if have >= floor:
        return [Reason("GLIBC_OK", "info",
                       _("glibc {glibc} on {where} meets the {release} wheel's floor, glibc "
                         "{floor} ({manylinux}).").format(glibc=glibc, where=ctx.where,
                                                         release=rel.version,
                                                         floor=wheel.glibc_floor,
                                                         manylinux=wheel.manylinux),
                       facts=facts, sources=("pypi-wheel-files",))]
    image = rel.image_for(ctx.python or rel.pythons[-1])
    return [Reason(
        "GLIBC_TOO_OLD", "error",
        _("The {release} wheel is {manylinux}: it needs glibc {floor} or newer, and {where} has "
          "glibc {glibc}. pip finds no wheel whose platform tag fits, and the libraries would "
          "not load.").format(release=rel.version, manylinux=wheel.manylinux,
                              floor=wheel.glibc_floor, where=ctx.where, glibc=glibc),
        (_("glibc {glibc} < {floor}.").format(glibc=glibc, floor=wheel.glibc_floor),),
        {**facts, "image": image}, ("pypi-wheel-files", "glibc-issues"),
        (Remedy("container", _("Run TensorFlow {release} inside a container with a newer glibc, "
                               "e.g. its build image {image} (a container brings its own glibc; "
                               "only the kernel is shared)").format(release=rel.version,
                                                                    image=image)),))]


# -- CPU ------------------------------------------------------------------------------------------


def _baseline(wheel: OfficialWheel) -> str:
    return {"avx": "AVX", "armv8-a": "Armv8-A"}.get(wheel.cpu_baseline or "",
                                                    wheel.cpu_baseline or "-")


def _cpu_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel) -> list[Reason]:
    cpu = ctx.machine.cpu
    model = cpu.model or cpu.arch
    baseline = _baseline(wheel)
    facts: dict[str, Any] = {"baseline": wheel.cpu_baseline, "features": list(cpu.features),
                             "model": cpu.model, "release": rel.version}
    sources = ("pypi-wheel-files", "tf-bazelrc-release")
    if wheel.cpu_baseline == "avx":
        if not cpu.features:
            return [Reason("CPU_FEATURES_UNKNOWN", "info",
                           _("The profile of {where} lists no CPU features; the {release} wheel "
                             "needs a CPU with {baseline}.").format(where=ctx.where,
                                                                   release=rel.version,
                                                                   baseline=baseline),
                           facts=facts, sources=sources)]
        if "avx" not in cpu.features:
            changes: dict[str, Any] = {"build.opt_flags": ["-Wno-sign-compare"]}
            fixes = tuple(dataclasses.replace(f, changes={**f.changes, **changes})
                          for f in _build_fixes(ctx, rel, _(
                              "Build TensorFlow {release} from source for this CPU (tfwizard's "
                              "build uses build.opt_flags, never -mavx; keep -march=native out "
                              "of them unless the build runs on this CPU)")))
            return [Reason(
                "CPU_FEATURE_MISSING", "error",
                _("The {release} wheel is compiled for CPUs with {baseline}, and the CPU of "
                  "{where} ({model}) has none: importing TensorFlow stops with \"The TensorFlow "
                  "library was compiled to use AVX instructions, but these aren't available on "
                  "your machine.\"").format(release=rel.version, baseline=baseline,
                                            where=ctx.where, model=model),
                (_("CPU features of {where}: {features}; no avx.").format(
                    where=ctx.where, features=", ".join(cpu.features)),),
                facts, sources + ("tf-import-issues",), fixes)]
    elif wheel.cpu_baseline != "armv8-a":
        return []
    return [Reason("CPU_BASELINE_MET", "info",
                   _("The {release} wheel needs a CPU with {baseline}; the CPU of {where} "
                     "({model}) has it.").format(release=rel.version, baseline=baseline,
                                                 where=ctx.where, model=model),
                   facts=facts, sources=sources)]


# -- NVIDIA: driver and GPUs ------------------------------------------------------------------


def _wheel_cuda(wheel: OfficialWheel) -> str:
    return wheel.build_cuda or wheel.and_cuda_cuda or ""


def _gpu_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel, requirement: str) -> list[Reason]:
    nv = ctx.machine.nvidia
    if nv.status == "mismatch":
        return [Reason(
            "DRIVER_MISMATCH", "error",
            _("The NVIDIA kernel module and driver library on {where} come from different driver "
              "versions (Driver/library version mismatch): no CUDA program runs until the "
              "machine is rebooted or one driver version is reinstalled.").format(
                where=ctx.where),
            facts={"status": nv.status}, sources=("nvml-api", "dso-mismatch-issues"),
            fixes=(Remedy("reboot", _("Reboot (or reinstall one driver version) so the kernel "
                                      "module and the driver library match")),))]
    gpus = [g for g in nv.gpus if g.error is None and g.compute_capability]
    if not gpus:
        cpu_req = f"tensorflow-cpu=={wheel.release}"
        cpu_wheel = Remedy("cpu-wheel", _("Install the CPU wheel instead: {requirement}").format(
            requirement=cpu_req), requirement=cpu_req)
        if not ctx.on_target:  # the GPU machine may be another one: that is not known
            return [Reason(
                "NO_GPU_ON_HOST", "warning",
                _("No NVIDIA GPU is usable on this machine ({detail}). If TensorFlow will run "
                  "on another machine, give its profile as the target; here the GPU wheel would "
                  "run on the CPU only.").format(detail=nv.message or nv.status),
                facts={"status": nv.status}, sources=("nvml-api",),
                fixes=(_profile_remedy(), cpu_wheel))]
        return [Reason(
            "NO_NVIDIA_GPU", "error",
            _("No NVIDIA GPU is usable on the target machine ({detail}): the GPU wheel would "
              "run on the CPU only.").format(detail=nv.message or nv.status),
            facts={"status": nv.status}, sources=("nvml-api",), fixes=(cpu_wheel,))]
    out: list[Reason] = []
    for gpu in nv.gpus:
        if gpu.error is not None:
            out.append(Reason("GPU_SKIPPED", "info",
                              _("GPU {index} reports an error ({error}) and is left out.").format(
                                  index=gpu.index, error=gpu.error),
                              facts={"gpu": gpu.index, "error": gpu.error},
                              sources=("nvml-api",)))
    out += _driver_findings(ctx, rel, wheel, [g.compute_capability or "" for g in gpus])
    for gpu in gpus:
        out.append(_gpu_coverage(ctx, rel, wheel, gpu, [g.compute_capability or "" for g in gpus]))
    if not wheel.and_cuda:
        out.append(Reason(
            "LOCAL_CUDA_NEEDED", "warning",
            _("The {release} wheel has no [and-cuda] extra (it came with 2.14): {where} needs CUDA "
              "{cuda} and cuDNN {cudnn} installed and on the library path.").format(
                release=rel.version, where=ctx.where, cuda=_wheel_cuda(wheel),
                cudnn=wheel.build_cudnn or "-"),
            facts={"cuda": _wheel_cuda(wheel), "cudnn": wheel.build_cudnn,
                   "release": rel.version},
            sources=("pypi-wheel-files", "tf-pip-md")))
    return out


def _driver_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel,
                     ccs: list[str]) -> list[Reason]:
    nv = ctx.machine.nvidia
    cuda = _wheel_cuda(wheel)
    cuda_mm = compat.major_minor(cuda)
    if cuda_mm is None:
        return []
    floor_cuda = f"{cuda_mm[0]}.0"
    meets = compat.driver_meets(ctx.machine, wheel.driver_min, floor_cuda)
    facts: dict[str, Any] = {"driver": nv.driver_version, "supported": nv.cuda_driver_version,
                             "cuda": cuda, "needed": wheel.driver_min,
                             "full": wheel.driver_full, "release": rel.version}
    sources = ("cuda-compat", "cuda-release-notes", "pypi-wheel-files")
    if meets is None:
        return []
    needed = compat.needed_text(ctx.machine, wheel.driver_min, floor_cuda)
    if not meets:
        full = compat.needed_text(ctx.machine, wheel.driver_full, f"{cuda_mm[0]}.{cuda_mm[1]}")
        fixes: list[Remedy] = [Remedy("driver", _("Update the NVIDIA driver to {needed} or newer "
                                                 "({full} or newer also lets XLA compile in "
                                                 "parallel)").format(needed=needed, full=full))]
        build, evidence = _cuda_build(ctx, rel, ccs, purpose="driver")
        if build is not None:
            fixes.append(build)
        return [Reason(
            "DRIVER_TOO_OLD", "error",
            _("The NVIDIA driver on {where} is {driver} (CUDA up to {supported}); the {release} "
              "wheel's CUDA {cuda} needs {needed} or newer. TensorFlow would find no usable GPU; "
              "a newer libcuda loaded over the old kernel module (from a CUDA toolkit or a "
              "cuda-compat package) shows as \"kernel version ... does not match DSO "
              "version\".").format(where=ctx.where, driver=nv.driver_version or "-",
                                   supported=nv.cuda_driver_version or "-",
                                   release=rel.version, cuda=cuda, needed=needed),
            (_("Driver {driver} < {needed} (CUDA {major}.x minor-version compatibility).").format(
                driver=nv.driver_version or "-", needed=needed, major=cuda_mm[0]),
             *evidence),
            facts, sources + ("dso-mismatch-issues",), tuple(fixes))]
    out = [Reason("DRIVER_OK", "info",
                  _("The NVIDIA driver on {where}, {driver}, runs the {release} wheel's CUDA "
                    "{cuda} (it needs {needed} or newer).").format(
                      where=ctx.where, driver=nv.driver_version or "-", release=rel.version,
                      cuda=cuda, needed=needed),
                  facts=facts, sources=sources)]
    full_cuda = f"{cuda_mm[0]}.{cuda_mm[1]}"
    if wheel.driver_full and compat.driver_meets(ctx.machine, wheel.driver_full, full_cuda) is False:
        full = compat.needed_text(ctx.machine, wheel.driver_full, full_cuda)
        out.append(Reason(
            "DRIVER_OLDER_THAN_PTXAS", "info",
            _("The NVIDIA driver on {where} ({driver}) is older than CUDA {cuda}'s ({full}): the "
              "wheel runs, but XLA disables parallel compilation (\"driver is older than the "
              "ptxas version\"); {full} or newer avoids that.").format(
                where=ctx.where, driver=nv.driver_version or "-", cuda=cuda, full=full),
            facts=facts, sources=("xla-ptxas-issues", "cuda-release-notes")))
    return out


def _jit_cache(kb: KnowledgeBase) -> dict[str, Any]:
    return dict(kb.raw.get("advise", {}).get("jit_cache", {}))


def _jit_failure(kb: KnowledgeBase, cc: str, rel: Release) -> dict[str, Any] | None:
    from packaging.specifiers import SpecifierSet

    for entry in kb.raw.get("advise", {}).get("jit_failure", []):
        if cc in entry.get("ccs", []) and Version(rel.version) in SpecifierSet(
                entry.get("releases", "")):
            return dict(entry)
    return None


def _gpu_coverage(ctx: _Ctx, rel: Release, wheel: OfficialWheel, gpu: NvidiaGpu,
                  ccs: list[str]) -> Reason:
    cc = gpu.compute_capability or ""
    name = gpu.name or f"CC {cc}"
    targets = [t for t in (ccmod.parse_target(x) for x in wheel.sass + wheel.ptx) if t]
    cov = ccmod.coverage(targets, cc, tegra_mismatch=ctx.kb.is_tegra(cc))
    sass = ", ".join(wheel.sass) or "-"
    ptx = ", ".join(wheel.ptx) or "-"
    seen = _("GPU {index} ({name}) is CC {cc}; the {release} wheel carries SASS {sass} and PTX "
             "{ptx}.").format(index=gpu.index, name=name, cc=cc, release=rel.version, sass=sass,
                              ptx=ptx)
    facts: dict[str, Any] = {"gpu": gpu.index, "name": gpu.name, "cc": cc,
                             "sass": list(wheel.sass), "ptx": list(wheel.ptx),
                             "release": rel.version}
    sources = ("pypi-wheel-files", "cuda-pg-compat")
    if cov.cubin is not None:
        evidence = [seen]
        if cov.cubin.cc != cc:
            evidence.append(_("A cubin for sm_{major}{minor} runs on GPUs of major {major} with "
                              "minor {minor} or higher.").format(major=cov.cubin.major,
                                                                 minor=cov.cubin.minor))
        if cov.cubin.token in wheel.sass_partial and cov.ptx is not None:
            return _partly_covered(ctx, rel, wheel, gpu, cov, evidence,
                                   {**facts, "cubin": cov.cubin.token}, ccs)
        return Reason("GPU_COVERED", "info",
                      _("GPU {index} ({name}) runs the wheel's {cubin} cubin.").format(
                          index=gpu.index, name=name, cubin=cov.cubin.token),
                      tuple(evidence), {**facts, "cubin": cov.cubin.token}, sources)
    build, build_evidence = _cuda_build(ctx, rel, ccs, purpose="gpu")
    build_fixes = (build,) if build is not None else ()
    if cov.ptx is None:
        parsed = ccmod.parse_cc(cc) or (0, 0)
        return Reason(
            "GPU_NOT_COVERED", "error",
            _("GPU {index} ({name}) cannot run the {release} wheel: it has no cubin of major "
              "{major} with a minor of {minor} or lower, and no PTX of CC {cc} or lower; "
              "TensorFlow would ignore this GPU.").format(index=gpu.index, name=name,
                                                          release=rel.version,
                                                          major=parsed[0], minor=parsed[1],
                                                          cc=cc),
            (seen, *build_evidence), facts, sources + ("tf-gpu-device",), build_fixes)
    cuda = _wheel_cuda(wheel)
    cuda_mm = compat.major_minor(cuda) or (0, 0)
    jit_cuda = f"{cuda_mm[0]}.{cuda_mm[1]}"
    facts.update({"jit_from": cov.ptx.token, "driver": ctx.machine.nvidia.driver_version,
                  "driver_ptx": wheel.driver_ptx, "ptx_cuda": cuda})
    needed = compat.needed_text(ctx.machine, wheel.driver_ptx, jit_cuda)
    if compat.driver_meets(ctx.machine, wheel.driver_ptx, jit_cuda) is False:
        return Reason(
            "GPU_PTX_DRIVER", "error",
            _("GPU {index} ({name}) has no cubin in the {release} wheel and must JIT-compile its "
              "PTX {ptx}, which needs a driver of CUDA {cuda} or newer ({needed}); the driver on "
              "{where} is {driver}.").format(index=gpu.index, name=name, release=rel.version,
                                             ptx=cov.ptx.token, cuda=cuda, needed=needed,
                                             where=ctx.where,
                                             driver=ctx.machine.nvidia.driver_version or "-"),
            (seen, *build_evidence), facts, sources + ("cuda-compat", "cuda-release-notes"),
            (Remedy("driver", _("Update the NVIDIA driver to {needed} or newer").format(
                needed=needed)),) + build_fixes)
    cache = _jit_cache(ctx.kb)
    cache_mib = int(cache.get("default_bytes", 268435456)) // 2**20
    max_bytes = int(cache.get("max_bytes", 4294967296))
    minutes = int(cache.get("tf_warning_minutes", 30))
    path = str(cache.get("path_linux", "~/.nv/ComputeCache"))
    facts.update({"cache_path": path, "cache_default_bytes": cache_mib * 2**20,
                  "cache_max_bytes": max_bytes, "jit_minutes": minutes})
    evidence = [seen, _("PTX {ptx} can be JIT-compiled for CC {cc} (PTX runs on any GPU of its "
                        "CC or higher) by a driver of CUDA {cuda} or newer: the driver is "
                        "{driver}, it needs {needed}.").format(
        ptx=cov.ptx.token, cc=cc, cuda=cuda, driver=ctx.machine.nvidia.driver_version or "-",
        needed=needed)]
    arch = ctx.kb.arch(_sm(cc))
    cuda_v = compat.as_version(cuda)
    if arch is not None and cuda_v is not None and cuda_v < Version(arch.min_cuda):
        evidence.append(_("XLA compiles its own kernels with the ptxas of CUDA {cuda} (from "
                          "[and-cuda]), which cannot target sm_{sm} (that needs CUDA {needed}): "
                          "it falls back to the driver's compiler.").format(
            cuda=cuda, sm=_sm(cc), needed=arch.min_cuda))
    cost = _("The first run compiles every kernel (TensorFlow warns: {minutes} minutes or "
             "longer), cached in {path} up to CUDA_CACHE_MAXSIZE (default {mib} MiB, at most "
             "{max_mib} MiB); kernels that do not fit, and all of them after a driver update, "
             "are compiled again.").format(minutes=minutes, path=path, mib=cache_mib,
                                          max_mib=max_bytes // 2**20)
    env = Remedy("env", _("Set CUDA_CACHE_MAXSIZE={bytes} (the most the driver allows) so the JIT "
                          "cache keeps every compiled kernel").format(bytes=max_bytes))
    jit_sources = sources + ("cuda-env-vars", "tf-gpu-device", "xla-ptxas-issues")
    failure = _jit_failure(ctx.kb, cc, rel)
    if failure is not None:
        facts["reported_failing"] = True
        facts["reported_error"] = failure.get("error")
        return Reason(
            "GPU_PTX_JIT_FAILS", "error",
            _("GPU {index} ({name}) has no cubin in the {release} wheel. JIT-compiling its PTX "
              "{ptx} is possible by NVIDIA's rules, but reported to fail on CC {cc} with these "
              "wheels ({error} from TensorFlow's generated kernels). {cost}").format(
                index=gpu.index, name=name, release=rel.version, ptx=cov.ptx.token, cc=cc,
                error=failure.get("error", "-"), cost=cost),
            (*evidence, *build_evidence), facts,
            jit_sources + tuple(failure.get("sources", ())), build_fixes)
    return Reason(
        "GPU_PTX_JIT", "warning",
        _("GPU {index} ({name}) has no cubin in the {release} wheel and runs only by "
          "JIT-compiling its PTX {ptx}. {cost}").format(index=gpu.index, name=name,
                                                       release=rel.version, ptx=cov.ptx.token,
                                                       cost=cost),
        (*evidence, *build_evidence), facts, jit_sources, build_fixes + (env,))


def _partly_covered(ctx: _Ctx, rel: Release, wheel: OfficialWheel, gpu: NvidiaGpu,
                    cov: ccmod.Coverage, evidence: list[str], facts: dict[str, Any],
                    ccs: list[str]) -> Reason:
    """A GPU whose cubin only TF's hand-written kernels carry: the MLIR-generated kernels
    JIT-compile the PTX on first use, which needs a driver as new as the wheel's CUDA."""
    assert cov.cubin is not None and cov.ptx is not None
    name = gpu.name or f"CC {gpu.compute_capability}"
    cuda = _wheel_cuda(wheel)
    cuda_mm = compat.major_minor(cuda) or (0, 0)
    jit_cuda = f"{cuda_mm[0]}.{cuda_mm[1]}"
    needed = compat.needed_text(ctx.machine, wheel.driver_ptx, jit_cuda)
    path = str(_jit_cache(ctx.kb).get("path_linux", "~/.nv/ComputeCache"))
    facts = {**facts, "generated_kernels_jit_from": cov.ptx.token, "driver_ptx": wheel.driver_ptx,
             "driver": ctx.machine.nvidia.driver_version, "ptx_cuda": cuda}
    evidence.append(_("TensorFlow's hand-written kernels carry {cubin} cubins; its MLIR-generated "
                      "kernels carry only PTX {ptx} (tf-wheel-fatbins).").format(
        cubin=cov.cubin.token, ptx=cov.ptx.token))
    sources = ("pypi-wheel-files", "tf-wheel-fatbins", "cuda-pg-compat", "cuda-compat")
    if compat.driver_meets(ctx.machine, wheel.driver_ptx, jit_cuda) is False:
        build, build_evidence = _cuda_build(ctx, rel, ccs, purpose="gpu")
        return Reason(
            "GPU_PTX_DRIVER", "error",
            _("GPU {index} ({name}) runs the {release} wheel's {cubin} cubins, but TensorFlow's "
              "generated kernels must JIT-compile PTX {ptx}, which needs a driver of CUDA {cuda} "
              "or newer ({needed}); the driver on {where} is {driver}.").format(
                index=gpu.index, name=name, release=rel.version, cubin=cov.cubin.token,
                ptx=cov.ptx.token, cuda=cuda, needed=needed, where=ctx.where,
                driver=ctx.machine.nvidia.driver_version or "-"),
            (*evidence, *build_evidence), facts, sources + ("cuda-release-notes",),
            (Remedy("driver", _("Update the NVIDIA driver to {needed} or newer").format(
                needed=needed)),) + ((build,) if build is not None else ()))
    return Reason(
        "GPU_COVERED", "info",
        _("GPU {index} ({name}) runs the wheel's {cubin} cubins; TensorFlow's generated kernels "
          "are JIT-compiled from PTX {ptx} on first use (a one-time cost per kernel, kept in "
          "{path}; it needs a driver of CUDA {cuda} or newer, {needed}).").format(
            index=gpu.index, name=name, cubin=cov.cubin.token, ptx=cov.ptx.token, path=path,
            cuda=cuda, needed=needed),
        tuple(evidence), facts, sources)


def _sm(cc: str) -> int:
    parsed = ccmod.parse_cc(cc)
    return parsed[0] * 10 + parsed[1] if parsed else 0


# -- a CUDA build that serves the GPUs ----------------------------------------------------------


def _cuda_build(ctx: _Ctx, rel: Release, ccs: list[str],
                purpose: str) -> tuple[Remedy | None, list[str]]:
    """A source build with a hermetic CUDA that compiles every GPU of the machine and that its
    driver runs: `rel` if its list has one, else the nearest newer release, else an older one;
    of those, the first whose clang (the hermetic LLVM, or the image's) targets every GPU,
    else the first that needs nvcc.

    Returns the remedy (None when no release can) and the evidence of the search.
    """
    kb = ctx.kb
    archs = {}
    for cc in ccs:
        sm = _sm(cc)
        arch = kb.arch(sm)
        if arch is None:
            return None, [_("tfwizard does not know which CUDA compiles sm_{sm}.").format(sm=sm)]
        archs[sm] = arch
    releases = list(kb.releases)
    index = releases.index(rel)
    order = [rel] + releases[index + 1:] + list(reversed(releases[:index]))
    py = compat.as_version(ctx.python)
    evidence: list[str] = []
    with_nvcc: tuple[Remedy, list[str]] | None = None
    for cand in order:
        redist = kb.redist.get(cand.cuda_list or "")
        if not cand.hermetic_cuda or redist is None:
            if cand is rel:
                evidence.append(_("TensorFlow {release} builds with its build image's CUDA "
                                  "{cuda}, not a hermetic CUDA of your choice.").format(
                    release=rel.version, cuda=rel.tested_cuda))
            continue
        if py is not None and py not in cand.python:
            continue
        chosen = _pick_cuda(ctx, redist.cuda, redist.cuda_without_nccl, archs)
        if chosen is None:
            if cand is rel:
                evidence += _why_no_cuda(ctx, rel, redist.cuda, archs)
            continue
        remedy, found = _build_remedy(ctx, cand, rel, chosen, redist.cudnn, ccs, archs, purpose)
        if remedy.changes["cuda.compiler"] == "clang":
            return remedy, evidence + found
        with_nvcc = with_nvcc or (remedy, evidence + found)
    if with_nvcc is not None:
        return with_nvcc
    evidence.append(_("No release's hermetic CUDA list has a CUDA that compiles {targets} and "
                      "that the driver runs.").format(targets=", ".join(ccmod.auto_targets(ccs))))
    return None, evidence


def _build_remedy(ctx: _Ctx, cand: Release, rel: Release, cuda: str, cudnns: tuple[str, ...],
                  ccs: list[str], archs: dict[int, Any], purpose: str) -> tuple[Remedy, list[str]]:
    """The build of `cand` with hermetic CUDA `cuda` for the GPUs, its compiler chosen by
    what each clang can target; and what that choice rests on."""
    need = max(a.min_clang for a in archs.values())
    sm = max(archs, key=lambda s: archs[s].min_clang)
    evidence: list[str] = []
    changes: dict[str, Any] = {"tensorflow.version": cand.version, "backend.kind": "cuda",
                               "cuda.version": cuda,
                               "cuda.compute_capabilities": ccmod.auto_targets(ccs)}
    if has_hermetic_cc(cand):
        llvm = llvm_for(cand, need)
        compiler = "clang" if llvm is not None else "nvcc"
        if llvm is not None and int(llvm) != llvm_default(cand):
            changes["toolchain.clang"] = llvm
            evidence.append(_("TensorFlow {release} compiles with its hermetic LLVM, {default} by "
                              "default; LLVM {llvm} (--repo_env=LLVM_VERSION={llvm}) targets "
                              "sm_{sm}, which needs clang {needed}.").format(
                release=cand.version, default=llvm_default(cand), llvm=llvm, sm=sm, needed=need))
        elif llvm is None:
            evidence.append(_("No LLVM TensorFlow {release}'s hermetic toolchain offers ({choices}) "
                              "targets sm_{sm} (that needs clang {needed}): the build compiles "
                              "CUDA with nvcc.").format(release=cand.version,
                                                        choices=", ".join(llvm_choices(cand)),
                                                        sm=sm, needed=need))
    else:
        clang = cand.default_clang
        compiler = "clang" if clang is not None and clang >= need else "nvcc"
        if compiler == "nvcc":
            evidence.append(_("clang {clang}, the build image's, cannot target sm_{sm} (that needs "
                              "clang {needed}): the build compiles CUDA with nvcc, which "
                              "TensorFlow supports but tests less.").format(
                clang=clang or "-", sm=sm, needed=need))
    changes["cuda.compiler"] = compiler
    if cand is not rel:
        evidence.append(_("TensorFlow {release}'s hermetic CUDA list has CUDA {cuda}.").format(
            release=cand.version, cuda=cuda))
    if purpose == "driver" and Version(cuda).major < 12:
        evidence.append(_("TensorFlow's own builds of {release} use CUDA 12: a build with "
                          "CUDA {cuda} is in its hermetic list but untested by TensorFlow.")
                        .format(release=cand.version, cuda=cuda))
    cudnn = _pick_cudnn(ctx.kb, cudnns, cuda, ccs)
    if cudnn:
        changes["cuda.cudnn"] = cudnn
    if ctx.python:
        changes["python.version"] = ctx.python
    label = _("Build TensorFlow {release} with hermetic CUDA {cuda} for {targets} "
              "({compiler})").format(release=cand.version, cuda=cuda,
                                    targets=", ".join(changes["cuda.compute_capabilities"]),
                                    compiler=compiler)
    return Remedy("build", label, changes), evidence


def _pick_cuda(ctx: _Ctx, versions: tuple[str, ...], without_nccl: tuple[str, ...],
               archs: dict[int, Any]) -> str | None:
    """The newest listed CUDA that compiles every arch and runs on the driver, preferring one
    whose own driver the machine has (full compatibility: no XLA slow path)."""
    fits = []
    for text in sorted(versions, key=Version, reverse=True):
        v = Version(text)
        if text in without_nccl:
            continue
        if not all(_compiles(v, a) for a in archs.values()):
            continue
        if compat.runs_major(ctx.kb, ctx.machine, text) is False:
            continue
        fits.append(text)
    if not fits:
        return None
    for text in fits:
        driver = compat.driver_for_toolkit(ctx.kb, text)
        if compat.driver_meets(ctx.machine, driver, text) is not False:
            return text
    return fits[0]


def _compiles(v: Version, arch: Any) -> bool:
    """Whether CUDA `v` compiles for `arch` (cuda.toml: min_cuda, and max_cuda's x.y)."""
    if v < Version(arch.min_cuda):
        return False
    last = compat.major_minor(arch.max_cuda) if arch.max_cuda else None
    return last is None or (v.major, v.minor) <= last


def _why_no_cuda(ctx: _Ctx, rel: Release, versions: tuple[str, ...],
                 archs: dict[int, Any]) -> list[str]:
    listed = sorted(versions, key=Version)
    out = []
    for sm, arch in sorted(archs.items()):
        if Version(listed[-1]) < Version(arch.min_cuda):
            out.append(_("sm_{sm} needs CUDA {needed} or newer to compile; TensorFlow {release}'s "
                         "hermetic CUDA list ends at {last}.").format(
                sm=sm, needed=arch.min_cuda, release=rel.version, last=listed[-1]))
    if not out:
        driver = ctx.machine.nvidia.driver_version or "-"
        out.append(_("TensorFlow {release}'s hermetic CUDA list ({first} to {last}) has no CUDA "
                     "that compiles these GPUs and that driver {driver} runs.").format(
            release=rel.version, first=listed[0], last=listed[-1], driver=driver))
    return out


def _pick_cudnn(kb: KnowledgeBase, versions: tuple[str, ...], cuda: str,
                ccs: list[str]) -> str | None:
    """The newest listed cuDNN with a build for the CUDA major that supports every GPU."""
    major = Version(cuda).major
    lowest = min((Version(c) for c in ccs if compat.as_version(c)), default=None)
    for text in sorted(versions, key=Version, reverse=True):
        row = kb.cudnn_compat(text)
        if row is None or major not in row.cuda_majors:
            continue
        if lowest is not None and lowest < Version(row.min_cc):
            continue
        return text
    return None


# -- intent: your own changes, custom options --------------------------------------------------

#: recipe keys that change what TensorFlow is, and so need a build whatever the machine
_OPTION_KEYS = ("build.opt_flags", "build.bazel_flags", "build.xla", "build.system_libs")


def _intent_findings(ctx: _Ctx, intent: Intent, rel: Release,
                     recipe: Recipe | None) -> list[Reason]:
    out: list[Reason] = []
    fixes = _build_fixes(ctx, rel, _("Build TensorFlow {release} from source"))
    source = ""
    if recipe is not None:
        if recipe.tensorflow.source_dir:
            source = recipe.tensorflow.source_dir
        elif recipe.tensorflow.ref and recipe.tensorflow.ref != rel.git_tag:
            source = recipe.tensorflow.ref
    if intent is Intent.CHANGES or source:
        message = _("The recipe builds {source}, not the TensorFlow {release} release: no "
                    "official wheel has that code, so a source build is needed.").format(
            source=source, release=rel.version) if source else \
            _("You want TensorFlow with your own changes: no official wheel has them, so a "
              "source build is needed.")
        out.append(Reason("LOCAL_CHANGES", "error", message,
                          facts={"source": source or None}, sources=("tf-source-md",),
                          fixes=fixes))
    if recipe is not None:
        from .recipe import Recipe as _Recipe

        default = _Recipe()
        custom = {key: recipe.get(key) for key in _OPTION_KEYS
                  if recipe.get(key) != default.get(key)}
        if custom:
            out.append(Reason(
                "CUSTOM_OPTIONS", "error",
                _("The recipe sets build options the official wheel was not built with, so a "
                  "source build is needed."),
                tuple(_("{key} = {value} (tfwizard's default: {default})").format(
                    key=key, value=value, default=default.get(key))
                    for key, value in custom.items()),
                {"options": {k: v for k, v in custom.items()}}, ("tf-source-md",), fixes))
    return out


# -- the verdict --------------------------------------------------------------------------------


def _classify(findings: list[Reason] | tuple[Reason, ...]) -> str:
    if any(f.code in UNKNOWN_CODES for f in findings):
        return "unknown"
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        kinds = [{r.kind for r in f.fixes} for f in errors]
        if any(not (k & RESOLVING_KINDS) and "build" not in k for k in kinds):
            return "unsupported"
        if any(not (k & RESOLVING_KINDS) for k in kinds):
            return "build"
        return "fixable"
    if any(f.severity == "warning" for f in findings):
        return "official-with-caveats"
    return "official"


def _advice(ctx: _Ctx, intent: Intent, rel: Release, choice: str, findings: list[Reason],
            machine_findings: list[Reason], wheel: OfficialWheel | None,
            requirement: str | None, estimate: BuildEstimate) -> Advice:
    verdict = _classify(findings)
    machine_verdict = _classify(machine_findings)
    order = {"error": 0, "warning": 1, "info": 2}
    findings = sorted(findings, key=lambda f: order[f.severity])
    return Advice(
        verdict=verdict,
        summary=_summary(ctx, rel, verdict, machine_verdict, requirement, estimate, findings),
        intent=intent, backend=ctx.backend, release=rel.version, release_choice=choice,
        arch=ctx.arch, python=ctx.python, package=wheel.package if wheel else None,
        requirement=requirement,
        install=_install_argv(ctx, requirement) if machine_verdict in (
            "official", "official-with-caveats") else (),
        machine_verdict=machine_verdict, findings=tuple(findings), estimate=estimate,
        on_target=ctx.on_target)


def _summary(ctx: _Ctx, rel: Release, verdict: str, machine_verdict: str,
             requirement: str | None, estimate: BuildEstimate, findings: list[Reason]) -> str:
    wheel = _wheel_label(requirement, rel)
    fmt = {"wheel": wheel, "where": ctx.where, "build_time": estimate.text()}
    if verdict == "official":
        return _("The official {wheel} wheel runs on {where}. Installing it takes minutes; no "
                 "source build is needed.").format(**fmt)
    if verdict == "official-with-caveats":
        if not any(r.kind == "build" for f in findings if f.severity != "info"
                   for r in f.fixes):
            return _("The official {wheel} wheel runs on {where}, with the caveats below. "
                     "Installing it takes minutes.").format(**fmt)
        return _("The official {wheel} wheel runs on {where}, with the caveats below. Installing "
                 "it takes minutes; a source build {build_time}.").format(**fmt)
    if verdict == "fixable":
        return _("The official {wheel} wheel does not run on {where} as it is; each reason below "
                 "says what to change so that an official wheel does, without a source "
                 "build.").format(**fmt)
    if verdict == "unknown":
        return _("tfwizard cannot tell whether an official wheel serves {where} (see "
                 "below).").format(**fmt)
    if verdict == "unsupported":
        return _("Neither the official {wheel} wheel nor a source build with tfwizard serves "
                 "{where} (reasons below).").format(**fmt)
    if requirement is None:
        return _("A source build is needed: TensorFlow {release} has no official wheel for "
                 "{where}. It takes {build_time} here.").format(release=rel.version, **fmt)
    intent_codes = {"LOCAL_CHANGES", "CUSTOM_OPTIONS"}
    if any(f.code in intent_codes and f.severity == "error" for f in findings):
        text = _("A source build is needed: what you want is not in any official wheel. It "
                 "takes {build_time} here.").format(**fmt)
        if machine_verdict in ("official", "official-with-caveats"):
            text += " " + _("Otherwise the official {wheel} wheel would serve {where}.").format(
                **fmt)
        return text
    return _("A source build is needed: the official {wheel} wheel cannot serve {where} "
             "(reasons below). It takes {build_time} here.").format(**fmt)
