"""Live compatibility rules: (recipe, build host, target host) -> findings.

Each finding says what will break (or is worth knowing) before a multi-hour build, why,
where the fact comes from (knowledge-base source keys) and, where possible, a fix as a
recipe change the GUI applies in one click. Facts come from the knowledge base; the
rules only combine them. Evaluation is pure and fast (the GUI re-checks on every change).

Messages and fix labels are made in the current language (`_()`; the knowledge-base texts
a message quotes whole through `translate()`, their translations are the knowledge
area's, see `knowledge.display_texts`); codes, keys, sources and a fix's `changes` are for
machines and stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from packaging.version import InvalidVersion, Version

from . import cc as ccmod
from .host import HostProfile
from .i18n import _, translate
from .knowledge import KnowledgeBase, RedistList, Release, load_knowledge, recipe_python
from .recipe import Recipe
from .vocab import Severity, severity_order


@dataclass(frozen=True)
class Fix:
    label: str
    changes: dict[str, Any]


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    sources: tuple[str, ...] = ()
    key: str = ""  # the recipe key it is about
    fix: Fix | None = None

    def to_dict(self, kb: KnowledgeBase | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "key": self.key,
            "sources": list(self.sources),
            "fix": None if self.fix is None else {"label": self.fix.label,
                                                  "changes": self.fix.changes},
        }
        if kb is not None:
            data["source_titles"] = [kb.sources[s].title for s in self.sources if s in kb.sources]
        return data


@lru_cache(maxsize=4096)
def _v(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _mm(text: str) -> tuple[int, int] | None:
    v = _v(text)
    return (v.major, v.minor) if v is not None else None


@dataclass
class _Ctx:
    recipe: Recipe
    kb: KnowledgeBase
    release: Release | None
    build: HostProfile | None
    target: HostProfile | None
    target_is_build_host: bool
    out: list[Finding] = field(default_factory=list)

    def add(self, code: str, severity: Severity, message: str, sources: tuple[str, ...] | list[str] = (),
            key: str = "", fix: Fix | None = None) -> None:
        self.out.append(Finding(code, severity, message, tuple(sources), key, fix))


Rule = Callable[[_Ctx], None]


def evaluate(
    recipe: Recipe,
    build_host: HostProfile | None = None,
    target_host: HostProfile | None = None,
    kb: KnowledgeBase | None = None,
) -> list[Finding]:
    """All findings for a recipe, errors first. target_host None = the build host."""
    from .build.plan import auto_host  # "auto" and the target: one rule for check, plan and build

    kb = kb or load_knowledge()
    release = kb.release_for(recipe)
    ctx = _Ctx(recipe, kb, release, build_host, auto_host(build_host, target_host),
               target_host is None)
    for rule in RULES:
        rule(ctx)
    return sort_findings(ctx.out)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes (stable within each)."""
    return sorted(findings, key=lambda f: severity_order(f.severity))


def errors(findings: list[Finding]) -> list[Finding]:
    """The findings that stop a build."""
    return [f for f in findings if f.severity == "error"]


# -- release and Python ---------------------------------------------------------------


def rule_release(ctx: _Ctx) -> None:
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
    if not tf.version:
        ctx.add("RELEASE_ASSUMED_MASTER", "info",
                _("No tensorflow.version: the checks use what is known about master. Set the "
                  "release your ref or checkout belongs to for exact checks."),
                ["tf-ci-official"], "tensorflow.version")
    if ctx.release.unverified and ctx.release.is_master:
        ctx.add("RELEASE_MASTER_MOVES", "warning",
                _("master changes daily: Python range, compiler and hermetic defaults for "
                  "master are not verified; prefer a release tag for a reproducible build."),
                ctx.release.sources, "tensorflow.version")


def rule_git_ref(ctx: _Ctx) -> None:
    tf = ctx.recipe.tensorflow
    if tf.source_dir or not re.fullmatch(r"[0-9a-f]{7,39}", tf.ref):
        return
    ctx.add("REF_ABBREVIATED_COMMIT", "warning",
            _("tensorflow.ref {ref!r} looks like an abbreviated commit hash: git fetches a "
              "branch, a tag or a full 40-character commit, not a short hash, so the fetch "
              "step would fail. Use the full hash (`git rev-parse {ref}` in a checkout).").format(
                ref=tf.ref),
            ["git-docs"], "tensorflow.ref")


def rule_python(ctx: _Ctx) -> None:
    rel = ctx.release
    if rel is None:
        return
    py = recipe_python(ctx.recipe, rel)
    pv = _v(py)
    if pv is None:
        return
    if pv not in rel.python:
        best = min(rel.pythons, key=lambda p: abs(_v(p).minor - pv.minor))  # type: ignore[union-attr]
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


# -- CUDA / cuDNN versions ------------------------------------------------------------


def _closest(wanted: str, options: tuple[str, ...] | list[str]) -> str | None:
    wv = _v(wanted)
    if wv is None or not options:
        return options[-1] if options else None
    same_minor = [o for o in options if _mm(o) == (wv.major, wv.minor)]
    if same_minor:
        return same_minor[-1]
    same_major = [o for o in options if (_v(o) or Version("0")).major == wv.major]
    pool = same_major or list(options)
    return min(pool, key=lambda o: abs(_num(o) - _num(wanted)))


def _num(text: str) -> float:
    v = _v(text)
    if v is None:
        return 0.0
    parts = (list(v.release) + [0, 0, 0])[:3]
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


def _unverified_list(redist: RedistList, rel: Release) -> str:
    """The sentence a list finding gets when the release's list is inferred (a warning)."""
    if not redist.unverified:
        return ""
    return " " + _("Which list TensorFlow {version} pins is UNVERIFIED ({name} is the nearest "
                   "evidence), so this is a warning; the build may still accept it.").format(
                       version=rel.version, name=redist.name)


