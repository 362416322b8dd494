"""The long jobs the last three pages drive, behind small factories tests can replace.

The pipeline is the core's (core/session.py, which `tfwizard build` calls too: the
check and preflight, warm or cold, the verification's machine and its record file); these
adapters only build its inputs from the wizard's state.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tfwizard.core import session
from tfwizard.core.building.run.events import BuildEvent
from tfwizard.core.host import HostProfile
from tfwizard.core.i18n import _
from tfwizard.core.jobs import Job
from tfwizard.core.session import Prepared

from .state import WizardState

if TYPE_CHECKING:
    from tfwizard.core.testloop.job import RecipeTestJob
    from tfwizard.core.verify.report import VerifyReport


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
    #: (state, targets) -> a test run as a long job
    test: Callable[[WizardState, Any], RecipeTestJob] | None = None


def prepare_inputs(state: WizardState) -> dict[str, Any]:
    """The session's `prepare` arguments for the wizard's recipe and hosts, taken on the
    GUI thread (the call itself runs in another)."""
    recipe = state.recipe
    return {"recipe": recipe, "build_host": state.build_host,
            "target_host": state.target_host, "recipe_path": recipe.path,
            "env": dict(os.environ),
            "plan_options": {"kb": state.kb,
                             "recipe_dir": recipe.path.parent if recipe.path else None}}


def prepare_build(state: WizardState, **options: Any) -> Prepared:
    """The session's prepare (check, plan, refit to the image, preflight) for the wizard's
    recipe and hosts: what Review shows and Start builds; `options` as session.prepare's
    (preflight, force). Blocks (the preflight opens connections and asks Docker): call it
    off the GUI thread."""
    return session.prepare(**prepare_inputs(state), **options)


def default_build_job(state: WizardState, *, warm: bool = True) -> BuildJob:
    """The session's runner for the state's recipe, as `tfwizard build` makes it: warm in
    the recipe's workspace unless `warm` is False or the plan cannot take the warm path;
    refused (TfWizardError, which the Build page shows) when the check or the preflight
    finds an error. The recipe as edited here is what the record keeps."""
    prepared = prepare_build(state)
    return session.start(prepared, fresh=not warm, recipe_text=state.recipe.to_toml()).runner


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
    """The session's verification of TensorFlow in `python` (the Verify page can cancel
    it), judged on this machine, where the probe runs, as `tfwizard verify` judges it;
    held against what this session's build record says its wheel had to be when that
    wheel was installed into `python`."""
    record = session.record_of_install(
        python, Path(state.record_dir) if state.record_dir else None)
    return session.verify_installed(python, session.verification_host(state.build_host),
                                    recipe=state.recipe, kb=state.kb, record=record)


def record_install(state: WizardState, result: Any, argv: Sequence[str]) -> None:
    """Keep the install of this session's wheel in its build record (install.json), as
    `tfwizard build --install` does."""
    record = Path(state.record_dir) if state.record_dir else None
    if record is not None and record.is_dir() and state.wheel \
            and Path(result.wheel).name == Path(state.wheel).name:
        session.record_install(result, argv, record)


def record_verification(state: WizardState, report: Any) -> None:
    """Keep a verification of this session's build in its record (verify.json), as
    `tfwizard build --verify` and `tfwizard verify --build` do."""
    record = session.record_of_install(
        report.python, Path(state.record_dir) if state.record_dir else None)
    if record is not None and record.is_dir():
        session.record_verification(report, record)


def render_verify_report(report: VerifyReport) -> str:
    """The verification report as the text `tfwizard verify` prints."""
    from tfwizard.core.verify import job as verify

    return str(verify.render_report(report))
