"""The long jobs the last three pages drive, behind small factories tests can replace.

The build runner, installer and verifier live in the core; these adapters only build
their inputs from the wizard's state. A core module that this installation lacks makes
its page say so ("not available in this build") instead of failing.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.events import BuildEvent
from tfwizard.core.host import HostProfile
from tfwizard.core.i18n import _
from tfwizard.core.jobs import Job

from .state import WizardState


class BuildJob(Protocol):
    """What the Build page needs from a build: its events, and a way to stop it."""

    def events(self) -> AsyncIterator[BuildEvent]:
        """The build's events until it ends."""
        ...

    def cancel(self) -> None:
        """Stop the build (from any thread)."""
        ...


BuildFactory = Callable[[WizardState], BuildJob]
#: (state, wheel) -> the install as a long job (tfwizard.core.install.job.Installation)
InstallFactory = Callable[[WizardState, str], Job]
#: (state, python) -> the verification as a long job (tfwizard.core.verify.job.Verification)
VerifyFactory = Callable[[WizardState, str], Job]


@dataclass(frozen=True)
class Jobs:
    """The long jobs the wizard starts, each one replaceable (tests, screenshots, a saved
    profile); None = the real one. Kept whole so a rebuilt wizard gets the same jobs."""

    #: () -> the build host's profile (runs in a thread); None: a host is given, or detect
    detect: Callable[[], HostProfile] | None = None
    build: BuildFactory | None = None
    install: InstallFactory | None = None
    verify: VerifyFactory | None = None
    #: (state, targets) -> a test run as a long job (core/testloop/job.RecipeTestJob)
    test: Callable[[WizardState, Any], Job] | None = None


def missing_core_module(name: str) -> str | None:
    """Why `tfwizard.core.<name>` cannot be used here, or None when it can."""
    try:
        importlib.import_module(f"tfwizard.core.{name}")
    except ImportError as exc:
        return _("tfwizard.core.{name} is not available in this build ({error})").format(
            name=name, error=exc)
    return None


def default_build_job(state: WizardState, *, warm: bool = False) -> BuildJob:
    """A BuildRunner for the state's recipe; the wheel goes to output.dir or the record.
    `warm`: the WarmRunner in the recipe's warm workspace, as `tfwizard build` without
    --fresh (the caller checked that the plan can take that path: warmrun.cold_reason)."""
    from tfwizard.core.building.run import record, runner
    from tfwizard.core.building.run.record import new_build_id
    from tfwizard.core.building.run.sourcefollow import SourceReplan
    from tfwizard.core.building.warm import run as warmrun

    recipe = state.recipe
    # as `tfwizard build` does: after a clone, configure and build follow its own files
    replan = SourceReplan(recipe, make_plan, {
        "build_host": state.build_host, "target_host": state.target_host, "kb": state.kb,
        "recipe_dir": recipe.path.parent if recipe.path else None})
    plan = make_plan(recipe, **replan.kwargs)
    if recipe.remote.executor:
        # as `tfwizard build` does: flags for the image's Bazel (no --disk_cache beside an
        # executor before 5.0), actions pinned to the image's digest (a short container)
        from tfwizard.core.docker.imagefacts import read_image_facts

        facts = read_image_facts(plan.image, os.environ, user=plan.user)
        if facts is not None:
            replan.kwargs.update(image_bazel=facts.bazel, repo_digests=facts.repo_digests)
            plan = make_plan(recipe, **replan.kwargs)
    build_id = new_build_id()
    # relative to the recipe's folder, as `tfwizard build` has it (Recipe.resolve_path);
    # empty = the build record folder (recipe.py), which the runner names by id
    out_dir = recipe.resolve_path("output.dir") or record.record_path(build_id)
    job: runner.BuildRunner
    if warm:  # the same workspace as `tfwizard build` of the saved recipe file
        job = warmrun.WarmRunner(
            plan, recipe_id=str(recipe.path.resolve()) if recipe.path else recipe.name,
            idle_s=warmrun.recipe_idle_s(recipe.build.warm_idle_min), out_dir=out_dir,
            recipe_text=recipe.to_toml(), build_id=build_id)
    else:
        job = runner.BuildRunner(plan, out_dir=out_dir, recipe_text=recipe.to_toml(),
                                 build_id=build_id)
    job.replan = replan
    return job