def rule_cuda_versions(ctx: _Ctx) -> None:
    r, rel = ctx.recipe, ctx.release
    if r.backend.kind != "cuda" or rel is None:
        return
    cuda, cudnn = r.cuda.version, r.cuda.cudnn
    if rel.hermetic_cuda:
        redist = ctx.kb.redist.get(rel.cuda_list or "")
        if not cuda:
            ctx.add("CUDA_MISSING", "error", _("backend is cuda but cuda.version is empty."),
                    rel.sources, "cuda.version",
                    Fix(_("Use CUDA {version}").format(version=rel.hermetic_cuda_default),
                        {"cuda.version": rel.hermetic_cuda_default}))
        elif redist is not None and cuda not in redist.cuda:
            best = _closest(cuda, redist.cuda)
            in_range = redist.cuda[0] <= cuda and _num(cuda) <= _num(redist.cuda[-1])
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
    else:
        if cuda and _mm(cuda) != _mm(rel.tested_cuda):
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
    cv = _v(cuda) if cuda else None
    wheel_major = (_v(rel.wheel_cuda) or Version("0")).major
    if cv is not None and rel.and_cuda and "and-cuda" in r.install.extras and cv.major != wheel_major:
        ctx.add("AND_CUDA_MAJOR", "warning",
                _("TensorFlow {version}'s [and-cuda] extra installs CUDA {wheel_major} pip "
                  "libraries, but this wheel is built for CUDA {major}; install it without "
                  "[and-cuda] and provide CUDA {major} libraries.")
                .format(version=rel.version, wheel_major=wheel_major, major=cv.major),
                ["pypi-wheels"], "install.extras", Fix(_("Install without [and-cuda]"),
                                                       {"install.extras": []}))
    if cudnn and cv is not None:
        compat = ctx.kb.cudnn_compat(cudnn)
        if compat is not None and cv.major not in compat.cuda_majors:
            ctx.add("CUDNN_CUDA_MAJOR", "error",
                    _("cuDNN {cudnn} has builds for CUDA {majors}.x, not CUDA {major}.")
                    .format(cudnn=cudnn, majors=", ".join(map(str, compat.cuda_majors)),
                            major=cv.major),
                    compat.sources, "cuda.cudnn")


# -- driver -------------------------------------------------------------------------------


def _toolkit_driver(ctx: _Ctx, cuda: str) -> str | None:
    v = _v(cuda)
    if v is None:
        return None
    parts = (list(v.release) + [0, 0])[:3]
    exact = ".".join(map(str, parts))
    if exact in ctx.kb.toolkit_driver:
        return ctx.kb.toolkit_driver[exact]
    same = sorted((k for k in ctx.kb.toolkit_driver if _mm(k) == (parts[0], parts[1])),
                  key=_num)
    return ctx.kb.toolkit_driver[same[0]] if same else None


def rule_driver(ctx: _Ctx) -> None:
    r, t = ctx.recipe, ctx.target
    if r.backend.kind != "cuda" or t is None or not r.cuda.version:
        return
    nv = t.nvidia
    if nv.status == "mismatch":
        ctx.add("DRIVER_MISMATCH", "error",
                _("The target's NVIDIA kernel module and user library come from different "
                  "driver builds (Driver/library version mismatch): nothing CUDA will run until "
                  "it is rebooted or one driver version is reinstalled."),
                ["tf-gpu-device", "nvml-api"], "target.host_profile")
        return
    if not nv.driver_version:
        if ctx.target_is_build_host and not nv.gpus:
            ctx.add("NO_GPU_HERE", "info",
                    _("This machine has no NVIDIA GPU: that is fine for building (hermetic "
                      "CUDA needs no GPU), but nothing can check the machine that will run the "
                      "wheel. Save its profile there with `tfwizard detect --json > target.json`"
                      " and set target.host_profile (or pass --target)."),
                    ["xla-hermetic-cuda"], "target.host_profile")
        return
    cv = _v(r.cuda.version)
    if cv is None:
        return
    floor = ctx.kb.driver_floor(cv.major)
    system = t.os.system
    driver = _v(nv.driver_version)
    if floor is None or driver is None:
        return
    needed = floor.windows if system == "windows" and floor.windows else floor.linux
    here = ctx.target_is_build_host
    if driver < Version(needed):
        supported = nv.cuda_driver_version or ""
        fix = None
        rel = ctx.release
        if supported and rel is not None and rel.hermetic_cuda:
            redist = ctx.kb.redist.get(rel.cuda_list or "")
            ok = [c for c in (redist.cuda if redist else ()) if _floor_ok(ctx, c, driver, system)]
            if ok:
                fix = Fix(_("Use CUDA {version} (runs on driver {driver})")
                          .format(version=ok[-1], driver=nv.driver_version),
                          {"cuda.version": ok[-1]})
        if supported and here:
            text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; this machine has "
                     "{driver} (supports CUDA up to {supported}). Upgrade the driver there, or "
                     "build with an older CUDA.")
        elif supported:
            text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; the target "
                     "machine has {driver} (supports CUDA up to {supported}). Upgrade the "
                     "driver there, or build with an older CUDA.")
        elif here:
            text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; this machine has "
                     "{driver}. Upgrade the driver there, or build with an older CUDA.")
        else:
            text = _("CUDA {major}.x needs NVIDIA driver >= {needed} on {os}; the target "
                     "machine has {driver}. Upgrade the driver there, or build with an older "
                     "CUDA.")
        ctx.add("DRIVER_TOO_OLD", "error",
                text.format(major=cv.major, needed=needed,
                            os="Windows" if system == "windows" else "Linux",
                            driver=nv.driver_version, supported=supported),
                floor.sources, "cuda.version", fix)
        return
    # PTX: minor-version compatibility does not cover JIT of PTX from a newer toolkit
    targets = _targets(ctx)
    tk_driver = _toolkit_driver(ctx, r.cuda.version)
    if not targets or tk_driver is None or driver >= Version(tk_driver):
        return
    for gpu in t.nvidia.gpus:
        if gpu.error or not gpu.compute_capability:
            continue
        cov = ccmod.coverage(targets, gpu.compute_capability,
                             tegra_mismatch=ctx.kb.is_tegra(gpu.compute_capability))
        if cov.needs_jit:
            text = _("GPU {index} ({name}) has no cubin in this build and must JIT the PTX, "
                     "which needs a driver at least as new as the toolkit (CUDA {cuda} -> >= "
                     "{needed}); this machine has {driver}.") if here else \
                _("GPU {index} ({name}) has no cubin in this build and must JIT the PTX, "
                  "which needs a driver at least as new as the toolkit (CUDA {cuda} -> >= "
                  "{needed}); the target machine has {driver}.")
            ctx.add("PTX_DRIVER", "error",
                    text.format(index=gpu.index, name=gpu.name or gpu.compute_capability,
                                cuda=r.cuda.version, needed=tk_driver,
                                driver=nv.driver_version),
                    ["cuda-compat", "cuda-release-notes"], "cuda.compute_capabilities",
                    _add_cc_fix(ctx, gpu.compute_capability))


