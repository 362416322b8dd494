"""Rules on the CUDA and cuDNN versions a release is built with."""

from __future__ import annotations

from packaging.version import Version

from ..compat import as_version, major_minor, version_number
from ..defaults import driver_cuda, release_cuda_lists
from ..findings import Fix
from ..i18n import _
from ..knowledge import RedistList, Release
from ..recipe import AND_CUDA, extras_for_backend
from ..vocab import Severity
from .context import Ctx


def _closest(wanted: str, options: tuple[str, ...] | list[str]) -> str | None:
    wv = as_version(wanted)
    if wv is None or not options:
        return options[-1] if options else None
    same_minor = [o for o in options if major_minor(o) == (wv.major, wv.minor)]
    if same_minor:
        return same_minor[-1]
    same_major = [o for o in options if (as_version(o) or Version("0")).major == wv.major]
    pool = same_major or list(options)
    return min(pool, key=lambda o: abs(version_number(o) - version_number(wanted)))


def _unverified_list(redist: RedistList, rel: Release) -> str:
    """The sentence a list finding gets when the release's list is inferred (a warning)."""
    if not redist.unverified:
        return ""
    return " " + _("Which list TensorFlow {version} pins is UNVERIFIED ({name} is the nearest "
                   "evidence), so this is a warning; the build may still accept it.").format(
                       version=rel.version, name=redist.name)


def rule_cuda_versions(ctx: Ctx) -> None:
    """The CUDA and cuDNN versions must be ones the release is built and tested with."""
    r, rel = ctx.recipe, ctx.release
    if r.backend.kind != "cuda" or rel is None:
        return
    cuda, cudnn = r.cuda.version, r.cuda.cudnn
    if rel.hermetic_cuda:
        _hermetic_findings(ctx)
    else:
        if cuda and major_minor(cuda) != major_minor(rel.tested_cuda):
            ctx.add("CUDA_NOT_TESTED", "warning",
                    _("TensorFlow {version} predates hermetic CUDA: it builds against the CUDA "
                      "installed in the build image, tested with CUDA {tested}. CUDA {cuda} "
                      "needs an image that has it.").format(version=rel.version,
                                                            tested=rel.tested_cuda, cuda=cuda),
                    ["tf-source-md"], "cuda.version",
                    Fix(_("Use CUDA {version}").format(version=rel.tested_cuda),
                        {"cuda.version": rel.tested_cuda}))
        if not cuda:
            ctx.add("CUDA_MISSING", "error", _("backend is cuda but cuda.version is empty."),
                    ["tf-source-md"], "cuda.version",
                    Fix(_("Use CUDA {version}").format(version=rel.tested_cuda),
                        {"cuda.version": rel.tested_cuda}))
    cv = as_version(cuda) if cuda else None
    wheel_major = (as_version(rel.wheel_cuda) or Version("0")).major
    if cv is not None and rel.and_cuda and AND_CUDA in r.install.extras and cv.major != wheel_major:
        ctx.add("AND_CUDA_MAJOR", "warning",
                _("TensorFlow {version}'s [and-cuda] extra installs CUDA {wheel_major} pip "
                  "libraries, but this wheel is built for CUDA {major}; install it without "
                  "[and-cuda] and provide CUDA {major} libraries.")
                .format(version=rel.version, wheel_major=wheel_major, major=cv.major),
                ["pypi-wheels"], "install.extras", Fix(_("Install without [and-cuda]"),
                                                       {"install.extras": []}))
    if rel.and_cuda and AND_CUDA not in r.install.extras and (cv is None or
                                                              cv.major == wheel_major):
        ctx.add("AND_CUDA_MISSING", "warning",
                _("This CUDA recipe installs the wheel without its [and-cuda] extra: unless "
                  "the target machine has CUDA {major} libraries of its own, TensorFlow finds "
                  "none and runs on the CPU only (\"Could not find cuda drivers\").").format(
                    major=wheel_major), ["pypi-wheels"], "install.extras",
                Fix(_("Install with [and-cuda]"),
                    {"install.extras": extras_for_backend("cuda", r.install.extras)}))
    if cudnn and cv is not None:
        compat = ctx.kb.cudnn_compat(cudnn)
        if compat is not None and cv.major not in compat.cuda_majors:
            ctx.add("CUDNN_CUDA_MAJOR", "error",
                    _("cuDNN {cudnn} has builds for CUDA {majors}.x, not CUDA {major}.")
                    .format(cudnn=cudnn, majors=", ".join(map(str, compat.cuda_majors)),
                            major=cv.major),
                    compat.sources, "cuda.cudnn")


