"""`tfwizard advise`: does an official wheel serve the machine, and if not, every reason why.

Exit status: 0 when an official wheel serves the machine (verdict `official` or
`official-with-caveats`), 1 when it does not as the machine is (`fixable`, `build`,
`unsupported`) or tfwizard cannot tell (`unknown`), 2 for bad input. `--json` prints the
whole Advice (`verdict` tells the cases of 1 apart).
"""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any

from ..core.i18n import _
from ..core.vocab import severity_word
from .context import Environment, ExitStatus, arg_path
from .options import load_recipe_option

INTENTS = ("gpu", "cpu", "changes", "other-machine")
#: the verdicts whose exit status is 0: the official wheel serves
SERVES = ("official", "official-with-caveats")


def register(sub: Any) -> None:
    """Add `advise` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "advise", help=_("say whether the official wheel serves the machine, and why a "
                         "source build is needed when it does not"),
        description=_("Compare the machine that will run TensorFlow with what each official "
                      "wheel needs (GPU code, CPU features, glibc, Python, driver) and print "
                      "the verdict and every reason, with its evidence and fixes."),
        epilog=_("Exit status: 0 the official wheel serves the machine (official, "
                 "official-with-caveats); 1 it does not as the machine is (fixable, build, "
                 "unsupported) or tfwizard cannot tell (unknown); 2 bad input."))
    p.add_argument("--target", metavar="PROFILE.json",
                   help=_("profile of the machine that will run TensorFlow (`tfwizard detect "
                          "--json` there; default: this machine)"))
    p.add_argument("--host", metavar="PROFILE.json",
                   help=_("this machine's profile, for the build time estimate (default: "
                          "detect it)"))
    p.add_argument("--intent", choices=INTENTS, default="gpu",
                   help=_("what you want: a GPU TensorFlow, a CPU one, your own changes, or a "
                          "wheel for another machine (default: gpu)"))
    p.add_argument("--release", metavar="X",
                   help=_("TensorFlow release, e.g. 2.18.0 or 2.18 (default: the newest whose "
                          "official wheel serves the machine)"))
    p.add_argument("--python", metavar="X.Y",
                   help=_("the Python version TensorFlow will run on (default: the machine's)"))
    p.add_argument("--backend", choices=("cpu", "cuda", "rocm"),
                   help=_("default: from the intent and the machine's GPUs"))
    p.add_argument("--recipe", metavar="RECIPE",
                   help=_("also count the recipe's source and build options as reasons"))
    p.add_argument("--wheelhouse", metavar="URL",
                   help=_("look in the team's wheelhouse first (a simple index URL or a "
                          "folder; default: the recipe's [wheelhouse] url, else "
                          "TFWIZARD_WHEELHOUSE): the wheel there that serves the machine, "
                          "or why each does not"))
    p.add_argument("--json", action="store_true", help=_("print the advice as JSON"))
    p.set_defaults(handler=cmd_advise)


def cmd_advise(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Print the verdict and the reasons; 0 when the official wheel serves."""
    from ..core.advise import Intent, advise
    from ..core.host import HostProfile
    from ..core.knowledge import load_knowledge

    if args.host:
        host = HostProfile.load(arg_path(env, args.host))
    else:
        from ..core.detect import detect_host

        host = detect_host(env=env.env)
    target = HostProfile.load(arg_path(env, args.target)) if args.target else None
    kb = load_knowledge()
    recipe = load_recipe_option(args, env)
    advice = advise(kb, host=host, target=target, release=args.release, python=args.python,
                    intent=Intent(args.intent), backend=args.backend, recipe=recipe)
    choice, error = wheelhouse_part(args, env, recipe, advice, target or host, kb)
    from ..core.wheelhouse.advice import choice_block, choice_data

    if args.json:
        data = {**advice.to_dict(), "wheelhouse": choice_data(choice, error)}
        env.out(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in choice_block(choice, error) + advice_lines(advice):
            env.out(line)
    served = choice is not None and choice.best is not None
    return ExitStatus.OK if served or advice.verdict in SERVES else ExitStatus.ERROR


def wheelhouse_part(args: argparse.Namespace, env: Environment, recipe: Any, advice: Any,
                    machine: Any, kb: Any) -> tuple[Any, str]:
    """The wheelhouse's choice for the advised machine, backend and Python (None when no
    wheelhouse is named), or why it could not be read."""
    from ..core.wheelhouse import WheelhouseError, wheelhouse_url
    from ..core.wheelhouse.advice import wheelhouse_choice

    url = wheelhouse_url(args.wheelhouse, recipe, env.env)
    if not url:
        return None, ""
    try:
        return wheelhouse_choice(url, machine, kb, on_target=advice.on_target,
                                 python=advice.python, backend=advice.backend,
                                 release=args.release), ""
    except WheelhouseError as exc:
        return None, _("Wheelhouse: {error}").format(error=exc.message)


def verdict_word(verdict: str) -> str:
    """A verdict as a person reads it."""
    words = {
        "official": _("the official wheel serves"),
        "official-with-caveats": _("the official wheel serves, with caveats"),
        "fixable": _("an official wheel serves after a change short of a build"),
        "build": _("a source build is needed"),
        "unsupported": _("nothing here serves"),
        "unknown": _("cannot tell"),
    }
    return words.get(verdict, verdict)


def advice_lines(advice: Any) -> list[str]:
    """The advice as text: verdict, summary, the pip command, then every finding."""
    lines = [_("Verdict: {verdict} ({word})").format(verdict=advice.verdict,
                                                     word=verdict_word(advice.verdict)),
             advice.summary]
    lines.append(_("TensorFlow {release} ({choice}), {arch}, Python {python}, backend "
                   "{backend}").format(release=advice.release,
                                       choice=release_choice_word(advice.release_choice),
                                       arch=advice.arch, python=advice.python or "?",
                                       backend=advice.backend))
    if advice.install:
        lines.append(_("Install: {command}").format(command=shlex.join(advice.install)))
        if not advice.on_target:
            lines.append(_("  or: `tfwizard install {requirement} --venv DIR --create`, then "
                           "`tfwizard verify`").format(requirement=advice.requirement))
    reasons = advice.reasons
    if reasons:
        lines += ["", _("Reasons ({count}):").format(count=len(reasons))]
    for finding in reasons:
        lines += finding_block(finding)
    passed = [f for f in advice.findings if f.severity == "info"]
    if passed:
        lines += ["", _("Checks passed and notes ({count}):").format(count=len(passed))]
    for finding in passed:
        lines += finding_block(finding)
    est = advice.estimate
    if advice.build_proposed:  # the wheel serves: no build time to weigh
        lines += ["", _("A source build here: {time} ({low}-{high} h; {jobs} jobs on {cpus} "
                        "CPUs). UNVERIFIED: a rough model, not a measurement.").format(
            time=est.text(), low=f"{est.low:g}", high=f"{est.high:g}", jobs=est.jobs,
            cpus=est.cpus)]
    return lines


def release_choice_word(choice: str) -> str:
    """How the release was chosen."""
    words = {"given": _("as given"),
             "newest-serving": _("the newest whose official wheel serves"),
             "newest-with-caveats": _("the newest whose official wheel serves with caveats"),
             "newest": _("the newest")}
    return words.get(choice, choice)


def finding_block(finding: Any) -> list[str]:
    """One finding: "ERROR CODE: message", its evidence, sources (keys of
    resources/knowledge/sources.toml) and fixes, indented."""
    from ..core.fixes import fix_text

    lines = [f"{severity_word(finding.severity)} {finding.code}: {finding.message}"]
    lines += [f"    - {sentence}" for sentence in finding.evidence]
    if finding.sources:
        lines.append("    " + _("sources: {keys}").format(keys=", ".join(finding.sources)))
    for remedy in finding.fixes:
        detail = remedy.requirement or fix_text(remedy.changes)
        lines.append("    " + (_("fix: {label} ({changes})").format(label=remedy.label,
                                                                    changes=detail)
                               if detail else _("fix: {label}").format(label=remedy.label)))
    return lines