def _floor_ok(ctx: _Ctx, cuda: str, driver: Version, system: str) -> bool:
    v = _v(cuda)
    floor = ctx.kb.driver_floor(v.major) if v else None
    if floor is None:
        return False
    needed = floor.windows if system == "windows" and floor.windows else floor.linux
    return driver >= Version(needed)


# -- compute capabilities -------------------------------------------------------------


def _targets(ctx: _Ctx) -> list[ccmod.Target]:
    gpus = ctx.target.nvidia_ccs() if ctx.target is not None else []
    tokens = ccmod.expand(list(ctx.recipe.cuda.compute_capabilities), gpus)
    return [t for t in (ccmod.parse_target(x) for x in tokens) if t is not None]


def _add_cc_fix(ctx: _Ctx, cc: str) -> Fix | None:
    parsed = ccmod.parse_cc(cc)
    if parsed is None:
        return None
    token = ccmod.token(*parsed)
    current = list(ctx.recipe.cuda.compute_capabilities)
    if token in current:
        return None
    return Fix(_("Add {token}").format(token=token),
               {"cuda.compute_capabilities": current + [token]})


def _clang_major(ctx: _Ctx) -> int | None:
    clang = ctx.recipe.toolchain.clang
    return int(clang) if clang.isdigit() else None


def rule_compute_capabilities(ctx: _Ctx) -> None:
    r, rel = ctx.recipe, ctx.release
    if r.backend.kind != "cuda":
        return
    tokens = list(r.cuda.compute_capabilities)
    official = list(rel.wheel_compute_capabilities) if rel else []
    key = "cuda.compute_capabilities"
    if not tokens:
        ctx.add("CC_EMPTY", "error",
                _("No compute capabilities: configure.py would fall back to its default "
                  "3.5,7.0, which CUDA 12 and clang 17+ cannot build."),
                ["tf-configure-goldens", "tf-configure-py"], key,
                Fix(_("Use the official wheel's list"), {key: official}) if official else None)
        return
    gpus = ctx.target.nvidia_ccs() if ctx.target is not None else []
    if "auto" in tokens and not gpus:
        ctx.add("CC_AUTO_NO_GPU", "error",
                _('"auto" takes the target machine\'s GPUs, but this machine has no NVIDIA '
                  "GPU. Name the capabilities, or set target.host_profile to the machine that "
                  "will run the wheel.") if ctx.target_is_build_host else
                _('"auto" takes the target machine\'s GPUs, but the target profile lists no '
                  "NVIDIA GPU. Name the capabilities, or set target.host_profile to the machine "
                  "that will run the wheel."),
                ["tf-configure-py"], key,
                Fix(_("Use the official wheel's list"), {key: official}) if official else None)
    if sorted(t for t in tokens if t != "auto") == ["3.5", "7.0"]:
        ctx.add("CC_TF_DEFAULT", "error",
                _("3.5,7.0 is configure.py's default list; sm_35 cannot be built by CUDA >= 12 "
                  "or clang >= 17 for CUDA 12."),
                ["tf-configure-py", "clang-cuda"], key,
                Fix(_("Use the official wheel's list"), {key: official}) if official else None)
    cv = _v(r.cuda.version) if r.cuda.version else None
    clang = _clang_major(ctx) if r.cuda.compiler == "clang" else None
    for token in tokens:
        if token == "auto":
            continue
        t = ccmod.parse_target(token)
        if t is None:
            continue
        if t.major < 3 or t.sm < 30:
            ctx.add("CC_CONFIGURE_REJECTS", "error",
                    _("{token}: configure.py rejects capabilities below 3.0 and then silently "
                      "builds for 3.5,7.0 instead.").format(token=token),
                    ["tf-configure-goldens"], key)
            continue
        arch = ctx.kb.arch(t.sm)
        if arch is None:
            ctx.add("CC_UNKNOWN", "warning",
                    _("{token}: not a GPU target tfwizard knows.").format(token=token),
                    ["cuda-gpus"], key)
            continue
        if cv is not None:
            if cv < Version(arch.min_cuda):
                ctx.add("CC_TOO_NEW_FOR_CUDA", "error",
                        _("{token} needs CUDA >= {needed}; the recipe uses {cuda}.")
                        .format(token=token, needed=arch.min_cuda, cuda=r.cuda.version),
                        arch.sources, key)
            if arch.max_cuda and cv > Version(arch.max_cuda + ".99"):
                text = _("{token}: CUDA {cuda} can no longer build sm_{sm} (last in CUDA "
                         "{last}).").format(token=token, cuda=f"{cv.major}.{cv.minor}",
                                            sm=t.sm, last=arch.max_cuda)
                ctx.add("CC_DROPPED_BY_CUDA", "error",
                        f"{text} {translate(arch.note)}" if arch.note else text,
                        arch.sources, key,
                        Fix(_("Remove {token}").format(token=token),
                            {key: [x for x in tokens if x != token]}))
            if t.suffix == "a" and cv < Version(ctx.kb.suffixes.a_min_cuda):
                ctx.add("CC_SUFFIX_CUDA", "error",
                        _("{token}: 'a' targets need CUDA >= {needed}.")
                        .format(token=token, needed=ctx.kb.suffixes.a_min_cuda),
                        ["cuda-features-archive"], key)
            if t.suffix == "f" and cv < Version(ctx.kb.suffixes.f_min_cuda):
                ctx.add("CC_SUFFIX_CUDA", "error",
                        _("{token}: 'f' (family) targets need CUDA >= {needed}.")
                        .format(token=token, needed=ctx.kb.suffixes.f_min_cuda),
                        ["cuda-features-archive"], key)
        if clang is not None and clang < arch.min_clang:
            ctx.add("CC_TOO_NEW_FOR_CLANG", "error",
                    _("{token}: clang {clang} cannot target sm_{sm} (needs clang >= "
                      "{needed}).").format(token=token, clang=clang, sm=t.sm,
                                           needed=arch.min_clang),
                    ["clang-cuda"], "toolchain.clang",
                    Fix(_("Use clang {version}").format(version=arch.min_clang),
                        {"toolchain.clang": str(arch.min_clang)}))
        if t.suffix == "a":
            ctx.add("CC_SUFFIX_A", "info",
                    _("{token}: an architecture-specific target runs only on exactly CC "
                      "{cc}, with no forward compatibility; add a plain target too.")
                    .format(token=token, cc=t.cc),
                    ["cuda-features-archive"], key)
    _coverage_findings(ctx)


