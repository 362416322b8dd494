"""The plan's remote execution decisions: which Bazel runs, and the flags it gets.

With `remote.executor` set, the flags depend on the Bazel that runs (bazelversion.py,
resources/knowledge/bazel.toml) and on the build image: every action carries
`container-image=docker://<build image>` (pinned by its repo digest where Docker knows
one) unless `remote.exec_properties` says otherwise, `--jobs` follows the service
(`remote.jobs`), and the disk cache is left out for a Bazel that refuses it beside an
executor (before 5.0, or an unknown version: the safe side).

The recipe's TLS files (remote/tls.py) reach Bazel as --tls_* flags naming their paths in
the container.

The Bazel version comes, in this order, from the image (`bazel --version` in a short
container, `image_bazel_version`, which the build's preflight runs), the source's
`.bazelversion`, and the release's knowledge.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ... import bazelversion as bv
from ...bazelfacts import load_bazel_facts
from ...i18n import _
from ...knowledge import Release
from ...recipe import Recipe, RemoteSection
from ...remote.tls import tls_files
from .flags import Flag

#: the exec_properties entry that stands for the build image's container-image
AUTO = "auto"


def bazel_report(recipe: Recipe, release: Release, *, recipe_dir: Path | None = None,
                 image: bv.BazelVersion | None = None) -> bv.BazelVersionReport:
    """The Bazel of a build: the image's answer, the source's .bazelversion, the release's
    knowledge (the first known one wins)."""
    source = recipe.resolve_path("tensorflow.source_dir", base=recipe_dir)
    return bv.resolve(image=image,
                      bazelversion=bv.read_bazelversion(source) if source else None,
                      release=bv.from_release(release.bazel))


def exec_properties(remote: RemoteSection, image: str,
                    repo_digests: Sequence[str] = ()) -> list[str]:
    """remote.exec_properties with "auto" made the build image's container-image (they
    matter with an executor only: without one they come back as written)."""
    if not remote.executor or AUTO not in remote.exec_properties:
        return list(remote.exec_properties)
    from ...remote.reapi import container_image_property  # the REAPI client: remote recipes only

    return [container_image_property(image, repo_digests) if item == AUTO else item
            for item in remote.exec_properties]


def disk_cache_allowed(remote: RemoteSection, report: bv.BazelVersionReport) -> bool:
    """Whether --disk_cache may stay: always without an executor; with one, from Bazel 5.0
    (an unknown version: no)."""
    return not remote.executor or bv.disk_cache_with_executor_ok(report.version)


def remote_jobs(remote: RemoteSection) -> tuple[int, str]:
    """(--jobs, why) with an executor: remote.jobs, else bazel.toml's default."""
    if remote.jobs:
        return remote.jobs, _("remote.jobs: actions in flight on the remote service")
    default = load_bazel_facts().remote_defaults.jobs
    return default, _("remote execution: {jobs} actions in flight (the default; set "
                      "remote.jobs to your service's capacity)").format(jobs=default)


def execution_flags(remote: RemoteSection, properties: Sequence[str]) -> list[Flag]:
    """--remote_timeout, --remote_retries, --remote_local_fallback and the platform
    properties of every action (a cache alone gets timeout and retries only when set)."""
    defaults = load_bazel_facts().remote_defaults
    flags: list[Flag] = []
    timeout = remote.timeout or (defaults.timeout_s if remote.executor else 0)
    if timeout and (remote.executor or remote.cache):
        flags.append(Flag(f"--remote_timeout={timeout}",
                          _("bound on every remote call, in seconds (remote.timeout)")))
    if remote.retries != defaults.retries and (remote.executor or remote.cache):
        flags.append(Flag(f"--remote_retries={remote.retries}",
                          _("retries of a transient remote error (remote.retries)")))
    if remote.executor or remote.cache:
        # else Bazel uploads the files the BEP file names to the remote cache, and a
        # service gone mid-build fails a finished build with exit 38 (tfwizard-testing)
        flags.append(Flag("--nobuild_event_json_file_path_conversion",
                          _("the BEP file names local files: nothing is uploaded for it, so "
                            "a remote service that went away cannot fail a finished build")))
    if not remote.executor:
        return flags
    if remote.local_fallback:
        flags.append(Flag("--remote_local_fallback",
                          _("run an action here when its remote execution fails "
                            "(remote.local_fallback)")))
    flags.extend(Flag(f"--remote_default_exec_properties={prop}",
                      _("the platform every remote action asks for (remote.exec_properties)"))
                 for prop in properties)
    return flags


def no_disk_cache_note(report: bv.BazelVersionReport) -> str:
    """The plan's note when the disk cache is left out beside an executor."""
    return _("remote execution with Bazel {version}: no --disk_cache (Bazel before 5.0 "
             "refuses it beside --remote_executor; an unknown version is treated so)").format(
                 version=str(report.effective) if report.effective else _("unknown"))


def tls_flags(recipe: Recipe) -> list[Flag]:
    """--tls_certificate, --tls_client_certificate, --tls_client_key (container paths)."""
    why = {"remote.tls_certificate": _("the CA that signed the remote service's certificate "
                                       "(remote.tls_certificate, mounted read-only)"),
           "remote.tls_client_certificate": _("client certificate for the remote service "
                                              "(remote.tls_client_certificate, mounted "
                                              "read-only)"),
           "remote.tls_client_key": _("client key for the remote service "
                                      "(remote.tls_client_key, mounted read-only)")}
    return [Flag(f"{f.flag}={f.target}", why[f.key]) for f in tls_files(recipe)]
