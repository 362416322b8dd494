"""Rules on the TensorFlow release, the git ref and the Python version."""

from __future__ import annotations

import re

from packaging.version import Version

from ..compat import as_version
from ..findings import Fix
from ..i18n import _
from ..knowledge import recipe_python
from .context import Ctx


def rule_release(ctx: Ctx) -> None:
    """The release must be in the knowledge base, and named (else master is assumed)."""
    tf = ctx.recipe.tensorflow
    if ctx.release is None:
        latest = ctx.kb.latest_release().version
        ctx.add("RELEASE_UNKNOWN", "error",
                _("TensorFlow {version!r} is not in the knowledge base; checks cannot run.")
                .format(version=tf.version),
                key="tensorflow.version",
                fix=Fix(_("Use {version}").format(version=latest),
                        {"tensorflow.version": latest}))
        return
    if not tf.version and ctx.release.is_master:  # a checkout's own version decides else
        ctx.add("RELEASE_ASSUMED_MASTER", "info",
                _("No tensorflow.version: the checks use what is known about master. Set the "
                  "release your ref or checkout belongs to for exact checks."),
                ["tf-ci-official"], "tensorflow.version")
    if ctx.release.is_prerelease:
        ctx.add("RELEASE_PRERELEASE", "info",
                _("TensorFlow {version} is a pre-release (a release candidate, tag {tag}): "
                  "the final release may change; its facts here come from its wheel and are "
                  "partly UNVERIFIED, and the build follows the clone's own files.").format(
                    version=ctx.release.version, tag=ctx.release.git_tag),
                ctx.release.sources, "tensorflow.version")
    if ctx.release.unverified and ctx.release.is_master:
        ctx.add("RELEASE_MASTER_MOVES", "warning",
                _("master changes daily: Python range, compiler and hermetic defaults for "
                  "master are not verified; prefer a release tag for a reproducible build."),
                ctx.release.sources, "tensorflow.version")


def rule_git_ref(ctx: Ctx) -> None:
    """A tensorflow.ref that looks like an abbreviated commit hash (git cannot fetch one)."""
    tf = ctx.recipe.tensorflow
    if tf.source_dir or not re.fullmatch(r"[0-9a-f]{7,39}", tf.ref):
        return
    ctx.add("REF_ABBREVIATED_COMMIT", "warning",
            _("tensorflow.ref {ref!r} looks like an abbreviated commit hash: git fetches a "
              "branch, a tag or a full 40-character commit, not a short hash, so the fetch "
              "step would fail. Use the full hash (`git rev-parse {ref}` in a checkout).").format(
                ref=tf.ref),
            ["git-docs"], "tensorflow.ref")


def rule_python(ctx: Ctx) -> None:
    """The Python version must be one the release supports."""
    rel = ctx.release
    if rel is None:
        return
    py = recipe_python(ctx.recipe, rel)
    pv = as_version(py)
    if pv is None:
        return
    if pv not in rel.python:
        best = min(rel.pythons, key=lambda p: abs(as_version(p).minor - pv.minor))  # type: ignore[union-attr]
        ctx.add("PYTHON_RANGE", "error",
                _("Python {python} is outside TensorFlow {version}'s tested range "
                  "({first}-{last}); the build image and the hermetic Python lock files exist "
                  "only for those.").format(python=py, version=rel.version,
                                            first=rel.pythons[0], last=rel.pythons[-1]),
                ["tf-source-md", "pypi-wheels"], "python.version",
                Fix(_("Use Python {version}").format(version=best), {"python.version": best}))
    numpy = rel.numpy_for(py)
    if str(numpy):
        if Version("2.0.0") not in numpy:
            text = _("The wheel needs numpy {numpy} in the install target (NumPy 2 is not "
                     "supported: wheels built on 1.x fail with _ARRAY_API not found); pip "
                     "resolves it when installing.")
        else:
            text = _("The wheel needs numpy {numpy} in the install target; pip resolves it "
                     "when installing.")
        ctx.add("NUMPY_RANGE", "info", text.format(numpy=numpy), ["pypi-wheels"],
                "install.venv")
    target = ctx.target
    if target is not None and target.pythons and not ctx.target_is_build_host:
        versions = {".".join((p.version or "").split(".")[:2]) for p in target.pythons}
        if py not in versions:
            ctx.add("PYTHON_NOT_ON_TARGET", "warning",
                    _("The target machine's interpreters are {versions}; a {tag} wheel will "
                      "not install there.").format(versions=", ".join(sorted(versions)),
                                                   tag="cp" + py.replace(".", "")),
                    ["pypi-wheels"], "python.version")
