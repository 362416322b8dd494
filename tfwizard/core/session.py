"""The build pipeline, owned here for both front ends: one call per command.

`tfwizard build` and the wizard used to assemble the pipeline each on their own, and the
two copies drifted (the wizard built cold and never ran the preflight). They now call:

- `prepare`: the rules' check, the plan, the plan refitted to the build image (remote
  execution), the preflight (proxies, paths, the remote service, the image). The result
  says what was found and whether the build may start; the front end only renders it.
- `start`: the runner, warm in the recipe's workspace unless a cold build is asked for or
  the plan cannot take the warm path (`Started.cold_reason` says why).
- `install_built`, `verify_installed`: the wheel into the recipe's target, then TensorFlow
  judged in it; their reports go into the build record (install.json, verify.json).
- `verification_host`: the machine a verification is judged against.

Nothing here prints or imports Qt; heavy modules load inside the calls that need them, so
a command that never builds does not pay for them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import TfWizardError, UsageError
from .findings import Finding, errors, sort_findings
from .i18n import _

if TYPE_CHECKING:  # loaded by the calls that use them
    from .building.plan.plan import BuildPlan
    from .building.run.runner import BuildRunner
    from .building.run.sourcefollow import SourceReplan
    from .host import HostProfile
    from .install.job import InstallEvent, InstallResult, InstallTarget
    from .recipe import Recipe
    from .verify.job import Verification, VerifyReport

#: what a front end is told as each stage of `prepare` ends: ("check" | "preflight", findings)
StageReport = Callable[[str, list[Finding]], None]
CHECK, PREFLIGHT = "check", "preflight"
INSTALL_REPORT, VERIFY_REPORT = "install.json", "verify.json"


@dataclass(frozen=True)
class Prepared:
    """What `prepare` found, and the plan when it got that far."""

    recipe: Recipe
    build_host: HostProfile | None  # None: the wizard before detection (auto_host)
    target_host: HostProfile | None
    #: the rules' errors and warnings (the notes are `tfwizard check`'s to show)
    check: tuple[Finding, ...]
    recipe_path: Path | None = None
    plan: BuildPlan | None = None  # None: the check refused before planning
    #: plans the recipe again with a clone's own facts (core/building/run/sourcefollow.py)
    replan: SourceReplan | None = None
    preflight: tuple[Finding, ...] = ()
    preflight_ran: bool = False
    #: go past errors (`--force`): they are still reported
    forced: bool = False
    #: where the wheel goes: the front end's choice, else output.dir (None: the record)
    out_dir: Path | None = None

    @property
    def findings(self) -> list[Finding]:
        """Every finding of the check and the preflight."""
        return [*self.check, *self.preflight]

    @property
    def refused_by(self) -> str | None:
        """CHECK or PREFLIGHT when that stage found an error (and errors are not forced
        past), else None."""
        if self.forced:
            return None
        if errors(list(self.check)):
            return CHECK
        if errors(list(self.preflight)):
            return PREFLIGHT
        return None

    @property
    def may_build(self) -> bool:
        """The build may start: planned, preflight run, nothing refused."""
        return self.plan is not None and self.preflight_ran and self.refused_by is None


def check_output(out_dir: Path | None) -> None:
    """Refuse an output folder that is a file, not writable or a system folder, now."""
    from .safety import check_output_dir

    problem = check_output_dir(out_dir) if out_dir is not None else None
    if problem:
        raise UsageError(_("the output folder {path} {problem}").format(path=out_dir,
                                                                         problem=problem),
                         _("Choose another with --out DIR (or output.dir in the recipe)."))


def prepare(recipe: Recipe, build_host: HostProfile | None,
            target_host: HostProfile | None = None,
            *, recipe_path: Path | None = None, env: Mapping[str, str] | None = None,
            planner: Callable[..., BuildPlan] | None = None, force: bool = False,
            preflight: bool = True, out_dir: Path | None = None, wheel: bool = True,
            plan_options: Mapping[str, Any] | None = None,
            report: StageReport | None = None) -> Prepared:
    """Check, plan, refit to the image, preflight: the steps before any Docker work.

    Stops after the check when it finds an error (unless `force`), after the plan when
    `preflight` is False (a dry run). The wheel's folder (`out_dir`, else the recipe's
    output.dir; none when the command makes no `wheel`) is refused (UsageError) before the
    image is looked at; `plan_options` go to the planner (kb, recipe_dir); `report` hears each
    stage's findings as it ends, so a front end can show them while the next stage runs.
    A recipe that cannot be planned raises the planner's TfWizardError."""
    from .building.plan.plan import make_plan
    from .building.run.sourcefollow import SourceReplan
    from .rules import evaluate

    env = os.environ if env is None else env
    options = dict(plan_options or {})
    found = evaluate(recipe, build_host, target_host, options.get("kb"))
    check = errors(found) + [f for f in found if f.severity == "warning"]
    if report is not None:
        report(CHECK, check)
    done = Prepared(recipe, build_host, target_host, tuple(check), recipe_path, forced=force)
    if done.refused_by is not None:
        return done
    replan = SourceReplan(recipe, planner or make_plan,
                          {"build_host": build_host, "target_host": target_host, **options})
    plan = replan.planner(recipe, **replan.kwargs)
    out_dir = (out_dir or recipe.resolve_path("output.dir")) if wheel else None
    if not preflight:
        return _with(done, plan=plan, replan=replan, out_dir=out_dir)
    check_output(out_dir)  # a usage error before looking at the image
    if recipe.remote.executor:  # flags for the Bazel in the image, actions pinned to it
        plan = fit_plan_to_image(recipe, plan, replan, env)
    findings = preflight_findings(recipe, env, plan)
    if report is not None:
        report(PREFLIGHT, findings)
    return _with(done, plan=plan, replan=replan, preflight=tuple(findings), preflight_ran=True,
                 out_dir=out_dir)