def _coverage_findings(ctx: _Ctx) -> None:
    t = ctx.target
    if t is None or not t.nvidia.gpus:
        return
    targets = _targets(ctx)
    if not targets:
        return
    key = "cuda.compute_capabilities"
    for gpu in t.nvidia.gpus:
        if gpu.error:
            ctx.add("GPU_ERROR", "warning",
                    _("GPU {index} reports an error ({error}); it is left out of the checks.")
                    .format(index=gpu.index, error=gpu.error),
                    ["nvml-api"], "target.host_profile")
            continue
        cc = gpu.compute_capability
        if not cc:
            continue
        tegra = ctx.kb.is_tegra(cc)
        cov = ccmod.coverage(targets, cc, tegra_mismatch=tegra)
        label = f"GPU {gpu.index} ({gpu.name}, CC {cc})" if gpu.name else f"GPU {gpu.index} (CC {cc})"
        if cov.cubin is not None:
            if cov.cubin.cc == cc:
                ctx.add("CC_COVERS_GPU", "info",
                        _("{gpu} runs the {token} cubin.").format(gpu=label,
                                                                  token=cov.cubin.token),
                        ["cuda-pg-compat"], key)
            else:
                ctx.add("CC_COVERS_GPU", "info",
                        _("{gpu} runs the {token} cubin: a cubin for {cubin_cc} runs on {cc} "
                          "(same major, lower minor), so no extra target is needed; {exact} "
                          "would add only Ada/newer-specific tuning.")
                        .format(gpu=label, token=cov.cubin.token, cubin_cc=cov.cubin.cc, cc=cc,
                                exact=ccmod.cc_token(cc)),
                        ["cuda-pg-compat"], key)
        elif cov.ptx is not None:
            ctx.add("CC_PTX_JIT", "warning",
                    _("{gpu}: no cubin in this build, only PTX ({token}); your {cc} GPU would "
                      "JIT from PTX for ~30 minutes or fail (first use only; JIT results are "
                      "cached).").format(gpu=label, token=cov.ptx.token, cc=cc),
                    ["cuda-pg-compat", "tf-gpu-device"], key, _add_cc_fix(ctx, cc))
        else:
            ctx.add("CC_NOT_COVERED", "error",
                    _("{gpu}: no cubin of major {major} with a minor <= its own and no PTX <= "
                      "{cc}; TensorFlow would ignore this GPU.")
                    .format(gpu=label, major=cc.split(".")[0], cc=cc),
                    ["cuda-pg-compat", "tf-gpu-device"], key, _add_cc_fix(ctx, cc))


# -- compiler -------------------------------------------------------------------------------


def rule_compiler(ctx: _Ctx) -> None:
    r, rel = ctx.recipe, ctx.release
    if rel is None:
        return
    clang = _clang_major(ctx)
    gcc = r.toolchain.gcc
    if clang and gcc:
        ctx.add("COMPILER_BOTH", "warning",
                (_("Both toolchain.clang ({clang}) and toolchain.gcc ({gcc}) are set; clang is "
                   "used as the CUDA compiler.") if r.backend.kind == "cuda" else
                 _("Both toolchain.clang ({clang}) and toolchain.gcc ({gcc}) are set; clang is "
                   "used.")).format(clang=clang, gcc=gcc),
                ["tf-configure-py"], "toolchain.gcc",
                Fix(_("Remove toolchain.gcc"), {"toolchain.gcc": ""}))
    wheel_clang = None
    if "llvm-" in rel.wheel_compiler:
        wheel_clang = int(rel.wheel_compiler.split("llvm-")[1].split("/")[0])
    elif rel.wheel_compiler.startswith("clang "):
        wheel_clang = int(rel.wheel_compiler.split()[1])
    if clang:
        info = ctx.kb.clang(clang)
        if clang == rel.tested_clang or clang == wheel_clang:
            text = _("clang {clang} is the tested compiler for TensorFlow {version}.") \
                if clang == rel.tested_clang else \
                _("clang {clang} is what the official wheel was built with for TensorFlow "
                  "{version}.")
            ctx.add("CLANG_MATCHES", "info", text.format(clang=clang, version=rel.version),
                    ["tf-source-md", "pypi-wheels"], "toolchain.clang")
        elif rel.tested_clang:
            ctx.add("CLANG_NOT_TESTED", "warning",
                    _("TensorFlow {version} is tested with {compiler}; clang {clang} may hit "
                      "new warnings-as-errors.").format(version=rel.version,
                                                        compiler=rel.tested_compiler,
                                                        clang=clang),
                    ["tf-source-md", "tf-build-issues"], "toolchain.clang",
                    Fix(_("Use clang {version}").format(version=rel.tested_clang),
                        {"toolchain.clang": str(rel.tested_clang)}))
        else:
            ctx.add("CLANG_NOT_TESTED", "warning",
                    _("TensorFlow {version} was tested with {compiler}, not clang.")
                    .format(version=rel.version, compiler=rel.tested_compiler),
                    ["tf-source-md"], "toolchain.clang")
        if info is not None and info.offsetof_warning and clang >= 18:
            ctx.add("CLANG_OFFSETOF", "info",
                    _("configure.py adds -Wno-gnu-offsetof-extensions only for clang 16/17, "
                      "but clang {clang} hits the same upb error; the plan adds "
                      "--copt=-Wno-gnu-offsetof-extensions.").format(clang=clang),
                    info.sources, "toolchain.clang")
        if info is not None and info.c23_warning:
            ctx.add("CLANG_C23", "warning",
                    _("clang {clang} also errors on -Wc23-extensions in TF's dependencies; the "
                      "plan adds --copt=-Wno-c23-extensions, but expect more new warnings.")
                    .format(clang=clang),
                    info.sources, "toolchain.clang")
        if r.backend.kind == "cuda" and r.cuda.compiler == "clang" and info and r.cuda.version:
            cv, newest = _v(r.cuda.version), _v(info.newest_cuda)
            if cv is not None and newest is not None and (cv.major, cv.minor) > (
                    newest.major, newest.minor):
                ctx.add("CLANG_CUDA_PARTIAL", "info",
                        _("clang {clang} fully supports CUDA up to {newest}; with CUDA {cuda} it "
                          "warns (-Wunknown-cuda-version) and carries on, as TensorFlow's own "
                          "builds do.").format(clang=clang, newest=info.newest_cuda,
                                               cuda=r.cuda.version),
                        info.sources, "toolchain.clang")
        if info is None:
            ctx.add("CLANG_UNKNOWN", "warning",
                    _("clang {clang} is not in the knowledge base.").format(clang=clang),
                    ["clang-cuda"], "toolchain.clang")
    elif r.backend.kind == "cuda" and r.cuda.compiler == "clang":
        ctx.add("CLANG_MISSING", "warning",
                _("cuda.compiler is clang but toolchain.clang is empty; clang {version}, the "
                  "build image's, is assumed.").format(version=rel.default_clang or 18),
                ["tf-configure-py"], "toolchain.clang",
                Fix(_("Use clang {version}").format(version=rel.default_clang or 18),
                    {"toolchain.clang": str(rel.default_clang or 18)}))
    else:
        tested_gcc = rel.tested_gcc
        if tested_gcc is None:
            ctx.add("GCC_NOT_TESTED", "warning",
                    _("TensorFlow {version} is built and tested with {compiler}; gcc builds "
                      "are not tested by TensorFlow and often fail late.")
                    .format(version=rel.version, compiler=rel.tested_compiler),
                    ["tf-source-md"], "toolchain.clang",
                    Fix(_("Use clang {version}").format(version=rel.tested_clang),
                        {"toolchain.clang": str(rel.tested_clang), "toolchain.gcc": ""})
                    if rel.tested_clang else None)
    if r.backend.kind == "cuda" and r.cuda.compiler == "nvcc" and rel.hermetic_cuda:
        ctx.add("NVCC_HOST", "info",
                _("nvcc with gcc as host compiler: TensorFlow's releases build CUDA with clang; "
                  "nvcc builds are supported (--config=cuda_nvcc in newer releases) but less "
                  "tested."),
                ["tf-configure-py", "tf-ci-official"], "cuda.compiler")


