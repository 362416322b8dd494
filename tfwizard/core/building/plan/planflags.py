"""Every Bazel flag of a build, composed from the named groups of flags.py (and the remote
execution decisions of remoteexec.py) in the order Bazel gets them."""

from __future__ import annotations

from packaging.version import Version

from ...host import HostProfile
from ...knowledge import KnowledgeBase, Release
from ...recipe import Recipe
from ...toolchain import cxx_toolchain
from . import flags as fl
from . import remote as rx
from .flags import Flag, resource_limits


def plan_flags(recipe: Recipe, release: Release, *, kb: KnowledgeBase, python: str,
               wheel_name: str, volumes: dict[str, str],
               build_host: HostProfile | None, properties: list[str] | None = None,
               bazel: Version | None = None) -> list[Flag]:
    """Every Bazel flag of the build, by group (flags.py), in the order Bazel gets them.

    With an executor, --jobs follows remote.jobs (the service's capacity), and
    `properties` are the actions' platform properties (remoteexec.exec_properties);
    `bazel` is the Bazel that runs, when known (the resource flags take its form)."""
    gib_per_job = float(kb.platforms["memory"]["gib_per_job"])
    toolchain = cxx_toolchain(recipe, release)
    jobs: int | None
    if recipe.remote.executor:
        _jobs, ram_mb, _why = resource_limits(build_host, 0, gib_per_job)
        jobs, why = rx.remote_jobs(recipe.remote)
    else:
        jobs, ram_mb, why = resource_limits(build_host, recipe.build.jobs, gib_per_job)
    return fl.grouped({
        "progress": fl.progress_flags(),
        "wheel": fl.wheel_flags(release, wheel_name),
        "backend": fl.backend_flags(release, recipe.backend.kind),
        "python": fl.python_flags(release, python),
        "compiler": [*fl.toolchain_flags(toolchain, release, recipe.backend.kind),
                     *fl.compiler_flags(toolchain, kb)],
        "caches": fl.cache_flags(volumes),
        "resources": fl.resource_flags(release, build_host, jobs, why, ram_mb, kb, bazel),
        "remote": [*fl.remote_flags(recipe.remote),
                   *rx.execution_flags(recipe.remote, properties or []),
                   *rx.tls_flags(recipe)],
        "network": fl.network_flags(recipe),
        "user": fl.user_flags(recipe),
    })