def _with(prepared: Prepared, **changes: Any) -> Prepared:
    from dataclasses import replace

    return replace(prepared, **changes)


def preflight_findings(recipe: Recipe, env: Mapping[str, str], plan: BuildPlan) -> list[Finding]:
    """The preflight before a build or fetch: proxies, paths and the remote service, then
    (when they found no error) the build image of `plan`."""
    from .building.run.preflight import preflight

    findings = preflight(recipe, env)
    # the remote check repeats the preflight's consent findings for the executor's headers
    findings += [f for f in remote_findings(recipe, env, plan) if f not in findings]
    if not errors(findings):
        findings = sort_findings(findings + image_findings(recipe, env, plan=plan))
    return findings


def image_findings(recipe: Recipe, env: Mapping[str, str], build: HostProfile | None = None,
                   target: HostProfile | None = None,
                   plan: BuildPlan | None = None) -> list[Finding]:
    """The build image's findings (preflight.check_image) for the recipe's plan (made here
    when not given)."""
    from .building.plan.plan import make_plan
    from .building.run.preflight import check_image

    if plan is None:
        try:
            plan = make_plan(recipe, build_host=build, target_host=target)
        except TfWizardError:
            return []  # no plan (unknown release...): the rules already say why
    return check_image(plan, env=env)


def remote_findings(recipe: Recipe, env: Mapping[str, str], plan: BuildPlan | None = None,
                    build: HostProfile | None = None,
                    target: HostProfile | None = None) -> list[Finding]:
    """What the remote executor says (core/remote/check.py): capabilities, then the probe
    with the plan's platform properties (made here when not given)."""
    if not recipe.remote.executor:
        return []  # before the imports: the REAPI client loads for a remote recipe only
    from .building.plan.plan import make_plan
    from .remote.check import check_service, plan_properties

    if plan is None:
        try:
            plan = make_plan(recipe, build_host=build, target_host=target)
        except TfWizardError:
            plan = None
    properties = plan_properties(plan.flag_list) if plan is not None else []
    return check_service(recipe, env, properties).findings