# -- platform ---------------------------------------------------------------------------------


def rule_platform(ctx: _Ctx) -> None:
    r, rel, t, b = ctx.recipe, ctx.release, ctx.target, ctx.build
    windows = ctx.kb.platforms["windows"]
    for host, is_build in ((b, True), (t, False)):
        if host is None or (host is t and ctx.target_is_build_host and not is_build):
            continue
        if r.backend.kind == "cuda" and host.os.system == "windows" and rel is not None \
                and not rel.windows_cuda:
            text = _("The build host is native Windows: {message}") if is_build else \
                _("The target is native Windows: {message}")
            ctx.add("WINDOWS_CUDA", "error",
                    text.format(message=translate(windows["message"])),
                    windows["sources"], "backend.kind")
        if r.is_gpu and host.os.system == "darwin":
            ctx.add("MACOS_GPU", "error",
                    _("The build host is macOS: TensorFlow has no GPU support on macOS.")
                    if is_build else
                    _("The target is macOS: TensorFlow has no GPU support on macOS."),
                    ["tf-source-md"], "backend.kind",
                    Fix(_("Build for CPU"), {"backend.kind": "cpu"}))
    if t is not None and t.os.wsl2 and r.backend.kind == "cuda":
        advice = translate(ctx.kb.platforms["wsl2"]["advice"])
        ctx.add("WSL2", "info",
                _("{advice} (found {path})").format(advice=advice, path=t.os.wsl_libcuda_path)
                if t.os.wsl_libcuda_path else advice,
                ctx.kb.platforms["wsl2"]["sources"], "target.host_profile")
    if r.backend.kind == "rocm" and (r.cuda.version or r.cuda.compute_capabilities):
        ctx.add("ROCM_CUDA_EXCLUSIVE", "warning",
                _("[cuda] settings are ignored: CUDA and ROCm are mutually exclusive in one "
                  "build."),
                ["tf-configure-py"], "backend.kind")
    if r.backend.kind == "cpu" and t is not None and t.nvidia.gpus and not ctx.target_is_build_host:
        ctx.add("CPU_WITH_GPU_TARGET", "warning",
                _("The target machine has NVIDIA GPUs but the recipe builds a CPU-only wheel."),
                ["tf-pip-md"], "backend.kind", Fix(_("Build for CUDA"), {"backend.kind": "cuda"}))
    if rel is not None and t is not None and t.os.glibc and t.os.system == "linux":
        if (_v(t.os.glibc) or Version("0")) < Version(rel.glibc_floor):
            ctx.add("GLIBC_TOO_OLD", "error",
                    _("TensorFlow {version} wheels are {manylinux} (glibc >= {floor}); the "
                      "target has glibc {glibc}.").format(version=rel.version,
                                                          manylinux=rel.manylinux,
                                                          floor=rel.glibc_floor,
                                                          glibc=t.os.glibc),
                    ["pypi-wheels"], "tensorflow.version")
    _arch_findings(ctx)


def _arch_findings(ctx: _Ctx) -> None:
    r, t, b = ctx.recipe, ctx.target, ctx.build
    image = r.build.image
    arm_image = "arm64" in image or "aarch64" in image
    if t is not None and b is not None and t.cpu.arch != b.cpu.arch and not ctx.target_is_build_host:
        ctx.add("ARCH_MISMATCH", "error",
                _("The build host is {build} and the target is {target}: tfwizard builds "
                  "natively; run the build on a {target} machine (TF's cross-compile configs "
                  "are not supported here).").format(build=b.cpu.arch, target=t.cpu.arch),
                ["tf-ci-official"], "target.host_profile")
    arch = (t or b).cpu.arch if (t or b) is not None else None  # type: ignore[union-attr]
    if arch == "aarch64" or arm_image:
        aarch = ctx.kb.platforms["aarch64"]
        if r.backend.kind == "cuda":
            ctx.add("AARCH64_CUDA", "warning", translate(aarch["note"]), aarch["sources"],
                    "backend.kind")
        if arch == "aarch64" and not arm_image and not r.build.image == "":
            ctx.add("AARCH64_IMAGE", "warning",
                    _("The build image {image} may be x86_64 only; TF's arm64 image is "
                      "{arm_image}.").format(image=image, arm_image=aarch["image"]),
                    aarch["sources"], "build.image",
                    Fix(_("Use TF's arm64 build image"), {"build.image": aarch["image"]}))
        built_on = (b or t).cpu.arch if (b or t) is not None else None  # type: ignore[union-attr]
        if built_on == "aarch64" and r.build.image == "":
            # plan.make_plan picks this image itself when the build host is aarch64
            ctx.add("AARCH64_IMAGE", "info",
                    _("build.image is empty: on aarch64 the plan uses TF's arm64 CI image "
                      "{arm_image} (the releases' default images are x86_64 only).")
                    .format(arm_image=aarch["image"]),
                    aarch["sources"], "build.image",
                    Fix(_("Pin TF's arm64 build image in the recipe"),
                        {"build.image": aarch["image"]}))
        cpu = (t or b).cpu if (t or b) is not None else None  # type: ignore[union-attr]
        if cpu is not None and "sve" in cpu.features and not any(
                "march" in f or "mcpu" in f for f in r.build.opt_flags):
            ctx.add("AARCH64_SVE", "info",
                    _("The target CPU has SVE; -mcpu=native (or -march=armv8.2-a+sve) in "
                      "build.opt_flags would use it, at the cost of portability."),
                    aarch["sources"], "build.opt_flags")


