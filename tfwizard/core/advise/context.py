"""What one advice sees (_Ctx), the official wheel it looks at, and the helpers the
package's modules share (names with a leading underscore are private to the package)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import compat
from ..errors import UsageError
from ..findings import Finding, Remedy
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase, OfficialWheel, Release
from .types import BACKENDS, RESOLVING_KINDS, UNKNOWN_CODES, Intent

# -- context --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    kb: KnowledgeBase
    machine: HostProfile
    on_target: bool
    where: str  # "this machine" / "the target machine", translated
    backend: str
    python: str | None  # "3.11"
    arch: str


def _backend(intent: Intent, backend: str | None, machine: HostProfile | None) -> str:
    if backend:
        if backend not in BACKENDS:
            raise UsageError(_("backend must be one of {choices}, not {backend!r}.").format(
                choices=", ".join(BACKENDS), backend=backend))
        return backend
    if intent is Intent.CPU or machine is None:
        return "cpu"
    if machine.nvidia.gpus:
        return "cuda"
    if machine.amd.gpus:
        return "rocm"
    return "cuda" if intent is Intent.GPU else "cpu"


def _python_of(machine: HostProfile, python: str | None) -> str | None:
    if python:
        return compat.xy(python) or python
    current = next((p for p in machine.pythons if p.is_current), None)
    chosen = current or (machine.pythons[0] if machine.pythons else None)
    return compat.xy(chosen.version) if chosen is not None else None


def _find_release(kb: KnowledgeBase, release: str) -> Release:
    rel = kb.release(release)
    if rel is None and release.count(".") == 1:  # a series: "2.18"
        rel = next((r for r in kb.releases if r.series == release), None)
    if rel is None:
        raise UsageError(_("TensorFlow {version!r} is not in the knowledge base.").format(
            version=release), _("Known releases: {releases}.").format(
            releases=", ".join(kb.release_versions())))
    return rel


def _published_releases(kb: KnowledgeBase) -> list[Release]:
    """Releases with official wheels tfwizard read, newest first: finals only (a patch
    release's wheels are its base's in wheels.toml, a release candidate's are not read)."""
    return [r for r in reversed(kb.releases)
            if not r.is_master and not r.is_prerelease and r.patch_of is None]


# -- the wheel --------------------------------------------------------------------------------


def _package(ctx: _Ctx) -> str:
    if ctx.arch == "x86_64" and ctx.backend != "cuda":
        return "tensorflow-cpu"
    return "tensorflow"


def _wheel_and_requirement(ctx: _Ctx, rel: Release) -> tuple[OfficialWheel | None, str | None]:
    """The wheel pip installs for the machine and backend, and the requirement naming it."""
    if rel.is_master or ctx.arch not in ("x86_64", "aarch64"):
        return None, None
    package = _package(ctx)
    wheel = ctx.kb.official_wheel(rel.version, ctx.arch, package)
    if wheel is None:
        return None, None
    extra = "[and-cuda]" if ctx.backend == "cuda" and wheel.kind == "gpu" and wheel.and_cuda \
        else ""
    return wheel, f"{package}{extra}=={wheel.release}"


def _wheel_label(requirement: str | None, rel: Release) -> str:
    return f"`{requirement}`" if requirement else _("TensorFlow {release}").format(
        release=rel.version)


def _install_argv(ctx: _Ctx, requirement: str | None) -> tuple[str, ...]:
    if not requirement:
        return ()
    python = "python3"
    for p in ctx.machine.pythons:
        if compat.xy(p.version) == ctx.python:
            python = p.path
            break
    return (python, "-m", "pip", "install", requirement)


def _build_fixes(ctx: _Ctx, rel: Release, label: str, **fmt: str) -> tuple[Remedy, ...]:
    """A plain source build of `rel` (or of the nearest release whose build takes the Python)."""
    target = _buildable_release(ctx, rel)
    if target is None:
        return ()
    changes: dict[str, Any] = {"tensorflow.version": target.version,
                               "backend.kind": ctx.backend}
    if ctx.python:
        changes["python.version"] = ctx.python
    return (Remedy("build", label.format(release=target.version, **fmt), changes),)


def _buildable_release(ctx: _Ctx, rel: Release) -> Release | None:
    """`rel` if its build takes the Python, else the nearest newer release (master last) whose
    build does."""
    py = compat.as_version(ctx.python)
    if py is None or py in rel.python:
        return rel
    releases = list(ctx.kb.releases)
    index = releases.index(rel)
    for other in releases[index + 1:] + list(reversed(releases[:index])):
        if py in other.python:
            return other
    return None


def _profile_remedy() -> Remedy:
    return Remedy("profile", _("Describe the machine that will run the wheel: run `tfwizard "
                               "detect --json > target.json` there and give that file as the "
                               "target"))


def _classify(findings: list[Finding] | tuple[Finding, ...]) -> str:
    if any(f.code in UNKNOWN_CODES for f in findings):
        return "unknown"
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        kinds = [{r.kind for r in f.fixes} for f in errors]
        if any(not (k & RESOLVING_KINDS) and "build" not in k for k in kinds):
            return "unsupported"
        if any(not (k & RESOLVING_KINDS) for k in kinds):
            return "build"
        return "fixable"
    if any(f.severity == "warning" for f in findings):
        return "official-with-caveats"
    return "official"
