"""Your own changes and options as reasons to build, and the verdict from the findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Finding
from ..i18n import _
from ..knowledge import OfficialWheel, Release
from .context import _build_fixes, _classify, _Ctx, _install_argv, _wheel_label
from .types import Advice, BuildEstimate, Intent

if TYPE_CHECKING:
    from ..recipe import Recipe

# -- intent: your own changes, custom options --------------------------------------------------

#: recipe keys that change what TensorFlow is, and so need a build whatever the machine
_OPTION_KEYS = ("build.opt_flags", "build.bazel_flags", "build.xla", "build.system_libs")


def _intent_findings(ctx: _Ctx, intent: Intent, rel: Release,
                     recipe: Recipe | None) -> list[Finding]:
    out: list[Finding] = []
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
        out.append(Finding("LOCAL_CHANGES", "error", message,
                          facts={"source": source or None}, sources=("tf-source-md",),
                          remedies=fixes))
    if recipe is not None:
        from ..recipe import Recipe as _Recipe

        default = _Recipe()
        custom = {key: recipe.get(key) for key in _OPTION_KEYS
                  if recipe.get(key) != default.get(key)}
        if custom:
            out.append(Finding(
                "CUSTOM_OPTIONS", "error",
                _("The recipe sets build options the official wheel was not built with, so a "
                  "source build is needed."),
                evidence=tuple(_("{key} = {value} (tfwizard's default: {default})").format(
                    key=key, value=value, default=default.get(key))
                    for key, value in custom.items()),
                facts={"options": {k: v for k, v in custom.items()}}, sources=("tf-source-md",), remedies=fixes))
    return out


# -- the verdict --------------------------------------------------------------------------------


def _advice(ctx: _Ctx, intent: Intent, rel: Release, choice: str, findings: list[Finding],
            machine_findings: list[Finding], wheel: OfficialWheel | None,
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
             requirement: str | None, estimate: BuildEstimate, findings: list[Finding]) -> str:
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
