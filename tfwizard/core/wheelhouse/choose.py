"""Which wheel in a wheelhouse serves a machine, and why each other one does not.

    machine = Machine.of_profile(profile, where=_("this machine"))
    choice = choose(house.files(), house.provenance, machine, kb)
    choice.best             # the Candidate that serves best, or None
    choice.lines()          # the answer as text, every rejected candidate with its reasons

A candidate serves when every check passes:
- the requirement's version, when one is given (`tensorflow==2.21.*`);
- its Python and platform tags: against an interpreter's own tags (install.check_wheel, the
  check `install` makes), else against the profile (its Python, CPU architecture, glibc);
- its backend is the machine's (CUDA where it has NVIDIA GPUs, CPU where it has none);
- CUDA: every GPU covered as SASS or PTX by the wheel's compute capabilities (cc.coverage),
  and a driver new enough for its CUDA: the same major at least (minor-version
  compatibility), and for a GPU it reaches only as PTX the driver its toolkit shipped with
  (KnowledgeBase.driver_for_toolkit: PTX compiles only on that driver or newer);
- ROCm: every AMD GPU's gfx target built;
- the glibc the wheel needs, and the CPU features its compiler flags require;
- its check against its recipe passed when it was built.
The facts come from the wheel's provenance (read from the index without downloading the
wheel), or its version label when that cannot be read (less is known: said as a caveat).
Of the wheels that serve, the best reaches every GPU as SASS, then is the newest release,
then the newest build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .. import cc as ccmod
from .. import compat
from ..host import HostProfile
from ..i18n import _
from ..install.wheelcheck import tag_glibc
from ..knowledge import KnowledgeBase
from .index import IndexFile
from .provenance import Provenance


@dataclass(frozen=True)
class Machine:
    """What a wheel is judged against: a host profile's facts, and an interpreter's tags
    when the wheel goes into a known interpreter."""

    where: str  # "this machine", "the target machine" (words)
    arch: str
    python: str  # "3.11", "" unknown
    glibc: str
    cpu_features: tuple[str, ...]
    gpus: tuple[tuple[str, str], ...]  # (label, compute capability)
    amd: tuple[str, ...]  # gfx targets
    driver: str
    cuda_driver: str  # the newest CUDA the driver supports, "13.0"
    wsl2: bool
    backend: str
    interpreter: Any = None  # install.InterpreterTags of the target interpreter

    @classmethod
    def of_profile(cls, host: HostProfile, *, where: str, python: str | None = None,
                   backend: str | None = None, interpreter: Any = None) -> Machine:
        """The machine a profile describes (the Python: `python`, else the interpreter's,
        else the profile's current one)."""
        gpus = tuple((_("GPU {index} ({name})").format(index=g.index, name=g.name or "?"),
                      g.compute_capability) for g in host.nvidia.gpus
                     if g.compute_capability and not g.error)
        amd = tuple(g.gfx_target for g in host.amd.gpus)
        if python is None and interpreter is not None:
            python = ".".join(interpreter.version.split(".")[:2])
        if python is None:
            current = next((p for p in host.pythons if p.is_current), None) or \
                (host.pythons[0] if host.pythons else None)
            python = ".".join((current.version or "").split(".")[:2]) if current else ""
        return cls(where, host.cpu.arch, python or "", host.os.glibc or "",
                   tuple(host.cpu.features), gpus, amd, host.nvidia.driver_version or "",
                   host.nvidia.cuda_driver_version or "", host.os.wsl2,
                   backend or ("cuda" if gpus else "rocm" if amd else "cpu"), interpreter)


@dataclass(frozen=True)
class Candidate:
    """One wheel of the wheelhouse, judged."""

    file: IndexFile
    provenance: Provenance | None
    serves: bool
    reasons: tuple[str, ...]  # why it does not serve; or, when it serves, what was checked
    caveats: tuple[str, ...] = ()
    ptx_only: bool = False  # some GPU runs it only by JIT-compiling PTX

    def to_dict(self) -> dict[str, Any]:
        """The candidate as JSON data."""
        return {"file": self.file.to_dict(), "serves": self.serves,
                "reasons": list(self.reasons), "caveats": list(self.caveats),
                "ptx_only": self.ptx_only,
                "provenance": self.provenance.to_dict() if self.provenance else None}


@dataclass(frozen=True)
class Choice:
    """The wheelhouse's answer for a machine."""

    wheelhouse: str  # masked
    where: str
    backend: str
    candidates: tuple[Candidate, ...] = field(default_factory=tuple)  # serving ones first

    @property
    def best(self) -> Candidate | None:
        """The wheel that serves best, None when none serves."""
        return next((c for c in self.candidates if c.serves), None)

    @property
    def rejected(self) -> tuple[Candidate, ...]:
        """The wheels that do not serve."""
        return tuple(c for c in self.candidates if not c.serves)

    def summary(self) -> str:
        """One sentence."""
        best = self.best
        if best is not None:
            return _("The wheelhouse has a wheel that serves {where}: {wheel}.").format(
                where=self.where, wheel=best.file.filename)
        if not self.candidates:
            return _("The wheelhouse {url} holds no TensorFlow wheel.").format(
                url=self.wheelhouse)
        return _("No wheel of the wheelhouse serves {where} (wheels judged: {count}).").format(
            count=len(self.candidates), where=self.where)

    def lines(self) -> list[str]:
        """The answer as text: the wheel that serves and why, then every rejected one."""
        out = [_("Wheelhouse {url}: {summary}").format(url=self.wheelhouse,
                                                        summary=self.summary())]
        best = self.best
        if best is not None:
            out += [f"  - {r}" for r in best.reasons]
            out += ["  " + _("caveat: {text}").format(text=c) for c in best.caveats]
        for c in self.candidates:
            if c.serves and c is not best:
                out.append("  " + _("also serves: {wheel}").format(wheel=c.file.filename))
        if self.rejected:
            out.append("  " + _("Rejected ({count}):").format(count=len(self.rejected)))
        for c in self.rejected:
            out.append(f"    {c.file.filename}")
            out += [f"      - {r}" for r in c.reasons]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The choice as JSON data."""
        best = self.best
        return {"wheelhouse": self.wheelhouse, "where": self.where, "backend": self.backend,
                "summary": self.summary(), "serves": best is not None,
                "best": best.to_dict() if best else None,
                "candidates": [c.to_dict() for c in self.candidates]}


ReadProvenance = Callable[[IndexFile], "Provenance | None"]


def choose(files: Sequence[IndexFile], read: ReadProvenance, machine: Machine,
           kb: KnowledgeBase, *, wheelhouse: str = "", specifier: str = "") -> Choice:
    """Judge every wheel for `machine`; the serving ones first, best first (`read` gives
    a wheel's provenance; its label stands in when it gives none)."""
    from .provenance import from_label

    spec = SpecifierSet(specifier) if specifier else None
    judged = []
    for f in files:
        prov = read(f) if _may_serve(f, machine, spec) else None
        judged.append(judge(f, prov or from_label(f.filename), machine, kb, spec))
    serving = sorted((c for c in judged if c.serves), key=_rank, reverse=True)
    return Choice(wheelhouse, machine.where, machine.backend,
                  tuple(serving) + tuple(c for c in judged if not c.serves))


def _may_serve(f: IndexFile, machine: Machine, spec: SpecifierSet | None) -> bool:
    """Worth reading its provenance (a request or two): its version and tags fit."""
    if spec is not None and not spec.contains(f.version, prereleases=True):
        return False
    return not _tag_problems(f, machine)


def _rank(c: Candidate) -> tuple[Any, ...]:
    prov = c.provenance
    return (not c.ptx_only, Version(c.file.version.public), prov.build_date if prov else "",
            -len(c.caveats))


def judge(f: IndexFile, prov: Provenance | None, machine: Machine, kb: KnowledgeBase,
          spec: SpecifierSet | None = None) -> Candidate:
    """One wheel for one machine (see the module's text)."""
    bad: list[str] = []
    if spec is not None and not spec.contains(f.version, prereleases=True):
        bad.append(_("its version {version} is not {spec}").format(version=f.version,
                                                                   spec=spec))
    bad += _tag_problems(f, machine)
    if prov is None:
        bad.append(_("no tfwizard provenance in it and no tfwizard label in its version: not a "
                     "wheel tfwizard published"))
        return Candidate(f, None, False, tuple(bad))
    good: list[str] = []
    caveats: list[str] = []
    if prov.from_label_only:
        caveats.append(_("its provenance could not be read: judged from its version label "
                         "alone (no glibc, CPU or recipe facts)"))
    if prov.wheel_check and not prov.wheel_check.get("ok", True):
        bad.append(_("its build's check against the recipe failed: {summary}").format(
            summary=prov.wheel_check.get("summary", "")))
    ptx_only = False
    if prov.backend != machine.backend:
        bad.append(_("built for {backend}; {where} wants {wanted}").format(
            backend=prov.backend, where=machine.where, wanted=machine.backend))
    elif prov.backend == "cuda":
        ptx_only = _cuda_checks(prov, machine, kb, good, bad, caveats)
    elif prov.backend == "rocm":
        _rocm_checks(prov, machine, good, bad)
    else:
        good.append(_("a CPU build, as {where} wants").format(where=machine.where))
    _glibc_check(prov, machine, good, bad, caveats)
    _cpu_check(prov, machine, good, bad, caveats)
    if not bad:
        good.append(_("tags {tags} fit {where}").format(tags=", ".join(f.tags),
                                                        where=machine.where))
        if not prov.from_label_only:
            good.append(prov.describe())
    return Candidate(f, prov, not bad, tuple(bad or good), tuple(caveats), ptx_only)


def _tag_problems(f: IndexFile, machine: Machine) -> list[str]:
    """Why its tags do not fit: the interpreter's own tags when known, else the profile."""
    if machine.interpreter is not None:
        from ..errors import WheelIncompatible
        from ..install.job import check_wheel

        try:
            check_wheel(Path(f.filename), machine.interpreter)
        except WheelIncompatible as exc:
            return [exc.message]
        return []
    problems = []
    interpreters = {t.split("-")[0] for t in f.tags}
    want = "cp" + machine.python.replace(".", "")
    if machine.python and not ({want, "py3", "py" + machine.python.replace(".", "")}
                               & interpreters):
        problems.append(_("its Python tag {tags} is not Python {python} of {where}").format(
            tags=", ".join(sorted(interpreters)), python=machine.python, where=machine.where))
    platforms = {t.split("-")[2] for t in f.tags if t.count("-") == 2}
    if not any(p.endswith("_" + machine.arch) and "linux" in p for p in platforms):
        problems.append(_("its platform tag {tags} is not Linux on {arch}").format(
            tags=", ".join(sorted(platforms)), arch=machine.arch))
    floors = [v for v in (_v(tag_glibc(p)) for p in platforms) if v is not None]
    have = _v(machine.glibc)
    if floors and have is not None and all(v > have for v in floors):
        problems.append(_("its platform tag needs glibc {glibc}; {where} has {have}").format(
            glibc=min(floors), where=machine.where, have=machine.glibc))
    return problems


def _v(text: str) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def _mm(text: str) -> tuple[int, int] | None:
    v = _v(text)
    if v is None:
        return None
    parts = v.release + (0,)
    return parts[0], parts[1]


def _cuda_checks(prov: Provenance, m: Machine, kb: KnowledgeBase, good: list[str],
                 bad: list[str], caveats: list[str]) -> bool:
    """The GPUs and the driver; whether some GPU is reached only as PTX."""
    targets = prov.targets()
    ptx_only = False
    if not m.gpus:
        caveats.append(_("{where} lists no NVIDIA GPU: its GPUs were not checked").format(
            where=m.where))
    elif not targets:
        caveats.append(_("the wheel does not say its compute capabilities"))
    built = ", ".join(t.token for t in targets)
    for label, cap in m.gpus if targets else ():
        cov = ccmod.coverage(targets, cap, tegra_mismatch=kb.is_tegra(cap))
        if cov.cubin is not None:
            good.append(_("{gpu}, CC {cc}: SASS {token}").format(gpu=label, cc=cap,
                                                                  token=cov.cubin.cubin_token))
        elif cov.ptx is not None:
            ptx_only = True
            caveats.append(_("{gpu}, CC {cc}: PTX only ({token}), compiled for it when "
                             "TensorFlow starts (a slow first start)").format(
                gpu=label, cc=cap, token=cov.ptx.token))
        else:
            bad.append(_("{gpu}, CC {cc}: neither SASS nor PTX for it in {built}").format(
                gpu=label, cc=cap, built=built or "-"))
    _driver_check(prov, m, kb, ptx_only, good, bad, caveats)
    return ptx_only


def _driver_check(prov: Provenance, m: Machine, kb: KnowledgeBase, ptx_only: bool,
                  good: list[str], bad: list[str], caveats: list[str]) -> None:
    """The driver against the wheel's CUDA, by the one policy (core/compat.py)."""
    need = compat.major_minor(prov.cuda)
    if need is None:
        caveats.append(_("the wheel does not say its CUDA version"))
        return
    cuda = f"{need[0]}.{need[1]}"
    support = compat.cuda_support(m.cuda_driver, cuda)
    if support is None:
        caveats.append(_("the driver of {where} is not known: it must support CUDA "
                         "{cuda}").format(where=m.where, cuda=prov.cuda))
        return
    if support == "major":
        bad.append(_("driver {driver} supports CUDA up to {have}; the wheel's CUDA {cuda} "
                     "needs a driver for CUDA {major} ({floor} or newer)").format(
            driver=m.driver or "?", have=m.cuda_driver, cuda=cuda, major=need[0],
            floor=compat.driver_floor(kb, cuda) or "?"))
        return
    toolkit_driver = compat.driver_for_toolkit(kb, prov.cuda or cuda) or ""
    driver, shipped = compat.as_version(m.driver), compat.as_version(toolkit_driver)
    if support == "minor" and ptx_only and not m.wsl2 and driver is not None and \
            shipped is not None and driver < shipped:
        bad.append(_("a GPU runs it only as PTX, and PTX from CUDA {cuda} compiles only on "
                     "driver {need} or newer; {where} has {driver}").format(
            cuda=cuda, need=toolkit_driver, where=m.where, driver=m.driver))
        return
    if support == "minor":
        caveats.append(_("driver {driver} supports CUDA {have}, older than the wheel's "
                         "{cuda}: it runs by CUDA's minor-version compatibility").format(
            driver=m.driver or "?", have=m.cuda_driver, cuda=cuda))
    else:
        good.append(_("driver {driver} supports CUDA {have}; the wheel's is CUDA {cuda}").format(
            driver=m.driver or "?", have=m.cuda_driver, cuda=prov.cuda or cuda))


def _rocm_checks(prov: Provenance, m: Machine, good: list[str], bad: list[str]) -> None:
    for gfx in m.amd:
        if gfx in prov.amdgpu_targets:
            good.append(_("AMD GPU {gfx}: built for it").format(gfx=gfx))
        else:
            bad.append(_("AMD GPU {gfx}: not among the wheel's targets {targets}").format(
                gfx=gfx, targets=", ".join(prov.amdgpu_targets) or "-"))


def _glibc_check(prov: Provenance, m: Machine, good: list[str], bad: list[str],
                 caveats: list[str]) -> None:
    need, have = _v(prov.glibc), _v(m.glibc)
    if need is None or have is None:
        if not prov.from_label_only:
            caveats.append(_("the glibc it needs or {where} has is not known").format(
                where=m.where))
    elif have < need:
        bad.append(_("it needs glibc {need}; {where} has {have}").format(
            need=prov.glibc, where=m.where, have=m.glibc))
    else:
        good.append(_("glibc {have} on {where}, {need} needed").format(
            have=m.glibc, where=m.where, need=prov.glibc))


def _cpu_check(prov: Provenance, m: Machine, good: list[str], bad: list[str],
               caveats: list[str]) -> None:
    if prov.cpu_native:
        caveats.append(_("compiled with -march=native for the build host's CPU: it may use "
                         "instructions the CPU of {where} lacks").format(where=m.where))
    if not prov.cpu_features:
        return
    if not m.cpu_features:
        caveats.append(_("the CPU features of {where} are not known; the wheel needs "
                         "{features}").format(where=m.where,
                                              features=", ".join(prov.cpu_features)))
        return
    missing = [f for f in prov.cpu_features if f not in m.cpu_features]
    if missing:
        bad.append(_("compiled for CPUs with {features}; the CPU of {where} lacks "
                     "{missing}").format(features=", ".join(prov.cpu_features),
                                         where=m.where, missing=", ".join(missing)))
    else:
        good.append(_("the CPU of {where} has {features}").format(
            where=m.where, features=", ".join(prov.cpu_features)))