def fit_plan_to_image(recipe: Recipe, plan: BuildPlan, replan: SourceReplan,
                      env: Mapping[str, str]) -> BuildPlan:
    """The plan again with what the build image says: its Bazel (`bazel --version`) and
    repo digests (kept in `replan`, so a plan remade after the clone has them too); the
    same plan when the image cannot be asked."""
    from .docker.imagefacts import read_image_facts

    facts = read_image_facts(plan.image, env, user=plan.user)
    if facts is None:
        return plan
    replan.kwargs.update(image_bazel=facts.bazel, repo_digests=facts.repo_digests)
    return replan.planner(recipe, **replan.kwargs)


@dataclass(frozen=True)
class Started:
    """The runner `start` made: warm, or cold and why."""

    runner: BuildRunner
    warm: bool
    #: why the build is cold although a warm one was asked for (None: warm, or asked cold)
    cold_reason: str | None = None


def start(prepared: Prepared, *, fresh: bool = False, env: Mapping[str, str] | None = None,
          recipe_text: str | None = None, build_id: str | None = None) -> Started:
    """The build's runner: warm in the recipe's workspace (the same one for `tfwizard build`
    and the wizard: the recipe file's path names it), cold with `fresh` or when the plan
    cannot take the warm path. Refuses (TfWizardError) a recipe `prepare` did not pass."""
    from .building.run.runner import BuildRunner
    from .building.warm.run import WarmRunner, cold_reason, recipe_idle_s

    if not prepared.may_build or prepared.plan is None:
        lines = [f"{f.code}: {f.message}" for f in errors(prepared.findings)]
        raise TfWizardError("\n".join([refusal_text(prepared), *lines]),
                            _("`tfwizard check --preflight RECIPE` lists what to fix."))
    recipe, plan, out_dir = prepared.recipe, prepared.plan, prepared.out_dir
    if recipe_text is None:
        path = prepared.recipe_path
        recipe_text = path.read_text("utf-8") if path is not None else recipe.to_toml()
    why = None if fresh else cold_reason(plan)
    runner: BuildRunner
    if fresh or why:
        runner = BuildRunner(plan, out_dir=out_dir, recipe_text=recipe_text, env=env,
                             build_id=build_id)
    else:
        path = prepared.recipe_path or recipe.path
        runner = WarmRunner(plan, recipe_id=str(path.resolve()) if path else recipe.name,
                            idle_s=recipe_idle_s(recipe.build.warm_idle_min),
                            out_dir=out_dir, recipe_text=recipe_text, env=env,
                            build_id=build_id)
    runner.replan = prepared.replan  # after a clone, configure and build follow its files
    runner.profiles = {name: host.to_json() for name, host in (
        ("host.json", prepared.build_host), ("target-host.json", prepared.target_host))
        if host is not None}
    return Started(runner, warm=not (fresh or why), cold_reason=why)


def refusal_text(prepared: Prepared) -> str:
    """One sentence: why `prepared` may not build (empty when it may); its findings say
    what to fix."""
    stage = prepared.refused_by
    if stage == CHECK:
        return _("The check found errors in the recipe; the build does not start.")
    if stage == PREFLIGHT:
        return _("The preflight found errors; the build does not start.")
    if prepared.plan is None or not prepared.preflight_ran:
        return _("The preflight has not run; the build does not start.")
    return ""


def save_report(record: Path, name: str, text: str) -> Path:
    """Write one of the record's report files (INSTALL_REPORT, VERIFY_REPORT)."""
    path = record / name
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    return path


def install_target(recipe: Recipe, venv: Path | None = None) -> InstallTarget:
    """The interpreter the recipe's wheel goes into: `venv` (a front end's choice), else
    install.venv (created when missing), else install.python."""
    from .install.job import resolve_target

    venv = venv or recipe.resolve_path("install.venv")
    python = recipe.resolve_path("install.python")
    if venv is None and python is None:
        raise UsageError(_("--install needs a target: set install.venv (or install.python) in "
                           "the recipe, or pass --venv DIR"))
    return resolve_target(venv=venv, python=python, create=venv is not None)