def rule_rocm(ctx: _Ctx) -> None:
    r, rel, t = ctx.recipe, ctx.release, ctx.target
    if r.backend.kind != "rocm":
        return
    key = "rocm.amdgpu_targets"
    if not r.rocm.version:
        ctx.add("ROCM_VERSION_MISSING", "warning",
                _("rocm.version is empty; the build image's ROCm is used unchecked."),
                ["rocm-matrix"], "rocm.version")
    info = ctx.kb.rocm_release(r.rocm.version) if r.rocm.version else None
    if r.rocm.version and info is None:
        ctx.add("ROCM_UNKNOWN", "warning",
                _("ROCm {version} is not in the knowledge base.").format(version=r.rocm.version),
                ["rocm-matrix"], "rocm.version")
    if info is not None and rel is not None and info.tensorflow and not any(
            v.rsplit(".", 1)[0] == rel.series for v in info.tensorflow):
        ctx.add("ROCM_TF_NOT_VALIDATED", "warning",
                _("ROCm {version} was validated with TensorFlow {validated}, not {series}.")
                .format(version=r.rocm.version, validated=", ".join(info.tensorflow),
                        series=rel.series), info.sources, "rocm.version")
    gpus = t.amd_targets() if t is not None else []
    targets = [x for x in r.rocm.amdgpu_targets if x != "auto"]
    if "auto" in r.rocm.amdgpu_targets:
        targets += [g for g in gpus if g not in targets]
        if not gpus:
            ctx.add("ROCM_AUTO_NO_GPU", "error",
                    _('"auto" takes the target machine\'s AMD GPUs, but none were found; name '
                      "the gfx targets."), ["kfd-device"], key,
                    Fix(_("Use the ROCm default targets"),
                        {key: list(ctx.kb.rocm_default_targets)}))
    if not r.rocm.amdgpu_targets:
        ctx.add("ROCM_TARGETS_EMPTY", "warning",
                _("No gfx targets: the build image's default list is used."),
                ["tf-sig-build"], key)
    if info is not None:
        for target in targets:
            base = target.split(":")[0]
            if base not in info.targets:
                ctx.add("ROCM_TARGET_UNSUPPORTED", "warning",
                        _("{target} is not an officially supported target of ROCm {version} "
                          "(supported: {supported}).")
                        .format(target=base, version=r.rocm.version,
                                supported=", ".join(info.targets)), info.sources, key)
    for gpu in gpus:
        if targets and gpu not in [x.split(":")[0] for x in targets]:
            override = t.amd.hsa_override_gfx_version if t is not None else None
            text = _("The target's {gpu} is not in the build's gfx targets; TensorFlow would "
                     "ignore it (\"Ignoring visible gpu device ... AMDGPU version\"); "
                     "HSA_OVERRIDE_GFX_VERSION={override} is set there") if override else \
                _("The target's {gpu} is not in the build's gfx targets; TensorFlow would "
                  "ignore it (\"Ignoring visible gpu device ... AMDGPU version\")")
            ctx.add("ROCM_GPU_NOT_COVERED", "error" if not override else "warning",
                    text.format(gpu=gpu, override=override),
                    ["tf-gpu-device", "rocm-matrix"], key,
                    Fix(_("Add {token}").format(token=gpu),
                        {key: [x for x in r.rocm.amdgpu_targets if x != "auto"] + [gpu]}))


# -- resources and Docker -------------------------------------------------------------------


def rule_resources(ctx: _Ctx) -> None:
    b, r = ctx.build, ctx.recipe
    if b is None:
        return
    from .build.plan import job_sizing  # the one jobs/RAM sizing rule, shared with the plan

    mem = ctx.kb.platforms["memory"]
    sizing = job_sizing(b, mem["gib_per_job"])
    if sizing is not None:
        ram_gib, cpus, safe = sizing.ram_gib, sizing.cpus, sizing.by_ram
        jobs = r.build.jobs or sizing.jobs
        per_job = ram_gib / jobs
        if per_job < mem["gib_per_job"]:
            ctx.add("RAM_PER_JOB", "warning",
                    _("{jobs} Bazel jobs on {ram:.0f} GiB RAM is {per_job:.1f} GiB per job; "
                      "TensorFlow's C++ needs ~{needed} GiB per job, or the compiler is killed "
                      "(\"Killed signal terminated program cc1plus\").")
                    .format(jobs=jobs, ram=ram_gib, per_job=per_job, needed=mem["gib_per_job"]),
                    mem["sources"], "build.jobs",
                    Fix(_("Use {jobs} jobs").format(jobs=safe), {"build.jobs": safe}))
        elif not r.build.jobs and jobs < cpus:
            ctx.add("RAM_LIMITS_JOBS", "info",
                    _("{ram:.0f} GiB RAM allows ~{jobs} concurrent jobs on {cpus} CPUs; the plan "
                      "passes --jobs={jobs} and Bazel's memory limit.")
                    .format(ram=ram_gib, jobs=jobs, cpus=cpus),
                    mem["sources"], "build.jobs")
    free = b.resources.disk_free_bytes
    if free is not None:
        need = mem["min_free_disk_gib_cuda"] if r.is_gpu else mem["min_free_disk_gib_cpu"]
        free_gib = free / 2**30
        if free_gib < need:
            text = _("{free:.0f} GiB free at {path}; a {kind} TensorFlow build needs ~{need} "
                     "GiB for Bazel's output base and caches.") if b.resources.disk_path else \
                _("{free:.0f} GiB free at the data folder; a {kind} TensorFlow build needs "
                  "~{need} GiB for Bazel's output base and caches.")
            ctx.add("DISK_LOW", "error" if free_gib < need / 2 else "warning",
                    text.format(free=free_gib, path=b.resources.disk_path, need=need,
                                kind="GPU" if r.is_gpu else "CPU"),
                    mem["sources"], "cache.disk_cache")


