"""`verify`'s checks of the installed TensorFlow's own build facts (its version and
`tf.sysconfig.get_build_info()`, as the probe read them):

- against the recipe's build, when the build record is known: the comparison the build's
  wheel check made (wheelcheck.compare), on what is installed, so a wheel swapped or
  reinstalled since is caught;
- against this machine: every NVIDIA GPU covered by the wheel's compute capabilities as
  SASS or PTX (cc.coverage, the rule the runtime diagnosis uses), and a driver new enough
  for the CUDA the wheel was built with.

A fact the wheel does not record gives no check (2.22's build_info lists no CUDA version or
compute capabilities). Each check is (key, name, passed, detail), the fields of
verify.Check; the keys start with "fact:" (the Verify page shows these as rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import cc as ccmod
from ..diagnosis.runtime import build_targets, cuda_and_driver, target_gpus
from ..host import HostProfile
from ..i18n import _
from ..install.wheelcheck import Expected, Found, compare
from ..knowledge import KnowledgeBase
from ..wheelhouse.provenance import installed_check

FactCheck = tuple[str, str, bool, str]


def fact_checks(data: Mapping[str, Any], *, host: HostProfile | None, kb: KnowledgeBase,
                expected: Expected | None) -> list[FactCheck]:
    """The checks of a probe result that imported TensorFlow (see the module's text)."""
    tf = data.get("tensorflow")
    if tf is None:
        return []
    out: list[FactCheck] = []
    if expected is not None:
        found = Found(version=str(tf.get("version") or ""),
                      build_info=dict(data.get("build_info") or {}) or None)
        check = compare(expected, found)
        out.append(("fact:recipe", _("installed TensorFlow matches the recipe's build"),
                    check.ok,
                    check.summary()))
    targets = [t for t in (ccmod.parse_target(x) for x in build_targets(data)) if t]
    for label, cc in target_gpus(data, host) if targets else []:
        cov = ccmod.coverage(targets, cc, tegra_mismatch=kb.is_tegra(cc))
        if cov.cubin is not None:
            detail = _("SASS for it: {token}").format(token=cov.cubin.token)
        elif cov.ptx is not None:
            detail = _("PTX only ({token}): compiled for it when TensorFlow starts").format(
                token=cov.ptx.token)
        else:
            detail = _("neither SASS nor PTX for it in {tokens}").format(
                tokens=", ".join(t.token for t in targets))
        out.append((f"fact:gpu:{label}",
                    _("wheel built for {gpu}, CC {cc}").format(gpu=label, cc=cc), cov.runs,
                    detail))
    pair = cuda_and_driver(data, host)
    if pair is not None and host is not None:
        built, driver_cuda, support = pair
        detail = _("driver {driver} supports CUDA {supported}").format(
            driver=host.nvidia.driver_version or "?", supported=driver_cuda)
        if support == "minor":
            detail += _("; a newer minor runs by minor-version compatibility (see the "
                        "diagnosis for what it leaves out)")
        out.append(("fact:driver",
                    _("driver runs the wheel's CUDA {cuda}").format(cuda=built),
                    support != "major", detail))
    house = installed_check(dict(data))  # a wheelhouse build: which one, and its facts
    return out + ([house] if house else [])