def default_install(state: WizardState, wheel: str, *, wheel_only: bool = False) -> Job:
    """The core installer for `wheel` (a file, or a requirement such as
    `tensorflow-cpu==2.20.0` that pip downloads first) into the recipe's venv (made if
    missing), created with install.python when one is set. `wheel_only`: replace only the
    TensorFlow wheel (a rebuild into a venv that has its dependencies: core/install/reinstall.py)."""
    from tfwizard.core.install import job as install
    from tfwizard.core.install.requirement import RequirementInstallation, parse_requirement

    inst = state.recipe.install
    target = install_target(state)
    links = state.install_find_links
    if parse_requirement(wheel) is not None:  # its own extras: [and-cuda] when it needs them
        return RequirementInstallation(wheel, target, index_url=inst.index_url,
                                       trusted_host=inst.trusted_host,
                                       find_links=(links,) if links else (),
                                       no_index=bool(links))
    return install.Installation(wheel, target, inst.extras, index_url=inst.index_url,
                                trusted_host=inst.trusted_host,
                                find_links=(links,) if links else (),
                                no_index=bool(links), wheel_only=wheel_only)


def install_target(state: WizardState) -> Any:
    """Where Install puts TensorFlow: the recipe's venv (made if missing), created with
    install.python when one is set, else install.python itself."""
    from tfwizard.core.install.job import resolve_target

    venv = state.recipe.resolve_path("install.venv")
    return resolve_target(venv=venv, python=state.recipe.resolve_path("install.python"),
                          create=venv is not None)


def wheelhouse_install(state: WizardState, url: str) -> Job:
    """The core's install of the wheelhouse's best wheel for this machine into the
    install target, as `tfwizard install --wheelhouse URL` does."""
    from tfwizard.core.errors import TfWizardError
    from tfwizard.core.wheelhouse.fetch import WheelhouseInstallation

    if state.build_host is None:
        raise TfWizardError(_("This machine is still being detected."),
                            _("Wait for Welcome's detection, then install."))
    inst = state.recipe.install
    links = state.install_find_links
    return WheelhouseInstallation(url, install_target(state), host=state.build_host,
                                  kb=state.kb, extras=list(inst.extras),
                                  index_url=inst.index_url, trusted_host=inst.trusted_host,
                                  find_links=(links,) if links else (), no_index=bool(links))


def target_python(state: WizardState) -> str:
    """The interpreter the wheel goes into: install.python, else the venv's python."""
    if state.installed_python:
        return state.installed_python
    from tfwizard.core.install.job import venv_python

    recipe = state.recipe
    python = recipe.resolve_path("install.python")
    if python is not None:
        return str(python)
    venv = recipe.resolve_path("install.venv")
    return str(venv_python(venv)) if venv is not None else ""


def default_verify(state: WizardState, python: str) -> Job:
    """The core's verification of TensorFlow in `python` (the Verify page can cancel it)."""
    from tfwizard.core.install.wheelcheck import recorded_expectation
    from tfwizard.core.verify import job as verify

    # the build's record (when this session built the wheel) keeps what it promised
    expected = recorded_expectation(Path(state.record_dir)) if state.record_dir else None
    return verify.Verification(python, host=state.effective_target, recipe=state.recipe,
                               kb=state.kb, expected=expected)


def render_verify_report(report: Any) -> str:
    """The verification report as the text `tfwizard verify` prints."""
    from tfwizard.core.verify import job as verify

    return str(verify.render_report(report))