def rule_docker(ctx: _Ctx) -> None:
    b = ctx.build
    if b is None:
        return
    d = b.docker
    if d.status != "ok":
        ctx.add("DOCKER_UNAVAILABLE", "error",
                _("Docker is not usable on the build host ({status}): {message}")
                .format(status=d.status, message=d.message).strip(),
                ["docker-api"], "build.image")


def rule_image(ctx: _Ctx) -> None:
    r, rel = ctx.recipe, ctx.release
    if rel is None or r.build.image:
        return
    if rel.unverified and any(u.startswith("image:") for u in rel.unverified):
        py = recipe_python(r, rel)
        text = _("The default image {image} is TensorFlow's SIG Build image for this release; "
                 "whether a tag exists for every Python version is not verified.") \
            if "{python}" in rel.image else \
            _("The default image {image} is the one TensorFlow's CI built this release in; "
              "the tag moves, so what is inside may have changed since. `tfwizard check "
              "--preflight` looks inside it.")
        ctx.add("IMAGE_TAG_UNVERIFIED", "info", text.format(image=rel.image_for(py)),
                ["tf-sig-build", "tf-ci-official"], "build.image")
    clang = _clang_major(ctx)
    if clang and rel.image_clang and clang != rel.image_clang and not _aarch64_build(ctx):
        ctx.add("CLANG_NOT_IN_IMAGE", "warning",
                _("TensorFlow {version}'s build image has clang {image_clang} "
                  "(/usr/lib/llvm-{image_clang}); clang {clang} is probably not in it, and "
                  "configure stops on a missing compiler. Use clang {image_clang}, or set "
                  "build.image to an image that has clang {clang} (`tfwizard check --preflight` "
                  "looks inside the image).").format(version=rel.version, clang=clang,
                                                      image_clang=rel.image_clang),
                rel.sources, "toolchain.clang",
                Fix(_("Use clang {version}").format(version=rel.image_clang),
                    {"toolchain.clang": str(rel.image_clang)}))


def _aarch64_build(ctx: _Ctx) -> bool:
    """On aarch64 the plan builds in TF's arm64 image, not the release's (see plan.py)."""
    host = ctx.build if ctx.build is not None else ctx.target
    return host is not None and host.cpu.arch == "aarch64"


def rule_bazel_flags(ctx: _Ctx) -> None:
    r = ctx.recipe
    for flag in r.build.bazel_flags:
        if flag in ("--config=cuda", "--config=cuda_wheel") and r.backend.kind != "cuda":
            ctx.add("FLAG_BACKEND", "warning",
                    _("{flag} in build.bazel_flags but backend is {backend}.")
                    .format(flag=flag, backend=r.backend.kind),
                    ["tf-source-md"], "build.bazel_flags")
        if flag.startswith("--jobs") and r.build.jobs:
            ctx.add("FLAG_JOBS_TWICE", "warning",
                    _("{flag} overrides build.jobs = {jobs}.").format(flag=flag,
                                                                      jobs=r.build.jobs),
                    ["bazel-docs"], "build.bazel_flags")


