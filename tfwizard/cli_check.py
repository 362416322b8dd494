"""`tfwizard check` and `tfwizard plan`."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .cli import Environment, ExitStatus, _path
from .core.host import HostProfile
from .core.i18n import _
from .core.recipe import Recipe, load_recipe
from .core.vocab import severity_word


def load_hosts(args: argparse.Namespace, env: Environment,
               recipe: Recipe) -> tuple[HostProfile, HostProfile | None]:
    """The build host (--host or this machine) and the target (--target, the recipe's, or None)."""
    if getattr(args, "host", None):
        build = HostProfile.load(_path(env, args.host))
    else:
        from .core.detect import detect_host

        build = detect_host(env=env.env)
    target: HostProfile | None = None
    if getattr(args, "target", None):
        target = HostProfile.load(_path(env, args.target))
    else:
        path = recipe.resolve_path("target.host_profile")
        target = HostProfile.load(path) if path is not None else None
    return build, target


def _gpu_targets(recipe: Recipe, build: HostProfile,
                 target: HostProfile | None) -> dict[str, list[str] | None]:
    """The GPU targets the plan will build ("auto" resolved as the plan resolves it);
    None where "auto" finds no GPU (the rules report that as an error)."""
    from .core.errors import UsageError
    from .core.plan import resolve_amd_targets, resolve_ccs

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
    from .core.knowledge import load_knowledge
    from .core.rules import evaluate

    recipe = load_recipe(_path(env, args.recipe))
    build, target = load_hosts(args, env, recipe)
    kb = load_knowledge()
    findings = evaluate(recipe, build, target, kb)
    if args.preflight:
        from .core.preflight import preflight

        findings = _sorted(findings + preflight(
            recipe, env.env, recipe_dir=recipe.path.parent if recipe.path else None)
            + image_findings(recipe, env, build, target))
    errors = [f for f in findings if f.severity == "error"]
    targets = _gpu_targets(recipe, build, target)
    if args.json:
        env.out(json.dumps({"recipe": recipe.name, "errors": len(errors), **targets,
                            "findings": [f.to_dict(kb) for f in findings]}, indent=2))
    else:
        for key, value in targets.items():
            tokens = recipe.cuda.compute_capabilities if key == "compute_capabilities" \
                else recipe.rocm.amdgpu_targets
            if "auto" in tokens and value is not None:
                # what the plan exports: the same resolver
                env.out(_("{key}: auto -> {targets}").format(
                    key=("cuda." if key == "compute_capabilities" else "rocm.") + key,
                    targets=", ".join(value)))
        shown = [f for f in findings if args.verbose or f.severity != "info"
                 or f.code in _ALWAYS_SHOWN]
        for f in shown:
            env.out(f"{severity_word(f.severity)} {f.code}: {f.message}")
            extra = []
            if f.key:
                extra.append(_("key: {key}").format(key=f.key))
            if f.sources:
                extra.append(_("source: {titles}").format(titles="; ".join(
                    kb.sources[s].title for s in f.sources if s in kb.sources)))
            if f.fix:
                extra.append(_("fix: {label} ({changes})").format(label=f.fix.label,
                                                                    changes=_changes(f.fix.changes)))
            for line in extra:
                env.out(f"       {line}")
        counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning",
                                                                           "info")}
        hidden = len(findings) - len(shown)
        env.out(_("{name}: {errors} error(s), {warnings} warning(s), {notes} note(s)").format(
            name=recipe.name, errors=counts["error"], warnings=counts["warning"],
            notes=counts["info"])
            + (_(" ({hidden} notes hidden; -v shows them)").format(hidden=hidden)
               if hidden else ""))
    return ExitStatus.ERROR if errors else ExitStatus.OK


def _sorted(findings: list[Any]) -> list[Any]:
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(findings, key=lambda f: order[f.severity])


def image_findings(recipe: Recipe, env: Environment, build: HostProfile | None,
                   target: HostProfile | None, plan: Any = None) -> list[Any]:
    """The build image's findings (preflight.check_image) for the recipe's plan."""
    from .core.errors import TfWizardError
    from .core.plan import make_plan
    from .core.preflight import check_image

    if plan is None:
        try:
            plan = make_plan(recipe, build_host=build, target_host=target,
                             recipe_dir=recipe.path.parent if recipe.path else None)
        except TfWizardError:
            return []  # no plan (unknown release...): the rules already say why
    return check_image(plan, env=env.env)


def preflight_gate(recipe: Recipe, args: argparse.Namespace, env: Environment,
                   plan: Any = None) -> ExitStatus | None:
    """Before starting Docker work (build, fetch): the preflight checks, then (when they
    found no error) the build image of `plan`; errors stop the command unless --force.
    None: go on."""
    from .core.preflight import preflight

    findings = preflight(recipe, env.env,
                         recipe_dir=recipe.path.parent if recipe.path else None)
    if plan is not None and not any(f.severity == "error" for f in findings):
        findings = _sorted(findings + image_findings(recipe, env, None, None, plan))
    for f in findings:
        if getattr(args, "json", False):
            env.out(json.dumps({"type": "check", "severity": f.severity, "code": f.code,
                                "message": f.message}))
        else:
            env.err(f"{severity_word(f.severity)} {f.code}: {f.message}")
    errors = [f for f in findings if f.severity == "error"]
    if errors and not getattr(args, "force", False):
        env.err("tfwizard: " + _("preflight found {count} error(s); fix them (`tfwizard check "
                                 "--preflight RECIPE`) or pass --force to go on anyway.")
                .format(count=len(errors)))
        return ExitStatus.ERROR
    return None


#: informational findings that explain a choice, shown without -v
_ALWAYS_SHOWN = {"CC_COVERS_GPU", "CLANG_OFFSETOF", "NO_GPU_HERE"}


def _changes(changes: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in changes.items())


def cmd_plan(args: argparse.Namespace, env: Environment) -> ExitStatus:
    from .core.plan import make_plan, render_bazelrc, render_commands, render_env, render_json

    recipe = load_recipe(_path(env, args.recipe))
    build, target = load_hosts(args, env, recipe)
    plan = make_plan(recipe, build_host=build, target_host=target,
                     recipe_dir=recipe.path.parent if recipe.path else None)
    render = {"env": render_env, "bazelrc": render_bazelrc, "command": render_commands,
              "json": render_json}[args.format]
    env.stdout.write(render(plan))
    return ExitStatus.OK


def register(sub: Any) -> None:
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
    p.set_defaults(handler=cmd_check)

    p = sub.add_parser("plan", help=_("print what the build will run"))
    p.add_argument("recipe", metavar="RECIPE")
    p.add_argument("--format", choices=("env", "bazelrc", "command", "json"), default="command",
                   help=_("env: configure answers; bazelrc: the predicted .tf_configure.bazelrc; "
                   "command: docker run + ./configure + bazel build; json: the whole plan"))
    p.add_argument("--host", metavar="PROFILE.json", help=_("the build host's profile"))
    p.add_argument("--target", metavar="PROFILE.json", help=_("the target machine's profile"))
    p.set_defaults(handler=cmd_plan)