def _hermetic_findings(ctx: Ctx) -> None:
    """Hermetic CUDA: the versions must be in the release's CUDA/cuDNN redistribution list."""
    r, rel = ctx.recipe, ctx.release
    assert rel is not None
    cuda, cudnn = r.cuda.version, r.cuda.cudnn
    redist = ctx.kb.redist.get(rel.cuda_list or "")
    if not cuda:
        # the default, or the newest the target's driver runs (as `recipe new --target`)
        pick = driver_cuda(rel, release_cuda_lists(ctx.kb, rel)[0], ctx.target)
        ctx.add("CUDA_MISSING", "error", _("backend is cuda but cuda.version is empty."),
                rel.sources, "cuda.version",
                Fix(_("Use CUDA {version}").format(version=pick), {"cuda.version": pick}))
    elif redist is not None and cuda not in redist.cuda:
        best = _closest(cuda, redist.cuda)
        in_range = redist.cuda[0] <= cuda and version_number(cuda) <= version_number(redist.cuda[-1])
        sev: Severity = "warning" if redist.unverified or (not redist.complete and in_range) \
            else "error"
        ctx.add("CUDA_NOT_SUPPORTED", sev,
                _("Hermetic CUDA {cuda} is not in TensorFlow {version}'s list; the build "
                  "would stop with \"The supported CUDA versions are [...]\". Listed: "
                  "{listed}.").format(cuda=cuda, version=rel.version,
                                      listed=", ".join(redist.cuda))
                + _unverified_list(redist, rel), redist.sources, "cuda.version",
                Fix(_("Use CUDA {version}").format(version=best), {"cuda.version": best})
                if best else None)
    elif redist is not None and cuda in redist.cuda_without_nccl:
        best = _closest(cuda, [c for c in redist.cuda if c not in redist.cuda_without_nccl])
        ctx.add("CUDA_NO_NCCL_WHEEL", "warning",
                _("TensorFlow {version}'s list has CUDA {cuda}, but its CUDA_NCCL_WHEELS has "
                  "no NCCL wheel for it: the NCCL repository rule would stop with \"The "
                  "supported NCCL versions are [...]\" unless cuda.local_nccl_path is set "
                  "(read from the list; the rule's code at this release was not read).")
                .format(version=rel.version, cuda=cuda), redist.sources, "cuda.version",
                Fix(_("Use CUDA {version}").format(version=best), {"cuda.version": best})
                if best and not r.cuda.local_nccl_path else None)
    if not cudnn:
        ctx.add("CUDNN_MISSING", "error", _("backend is cuda but cuda.cudnn is empty."),
                rel.sources, "cuda.cudnn",
                Fix(_("Use cuDNN {version}").format(version=rel.hermetic_cudnn_default),
                    {"cuda.cudnn": rel.hermetic_cudnn_default}))
    elif redist is not None and cudnn not in redist.cudnn:
        best = _closest(cudnn, redist.cudnn)
        sev = "warning" if redist.unverified or not redist.complete else "error"
        ctx.add("CUDNN_NOT_SUPPORTED", sev,
                _("Hermetic cuDNN {cudnn} is not in TensorFlow {version}'s list. Listed: "
                  "{listed}.").format(cudnn=cudnn, version=rel.version,
                                      listed=", ".join(redist.cudnn))
                + _unverified_list(redist, rel), redist.sources, "cuda.cudnn",
                Fix(_("Use cuDNN {version}").format(version=best), {"cuda.cudnn": best})
                if best else None)