def only_the_wheel(recipe: Recipe, wheel: Path, target: InstallTarget, *, warm: bool) -> bool:
    """After a `warm` build, reinstall only the wheel when `target` has its dependencies
    (core/install/reinstall.py): a rebuild's venv is not resolved again."""
    from .install.reinstall import deps_present

    return warm and deps_present(wheel, target.python, list(recipe.install.extras))


def install_built(recipe: Recipe, wheel: Path, target: InstallTarget, *, record: Path | None,
                  wheel_only: bool = False, find_links: Sequence[str] = (),
                  no_index: bool = False, env: Mapping[str, str] | None = None,
                  reporter: Callable[[InstallEvent], None] | None = None) -> InstallResult:
    """Install a built wheel with the recipe's [install] section (only the wheel with
    `wheel_only`: `only_the_wheel`). The result, with pip's argv, goes into the build
    `record` as install.json."""
    from .install.job import InstallStarted, install_wheel

    inst = recipe.install
    argv: list[str] = []

    def hear(event: InstallEvent) -> None:
        if isinstance(event, InstallStarted):
            argv[:] = event.argv
        if reporter is not None:
            reporter(event)

    result = install_wheel(wheel, target, list(inst.extras), index_url=inst.index_url,
                           trusted_host=inst.trusted_host, find_links=list(find_links),
                           no_index=no_index, env=env, reporter=hear, wheel_only=wheel_only)
    if record is not None:
        record_install(result, argv, record)
    return result


def record_install(result: InstallResult, argv: Sequence[str], record: Path) -> Path:
    """Save an install's result, with pip's argv, in the build record (install.json)."""
    return save_report(record, INSTALL_REPORT, json.dumps({**result.to_dict(),
                                                           "argv": list(argv)}, indent=2))


def verification_host(given: HostProfile | None = None,
                      env: Mapping[str, str] | None = None) -> HostProfile:
    """The machine a verification is judged against: the one its probe runs on, which is
    this machine (`given`: its profile as a front end already has it, else detected).

    Not the recipe's target: the probe imports TensorFlow here, so this machine's GPUs
    and driver are what its output reflects; on the target, `tfwizard verify` runs there."""
    if given is not None:
        return given
    from .detect import detect_host

    return detect_host(env=env)


def verify_installed(python: str, host: HostProfile, *, recipe: Recipe | None = None,
                     record: Path | None = None, expect: str | None = None,
                     env: Mapping[str, str] | None = None, **options: Any) -> Verification:
    """The verification of TensorFlow in `python` as a long job (core/verify/job.py),
    held against what the build `record`'s wheel had to be; `record_verification` saves
    its report there. `options`: the job's (timeout, kb)."""
    from .install.wheelcheck import recorded_expectation
    from .verify.job import Verification

    expected = recorded_expectation(record) if record is not None else None
    return Verification(python, expect=expect, host=host, env=env, recipe=recipe,
                        expected=expected, **options)


def record_of_install(python: str, record: Path | None) -> Path | None:
    """`record` when its wheel was installed into `python` (its install.json says so),
    else None: a verification of another interpreter is held against no build and kept
    out of that build's record."""
    if record is None:
        return None
    try:
        installed = json.loads((record / INSTALL_REPORT).read_text("utf-8")).get("python")
    except (OSError, ValueError, AttributeError):
        return None
    return record if installed and same_interpreter(str(installed), python) else None


def same_interpreter(a: str, b: str) -> bool:
    """Whether two interpreter paths are one (the same path, or links to one file)."""
    if not a or not b:
        return False
    try:
        return Path(a).absolute() == Path(b).absolute() or os.path.samefile(a, b)
    except OSError:
        return False


def record_verification(report: VerifyReport, record: Path | None,
                        also: Sequence[Path] = ()) -> list[Path]:
    """Save the verification report in the build record (verify.json) and in `also`;
    returns where it went."""
    text = report.to_json()
    saved = [save_report(record, VERIFY_REPORT, text)] if record is not None else []
    for path in also:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        saved.append(path)
    return saved