def rule_remote_and_network(ctx: _Ctx) -> None:
    r = ctx.recipe
    remote, net = r.remote, r.network
    image = r.build.image or (ctx.release.image_for(recipe_python(r, ctx.release))
                              if ctx.release else _("the build image"))
    if remote.executor:
        ctx.add("REMOTE_EXEC_TOOLCHAIN", "warning",
                _("Remote execution runs actions on the executors, not in {image}: their image "
                  "must carry the same toolchain (clang, Python, and for CUDA actions the build "
                  "image itself as the executor platform, e.g. exec_properties "
                  "container-image=docker://{image}), or results differ and builds fail.")
                .format(image=image),
                ["bazel-docs", "tf-ci-official"], "remote.executor")
        if remote.cache and remote.cache != remote.executor:
            ctx.add("REMOTE_EXEC_CACHE", "info",
                    _("With remote execution the executor's own CAS is normally the cache; a "
                      "separate remote.cache must be the same service's endpoint."),
                    ["bazel-docs"], "remote.cache")
    if remote.bes_results_url and not remote.bes_backend:
        ctx.add("BES_URL_WITHOUT_BACKEND", "warning",
                _("remote.bes_results_url is set but remote.bes_backend is empty: nothing is "
                  "uploaded to show there."), ["bazel-docs"], "remote.bes_backend")
    services = remote.cache or remote.executor or remote.bes_backend
    if remote.headers and not services:
        ctx.add("REMOTE_HEADERS_UNUSED", "warning",
                _("remote.headers are set but no remote cache, executor or BES is."),
                ["bazel-docs"], "remote.headers")
    for i, header in enumerate(remote.headers):
        name, _sep, value = header.partition("=")
        if not (value.startswith("${") and value.endswith("}")):
            var = re.sub(r"[^A-Z0-9]", "_", name.upper())
            fixed = list(remote.headers)
            fixed[i] = f"{name}=${{{var}}}"
            ctx.add("SECRET_IN_RECIPE", "warning",
                    _("remote.headers[{index}] ({name}) is stored in the recipe in clear text; "
                      "refer to an environment variable instead and export {var}.")
                    .format(index=i, name=name, var=var),
                    ["bazel-docs"], "remote.headers",
                    Fix(_("Use ${{{var}}}").format(var=var), {"remote.headers": fixed}))
    if remote.upload and remote.cache and not remote.executor:
        ctx.add("REMOTE_UPLOAD", "info",
                _("This build writes to the shared cache: only builders everyone trusts should "
                  "upload (the others read with remote.upload = false)."),
                ["bazel-docs"], "remote.upload")
    plain = [k for k in ("cache", "executor", "bes_backend")
             if getattr(remote, k).startswith(("http://", "grpc://"))]
    if plain and remote.headers:
        ctx.add("REMOTE_HEADERS_CLEARTEXT", "warning",
                _("Headers (API keys) go unencrypted to remote.{key} ({scheme}://); use "
                  "https:// or grpcs:// beyond a trusted LAN.")
                .format(key=plain[0], scheme=getattr(remote, plain[0]).split("://")[0]),
                ["bazel-docs"], f"remote.{plain[0]}")
    for key in ("executor", "bes_backend"):
        value = getattr(remote, key)
        if value and not value.startswith(("grpc://", "grpcs://", "unix:")):
            ctx.add("REMOTE_SCHEME", "error",
                    _("remote.{key} is {scheme}://, but Bazel speaks gRPC to executors and "
                      "Build Event Services: use grpcs:// (or grpc:// on a LAN).")
                    .format(key=key, scheme=value.split("://")[0]),
                    ["bazel-docs"], f"remote.{key}")
    if remote.upload and not remote.cache and not remote.executor:
        ctx.add("REMOTE_UPLOAD_UNUSED", "warning",
                _("remote.upload is true but remote.cache is empty: nothing is uploaded."),
                ["bazel-docs"], "remote.cache")
    # build.network = "host" is rule_least_privilege's (HOST_NETWORK_EXPOSES_HOST)
    if r.build.network == "bridge":
        for key, value in (("remote.cache", remote.cache), ("remote.executor", remote.executor),
                           ("remote.bes_backend", remote.bes_backend),
                           ("network.http_proxy", net.http_proxy),
                           ("network.https_proxy", net.https_proxy)):
            host = _url_host(value)
            if host in ("localhost", "127.0.0.1", "::1") or host.startswith("127."):
                ctx.add("LOOPBACK_NOT_REACHABLE", "warning",
                        _("{key} points at {host}, but in a bridge-network container that is "
                          "the container itself, not this machine: use build.network = "
                          "\"host\", or the machine's LAN address.").format(key=key, host=host),
                        ["docker-api"], key,
                        Fix(_("Use the host network"), {"build.network": "host"}))
    for key in ("http_proxy", "https_proxy"):
        value = getattr(net, key)
        if value and re.match(r"[a-z]+://[^/@]+:[^/@]+@", value):
            ctx.add("SECRET_IN_RECIPE", "warning",
                    _("network.{key} carries credentials in the recipe; use ${{{var}}} and "
                      "export it instead.").format(key=key, var=key.upper()),
                    ["bazel-docs"], f"network.{key}",
                    Fix(_("Use ${{{var}}}").format(var=key.upper()),
                        {f"network.{key}": f"${{{key.upper()}}}"}))
    needs_net = (net.http_proxy or net.https_proxy or services
                 or (not r.tensorflow.source_dir))
    if r.build.network == "none" and needs_net:
        if net.http_proxy or net.https_proxy:
            text = _("build.network is \"none\" but the build needs the network for a proxy.")
        elif services:
            text = _("build.network is \"none\" but the build needs the network for remote "
                     "services.")
        else:
            text = _("build.network is \"none\" but the build needs the network for cloning "
                     "TensorFlow.")
        ctx.add("NETWORK_NONE", "error", text, ["docker-api"], "build.network",
                Fix(_("Use the bridge network"), {"build.network": "bridge"}))
    if r.build.network == "none" and not needs_net:
        ctx.add("OFFLINE_BUILD", "info",
                _("Offline build: every external repository must already be in the repository "
                  "cache or network.distdir, or Bazel stops with \"All mirrors are down\"."),
                ["tf-build-issues"], "build.network")


def _url_host(url: str) -> str:
    """The host of scheme://[user@]host[:port]/..., lower-case; "" when there is none."""
    rest = url.split("://", 1)[1] if "://" in url else ""
    netloc = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0].lower()
    return netloc.split(":", 1)[0].lower()


def rule_least_privilege(ctx: _Ctx) -> None:
    """The one way a recipe widens the build container's reach: the host network."""
    r = ctx.recipe
    if r.build.network != "host":
        return
    urls = (r.remote.cache, r.remote.executor, r.remote.bes_backend, r.network.http_proxy,
            r.network.https_proxy)
    loopback = any(re.match(r"[a-z]+://([^/@]*@)?(localhost|127\.|\[::1\])", u) for u in urls)
    ctx.add("HOST_NETWORK_EXPOSES_HOST", "warning",
            _("build.network = \"host\" takes the build container out of network isolation: "
              "code run by the build (the image, TensorFlow's sources, Bazel's downloads) can "
              "reach every service listening on this machine, 127.0.0.1 included. Use it only "
              "for a cache or proxy on 127.0.0.1, and only with an image and sources you "
              "trust."),
            ["docker-api"], "build.network",
            None if loopback else Fix(_("Use the bridge network"), {"build.network": "bridge"}))


RULES: tuple[Rule, ...] = (
    rule_release,
    rule_git_ref,
    rule_python,
    rule_cuda_versions,
    rule_driver,
    rule_compute_capabilities,
    rule_compiler,
    rule_platform,
    rule_rocm,
    rule_resources,
    rule_docker,
    rule_image,
    rule_bazel_flags,
    rule_remote_and_network,
    rule_least_privilege,
)


def apply_fix(recipe: Recipe, finding: Finding) -> Recipe:
    """The recipe with a finding's fix applied (the GUI's one click)."""
    if finding.fix is None:
        return recipe
    new = recipe.with_changes(finding.fix.changes)
    new.document, new.path = recipe.document, recipe.path
    return new


def portable_compute_capabilities(recipe: Recipe, kb: KnowledgeBase | None = None) -> list[str]:
    """The "portable" preset: a cubin for the oldest desktop CC of every GPU generation the
    recipe's CUDA and compiler can build, plus PTX for the newest.

    A cubin for X.0 runs on every desktop X.y, so this covers each generation; whether a
    generation can be built is the rules' own verdict on that target alone.
    """
    kb = kb or load_knowledge()
    oldest: dict[int, tuple[int, int]] = {}
    for cc in kb.known_ccs():
        parsed = ccmod.parse_cc(cc)
        if parsed is None or kb.is_tegra(cc) or parsed[0] in oldest:
            continue
        token = ccmod.token(*parsed)
        candidate = recipe.with_changes({"cuda.compute_capabilities": [token]})
        # with one token and no host, every error on the key is about that token (not
        # f.message.startswith(token): messages are translated)
        blocked = any(f.severity == "error" and f.key == "cuda.compute_capabilities"
                      for f in evaluate(candidate, kb=kb))
        if not blocked:
            oldest[parsed[0]] = parsed
    chosen = sorted(oldest.values())
    tokens = [ccmod.token(major, minor) for major, minor in chosen]
    if chosen:
        tokens.append(ccmod.token(*chosen[-1], ptx=True))
    return tokens
