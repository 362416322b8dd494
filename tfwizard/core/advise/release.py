"""Which release to advise on, what stops the advice before any wheel is looked at,
and one release assessed on the machine."""

from __future__ import annotations

import dataclasses

from ..findings import Finding, Remedy
from ..i18n import _
from ..knowledge import OfficialWheel, Release
from .context import (
    _build_fixes,
    _classify,
    _Ctx,
    _package,
    _profile_remedy,
    _published_releases,
    _wheel_and_requirement,
    _wheel_label,
)
from .gpu import _gpu_findings
from .types import RELEASE_DEPENDENT, Intent
from .wheel import _baseline, _cpu_findings, _glibc_findings, _python_findings

# -- choosing the release -----------------------------------------------------------------------


def _choose_release(ctx: _Ctx, given: Release | None) -> tuple[Release, str, list[Finding]]:
    if given is not None:
        return given, "given", _assess(ctx, given)
    with_caveats: tuple[Release, list[Finding]] | None = None
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


def _release_chosen(ctx: _Ctx, rel: Release, choice: str) -> Finding:
    if choice == "newest-serving":
        text = _("No release was given: TensorFlow {release} is the newest release whose "
                 "official wheel serves {where}.")
    elif choice == "newest-with-caveats":
        text = _("No release was given: TensorFlow {release} is the newest release whose "
                 "official wheel runs on {where}, with the caveats below; none runs without.")
    else:
        text = _("No release was given, and no release's official wheel serves {where}: the "
                 "newest, TensorFlow {release}, is assessed.")
    return Finding("RELEASE_CHOSEN", "info", text.format(release=rel.version, where=ctx.where),
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


def _with_release_alternative(ctx: _Ctx, rel: Release, findings: list[Finding]) -> list[Finding]:
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
            f = dataclasses.replace(f, remedies=f.remedies + (remedy,), evidence=f.evidence + extra,
                                    facts={**f.facts, "alternative": other.version})
        out.append(f)
    return out


# -- what stops the advice before any wheel is looked at ----------------------------------------


def _scope_findings(ctx: _Ctx, intent: Intent) -> list[Finding]:
    m = ctx.machine
    if intent is Intent.OTHER_MACHINE and not ctx.on_target:
        return [Finding(
            "NO_TARGET_PROFILE", "warning",
            _("A wheel for another machine: tfwizard knows nothing about that machine yet, so "
              "it cannot tell whether an official wheel serves it."),
            sources=("tfwizard-testing",),
            remedies=(_profile_remedy(),))]
    if m.os.system != "linux":
        return [Finding(
            "OS_NOT_LINUX", "warning",
            _("This advice covers TensorFlow's Linux wheels only; {where} runs {system} (on "
              "Windows, WSL2 counts as Linux).").format(where=ctx.where, system=m.os.system),
            facts={"system": m.os.system}, sources=("tf-pip-md",))]
    if ctx.backend == "rocm":
        return [Finding(
            "ROCM_NOT_ASSESSED", "warning",
            _("TensorFlow publishes no ROCm wheel (AMD publishes ROCm builds of its own, which "
              "tfwizard does not assess); a source build with backend rocm is what tfwizard "
              "can do for {where}.").format(where=ctx.where),
            facts={"gpus": m.amd_targets()}, sources=("tf-pip-md", "rocm-matrix"),
            remedies=(Remedy("build", _("Build TensorFlow from source for ROCm"),
                          {"backend.kind": "rocm", "rocm.amdgpu_targets": ["auto"]}),))]
    return []


def _wheel_needs(ctx: _Ctx, rel: Release, wheel: OfficialWheel, requirement: str) -> Finding:
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
    return Finding("WHEEL_NEEDS", "info",
                  _("The official {wheel} wheel runs on a Linux {arch} machine with all of "
                    "these:").format(wheel=_wheel_label(requirement, rel), arch=ctx.arch),
                  evidence=tuple(evidence),
                  facts={"release": rel.version, "pythons": list(wheel.pythons),
                   "glibc_floor": wheel.glibc_floor, "cpu_baseline": wheel.cpu_baseline,
                   "sass": list(wheel.sass), "ptx": list(wheel.ptx),
                   "driver_min": wheel.driver_min},
                  sources=tuple(wheel.sources))


# -- one release on the machine ---------------------------------------------------------------


def _assess(ctx: _Ctx, rel: Release) -> list[Finding]:
    """Every finding about `rel`'s official wheel on the machine (no intent, no alternatives)."""
    if ctx.arch not in ("x86_64", "aarch64"):
        return [Finding("ARCH_NO_WHEEL", "error",
                       _("TensorFlow publishes Linux wheels for x86_64 and aarch64 only; {where} "
                         "is {arch}.").format(where=ctx.where, arch=ctx.arch),
                       facts={"arch": ctx.arch}, sources=("pypi-wheel-files",))]
    if rel.is_master:
        return [Finding("NO_OFFICIAL_WHEEL", "error",
                       _("TensorFlow master has no official release wheel (tf-nightly builds "
                         "are not assessed here): only a source build makes one."),
                       facts={"release": rel.version}, sources=("pypi-wheel-files",),
                       remedies=_build_fixes(ctx, rel, _("Build TensorFlow {release} from source")))]
    wheel, requirement = _wheel_and_requirement(ctx, rel)
    if wheel is None:
        return [Finding("NO_OFFICIAL_WHEEL", "error",
                       _("TensorFlow {release} publishes no {package} wheel for {arch}.").format(
                           release=rel.version, package=_package(ctx), arch=ctx.arch),
                       facts={"release": rel.version, "arch": ctx.arch},
                       sources=("pypi-wheel-files",),
                       remedies=_build_fixes(ctx, rel, _("Build TensorFlow {release} from source")))]
    out: list[Finding] = []
    if ctx.backend == "cuda" and wheel.kind != "gpu":
        cpu_req = f"tensorflow=={wheel.release}" if ctx.arch == "aarch64" else \
            f"tensorflow-cpu=={wheel.release}"
        out.append(Finding(
            "NO_GPU_WHEEL_FOR_ARCH", "error",
            _("TensorFlow publishes no CUDA wheel for {arch}: its {arch} wheel runs on the CPU "
              "only.").format(arch=ctx.arch),
            facts={"arch": ctx.arch, "release": rel.version},
            sources=("pypi-wheel-files", "tf-pip-md"),
            remedies=_build_fixes(ctx, rel, _("Build TensorFlow {release} from source for CUDA "
                                           "on {arch}"), arch=ctx.arch)
            + (Remedy("cpu-wheel", _("Install the CPU wheel instead: {requirement}").format(
                requirement=cpu_req), requirement=cpu_req),)))
    out += _python_findings(ctx, rel, wheel)
    out += _glibc_findings(ctx, rel, wheel)
    out += _cpu_findings(ctx, rel, wheel)
    if ctx.backend == "cuda" and wheel.kind == "gpu":
        out += _gpu_findings(ctx, rel, wheel, requirement or "")
    return out


