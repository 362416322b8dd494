"""`tfwizard check`: say what would break before building (exit 1 on errors)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from ..core.i18n import _, ngettext
from ..core.vocab import severity_word
from .context import Environment, ExitStatus, arg_path
from .gates import load_hosts
from .render import finding_details
from .term import finding_lines, terminal

if TYPE_CHECKING:
    from ..core.host import HostProfile
    from ..core.recipe import Recipe

#: informational findings that explain a choice, shown without -v
ALWAYS_SHOWN = {"CC_COVERS_GPU", "CLANG_OFFSETOF", "NO_GPU_HERE", "SECRET_REFERENCE",
                "SOURCE_FACT_DIFFERS"}


def register(sub: Any) -> None:
    """Add `check` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("check", help=_("say what would break before building (exit 1 on errors)"))
    p.add_argument("recipe", metavar="RECIPE")
    p.add_argument("--host", metavar="PROFILE.json",
                   help=_("the build host's profile (default: detect this machine)"))
    p.add_argument("--target", metavar="PROFILE.json",
                   help=_("profile of the machine that will run the wheel (default: the recipe's "
                   "target.host_profile, else the build host)"))
    p.add_argument("--json", action="store_true", help=_("print findings as JSON"))
    p.add_argument("-v", "--verbose", action="store_true", help=_("also show every note"))
    p.add_argument("--preflight", action="store_true",
                   help=_("also check what needs the network, the file system and Docker: "
                   "proxies and remote services answer (2 s TCP connect each), local paths "
                   "exist, the build image exists and has the compiler, Python and CUDA "
                   "paths the plan names (one short container)"))
    p.add_argument("--fix", action="store_true",
                   help=_("apply the one-click fix of each error (the wizard's \"Apply all "
                          "fixes\") and save the recipe (the old one as RECIPE.bak), then "
                          "check it"))
    p.set_defaults(handler=cmd_check)


def gpu_targets(recipe: Recipe, build: HostProfile,
                target: HostProfile | None) -> dict[str, list[str] | None]:
    """The GPU targets the plan will build ("auto" resolved as the plan resolves it);
    None where "auto" finds no GPU (the rules report that as an error)."""
    from ..core.building.plan.plan import resolve_amd_targets, resolve_ccs
    from ..core.errors import UsageError

    out: dict[str, list[str] | None] = {"compute_capabilities": [], "amdgpu_targets": []}
    resolvers = {"cuda": ("compute_capabilities", resolve_ccs),
                 "rocm": ("amdgpu_targets", resolve_amd_targets)}
    if recipe.backend.kind in resolvers:
        key, resolve = resolvers[recipe.backend.kind]
        try:
            out[key] = resolve(recipe, build, target)
        except UsageError:
            out[key] = None
    return out


def cmd_check(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """The rules' findings (and with --preflight the network, paths and image checks)."""
    from ..core.findings import errors, sort_findings
    from ..core.knowledge import load_knowledge
    from ..core.recipe import load_recipe
    from ..core.rules import evaluate

    recipe = load_recipe(arg_path(env, args.recipe))
    build, target = load_hosts(args, env, recipe)
    kb = load_knowledge()
    fixed: list[Any] = []
    if args.fix:
        recipe, fixed = _fix(recipe, build, target, kb, args, env)
    findings = evaluate(recipe, build, target, kb)
    if args.preflight:
        from ..core.building.run.preflight import preflight
        from ..core.session import image_findings, remote_findings

        # every finding, the image's too: `check` reports where the build would stop
        pre = preflight(recipe, env.env)
        findings = sort_findings(findings + pre
                                 + [f for f in remote_findings(recipe, env.env, None, build, target)
                                    if f not in pre]  # its consent findings are the preflight's
                                 + image_findings(recipe, env.env, build, target))
    targets = gpu_targets(recipe, build, target)
    if args.json:
        env.out(json.dumps({"recipe": recipe.name, "errors": len(errors(findings)), **targets,
                            **({"fixed": [f.to_dict(kb) for f in fixed]} if args.fix else {}),
                            "findings": [f.to_dict(kb) for f in findings]}, indent=2))
    else:
        _print_targets(recipe, targets, env)
        shown = [f for f in findings if args.verbose or f.severity != "info"
                 or f.code in ALWAYS_SHOWN]
        term = terminal(env)
        for f in shown:
            for line in finding_lines(term, f.severity, severity_word(f.severity), f.code,
                                      f.message):
                env.out(line)
            for detail in finding_details(f, kb):
                for line in term.wrap("       ", detail, indent=9):
                    env.out(line)
        counts = {s: sum(1 for f in findings if f.severity == s)
                  for s in ("error", "warning", "info")}
        hidden = len(findings) - len(shown)
        env.out(_("{name}: {errors}, {warnings}, {notes}").format(
            name=recipe.name,
            errors=ngettext("{count} error", "{count} errors", counts["error"]).format(
                count=counts["error"]),
            warnings=ngettext("{count} warning", "{count} warnings", counts["warning"]).format(
                count=counts["warning"]),
            notes=ngettext("{count} note", "{count} notes", counts["info"]).format(
                count=counts["info"]))
            + (_(" ({hidden} notes hidden; -v shows them)").format(hidden=hidden)
               if hidden else ""))
    return ExitStatus.ERROR if errors(findings) else ExitStatus.OK


def _fix(recipe: Recipe, build: HostProfile, target: HostProfile | None, kb: Any,
         args: argparse.Namespace, env: Environment) -> tuple[Recipe, list[Any]]:
    """--fix: the errors' fixes applied in turn (core fixes.fix_errors) and the recipe
    saved; each fix said on standard error."""
    from ..core.fixes import fix_errors, fix_text
    from ..core.recipe import save_recipe

    fixed_recipe, applied = fix_errors(recipe, build, target, kb)
    for f in applied:
        assert f.fix is not None
        env.err(_("fixed {code}: {label} ({changes})").format(
            code=f.code, label=f.fix.label, changes=fix_text(f.fix.changes)))
    if applied and recipe.path is not None:
        save_recipe(fixed_recipe, recipe.path)
        env.err(_("saved {path} (the recipe before: {path}.bak)").format(path=recipe.path))
    elif not applied:
        env.err(_("no error has a fix to apply"))
    return fixed_recipe, applied


def _print_targets(recipe: Recipe, targets: dict[str, list[str] | None],
                   env: Environment) -> None:
    """What "auto" GPU targets resolve to: what the plan exports (the same resolver)."""
    for key, value in targets.items():
        tokens = recipe.cuda.compute_capabilities if key == "compute_capabilities" \
            else recipe.rocm.amdgpu_targets
        if "auto" in tokens and value is not None:
            env.out(_("{key}: auto -> {targets}").format(
                key=("cuda." if key == "compute_capabilities" else "rocm.") + key,
                targets=", ".join(value)))
