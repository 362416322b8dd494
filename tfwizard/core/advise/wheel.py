"""The official wheel against the machine: its Python, glibc and CPU baseline."""

from __future__ import annotations

import dataclasses
from typing import Any

from packaging.version import Version

from .. import compat
from ..findings import Finding, Remedy
from ..i18n import _
from ..knowledge import OfficialWheel, Release
from .context import _build_fixes, _Ctx, _package, _published_releases

# -- Python ---------------------------------------------------------------------------------------


def _python_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel) -> list[Finding]:
    published = ", ".join(wheel.pythons)
    py = ctx.python
    facts: dict[str, Any] = {"python": py, "published": list(wheel.pythons),
                             "release": rel.version}
    if py is None:
        return [Finding("PYTHON_UNKNOWN", "info",
                       _("The profile of {where} lists no Python; TensorFlow {release} publishes "
                         "{package} wheels for Python {published}.").format(
                           where=ctx.where, release=rel.version, package=wheel.package,
                           published=published),
                       facts=facts, sources=("pypi-wheel-files",))]
    if py in wheel.pythons:
        return [Finding("PYTHON_PUBLISHED", "info",
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
    return [Finding("PYTHON_NOT_PUBLISHED", "error",
                   _("TensorFlow {release} publishes no {package} wheel for Python {python}, "
                     "the Python of {where}; it publishes Python {published}.").format(
                       release=rel.version, package=wheel.package, python=py, where=ctx.where,
                       published=published),
                   evidence=tuple(evidence), facts=facts, sources=("pypi-wheel-files", "tf-source-md"), remedies=tuple(fixes))]


def _prerelease_with(ctx: _Ctx, python: str) -> dict[str, Any] | None:
    """The newest pre-release (advise.toml) with wheels for `python` that is not a final
    release the knowledge base knows (a pre-release entry in releases.toml still counts), or
    None."""
    known = {r.version for r in _published_releases(ctx.kb)}
    entries = [e for e in ctx.kb.raw.get("advise", {}).get("prerelease", [])
               if python in e.get("pythons", []) and e.get("version") not in known]
    return max(entries, key=lambda e: Version(e["version"]), default=None)


# -- glibc --------------------------------------------------------------------------------------


def _glibc_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel) -> list[Finding]:
    glibc = ctx.machine.os.glibc
    facts = {"glibc": glibc, "floor": wheel.glibc_floor, "manylinux": wheel.manylinux,
             "release": rel.version}
    have, floor = compat.as_version(glibc), compat.as_version(wheel.glibc_floor)
    if have is None or floor is None:
        return [Finding("GLIBC_UNKNOWN", "info",
                       _("The profile of {where} has no glibc version; the {release} wheel needs "
                         "glibc {floor} or newer ({manylinux}).").format(
                           where=ctx.where, release=rel.version, floor=wheel.glibc_floor,
                           manylinux=wheel.manylinux),
                       facts=facts, sources=("pypi-wheel-files",))]
    if have >= floor:
        return [Finding("GLIBC_OK", "info",
                       _("glibc {glibc} on {where} meets the {release} wheel's floor, glibc "
                         "{floor} ({manylinux}).").format(glibc=glibc, where=ctx.where,
                                                         release=rel.version,
                                                         floor=wheel.glibc_floor,
                                                         manylinux=wheel.manylinux),
                       facts=facts, sources=("pypi-wheel-files",))]
    image = rel.image_for(ctx.python or rel.pythons[-1])
    return [Finding(
        "GLIBC_TOO_OLD", "error",
        _("The {release} wheel is {manylinux}: it needs glibc {floor} or newer, and {where} has "
          "glibc {glibc}. pip finds no wheel whose platform tag fits, and the libraries would "
          "not load.").format(release=rel.version, manylinux=wheel.manylinux,
                              floor=wheel.glibc_floor, where=ctx.where, glibc=glibc),
        evidence=(_("glibc {glibc} < {floor}.").format(glibc=glibc, floor=wheel.glibc_floor),),
        facts={**facts, "image": image}, sources=("pypi-wheel-files", "glibc-issues"),
        remedies=(Remedy("container", _("Run TensorFlow {release} inside a container with a newer glibc, "
                               "e.g. its build image {image} (a container brings its own glibc; "
                               "only the kernel is shared)").format(release=rel.version,
                                                                    image=image)),))]


# -- CPU ------------------------------------------------------------------------------------------


def _baseline(wheel: OfficialWheel) -> str:
    return {"avx": "AVX", "armv8-a": "Armv8-A"}.get(wheel.cpu_baseline or "",
                                                    wheel.cpu_baseline or "-")


def _cpu_findings(ctx: _Ctx, rel: Release, wheel: OfficialWheel) -> list[Finding]:
    cpu = ctx.machine.cpu
    model = cpu.model or cpu.arch
    baseline = _baseline(wheel)
    facts: dict[str, Any] = {"baseline": wheel.cpu_baseline, "features": list(cpu.features),
                             "model": cpu.model, "release": rel.version}
    sources = ("pypi-wheel-files", "tf-bazelrc-release")
    if wheel.cpu_baseline == "avx":
        if not cpu.features:
            return [Finding("CPU_FEATURES_UNKNOWN", "info",
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
            return [Finding(
                "CPU_FEATURE_MISSING", "error",
                _("The {release} wheel is compiled for CPUs with {baseline}, and the CPU of "
                  "{where} ({model}) has none: importing TensorFlow stops with \"The TensorFlow "
                  "library was compiled to use AVX instructions, but these aren't available on "
                  "your machine.\"").format(release=rel.version, baseline=baseline,
                                            where=ctx.where, model=model),
                evidence=(_("CPU features of {where}: {features}; no avx.").format(
                    where=ctx.where, features=", ".join(cpu.features)),),
                facts=facts, sources=sources + ("tf-import-issues",), remedies=fixes)]
    elif wheel.cpu_baseline != "armv8-a":
        return []
    return [Finding("CPU_BASELINE_MET", "info",
                   _("The {release} wheel needs a CPU with {baseline}; the CPU of {where} "
                     "({model}) has it.").format(release=rel.version, baseline=baseline,
                                                 where=ctx.where, model=model),
                   facts=facts, sources=sources)]


