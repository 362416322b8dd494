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

from typing import TYPE_CHECKING

from ..findings import Finding, Remedy
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase
from .context import _backend, _Ctx, _find_release, _python_of, _wheel_and_requirement
from .estimate import estimate_build
from .release import (
    _choose_release,
    _release_chosen,
    _scope_findings,
    _wheel_needs,
    _with_release_alternative,
)
from .types import (
    BACKENDS,
    VERDICTS,
    Advice,
    BuildEstimate,
    Intent,
)
from .verdict import _advice, _intent_findings

if TYPE_CHECKING:
    from ..recipe import Recipe

__all__ = ["BACKENDS", "VERDICTS", "Advice", "BuildEstimate", "Intent", "Finding", "Remedy",
           "advise", "estimate_build"]


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


