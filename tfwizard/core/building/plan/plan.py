"""The build plan: a recipe turned into exactly what TensorFlow's tooling expects.

Data, not shell strings: the image, the mounts, the configure answers, the Bazel
target and flags (in order, each with the reason and the group that added it: flags.py),
and the container steps as argv lists, each declaring what it needs (its role, network,
the record volume). `make_plan` composes small named parts; render.py turns a plan into
text a person can paste, fetchplan.py derives the download-only plan.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from packaging.version import Version

from ... import bazelversion as bv
from ... import cc as ccmod
from ...errors import UsageError
from ...host import HostProfile, auto_host
from ...i18n import _
from ...knowledge import KnowledgeBase, Release, load_knowledge, recipe_python
from ...paths import LABEL, own_labels
from ...recipe import Recipe
from ...remote.tls import tls_files
from ...secrets import at_rest
from ...tfsource.facts import SourceFacts
from ...tfsource.overlay import source_view
from ...toolchain import cxx_toolchain, toolchain_notes
from ...vocab import Phase, StepRole
from . import flags as fl
from . import remote as rx
from .configure import DEFAULT_PYTHON_BIN, configure_env, simulate_configure
from .flags import DISK_CACHE, DISTDIR, PROGRESS_FLAGS, RECORD, REPO_CACHE, Flag, resource_limits
from .planflags import plan_flags

__all__ = ["DISK_CACHE", "DISTDIR", "PROGRESS_FLAGS", "RECORD", "REPO_CACHE", "Flag",
           "resource_limits"]

#: where things live inside the build container (the caches and /record: flags.py)
SRC = "/src"
HOME = "/tmp/tfwizard-home"
OUTPUT_USER_ROOT = "/tmp/tfwizard-bazel"
WHEEL_DIR_WHEEL = "bazel-bin/tensorflow/tools/pip_package/wheel_house"
PKG_DIR_LEGACY = "/tmp/tfwizard-pkg"

#: the roles of steps in plans written before steps declared them (records to attach to)
_ROLE_OF_NAME: dict[str, StepRole] = {
    "fetch": "fetch", "fetch-commit": "fetch", "checkout": "fetch", "configure": "configure",
    "build": "build", "package": "package", "prepare": "prepare", "cache-before": "list",
    "cache-after": "list"}


@dataclass(frozen=True)
class Mount:
    """A volume or a host folder (bind mount) in the build container."""

    source: str  # a named volume, or a host path for a bind mount
    target: str
    kind: str  # volume | bind
    read_only: bool = False


@dataclass(frozen=True)
class Step:
    """One command in the build container, and what it needs.

    `role` says what the step is for (the runner decides by it, never by the name);
    `needs_network` gives it the recipe's network (else none); `needs_record` mounts the
    per-build record volume (the build step writes its BEP file there). Left out, the
    role comes from the name and the record goes to the build role only: plans written
    before steps declared them.
    """

    name: str  # fetch | configure | build | package | ...: the container's name and label
    phase: Phase
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = SRC
    needs_network: bool = True
    role: StepRole | None = None
    needs_record: bool | None = None

    def __post_init__(self) -> None:
        if self.role is None:
            object.__setattr__(self, "role", _ROLE_OF_NAME.get(self.name, "build"))
        if self.needs_record is None:
            object.__setattr__(self, "needs_record", self.role == "build")


@dataclass
class BuildPlan:
    """Everything a build runs and where, for one recipe on one host (plan.json)."""

    recipe_name: str
    release: str
    series: str
    backend: str
    image: str
    python: str
    source_kind: str  # release | ref | dir
    source_dir: str | None  # host checkout (bind mount) when source_kind == "dir"
    git_url: str
    git_ref: str
    configure_env: dict[str, str]
    predicted_bazelrc: list[str]
    bazel_target: str
    bazel_startup_flags: list[str]
    bazel_flags: list[Flag]
    wheel_dir: str  # container path holding the built wheel(s)
    wheel_name: str
    compute_capabilities: list[str]
    amdgpu_targets: list[str]
    mounts: list[Mount]
    container_env: dict[str, str]
    user: str | None
    network_mode: str
    gpu_passthrough: str | None  # None | nvidia | rocm (only steps that need a GPU get it)
    cache_volumes: dict[str, str]
    steps: list[Step]
    labels: dict[str, str]
    notes: list[str] = field(default_factory=list)
    #: the image the build ran in, filled in by the runner once it has it (record only)
    image_id: str = ""
    image_digest: str = ""  # repository@sha256:... when a registry gave the image
    #: the Bazel the flags were chosen for ("" unknown) and where that came from
    bazel_version: str = ""
    bazel_version_source: str = ""
    #: every statement of the Bazel that was known, by its source (bazelversion.py:
    #: image, image-package, bazelversion, release): the diagnosis joins them with the log
    bazel_versions: dict[str, str] = field(default_factory=dict)
    #: what the source's own files said (srcoverlay.py): where, commit, tf_version and
    #: the differences from the table the plan follows; empty when they were not read
    source_facts: dict[str, Any] = field(default_factory=dict)
    #: the LLVM major TF's hermetic C++ toolchain compiles with ("": the image's compiler)
    hermetic_llvm: str = ""

    @property
    def flag_list(self) -> list[str]:
        """The Bazel flags as Bazel gets them."""
        return [f.flag for f in self.bazel_flags]

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data (plan.json)."""
        return asdict(self)  # the steps too: asdict recurses into dataclasses in lists

    def to_json(self) -> str:
        """plan.json's text, as records and plan output keep it: credentials written out in
        the recipe are masked (secrets.at_rest); the plan in memory keeps them to run."""
        return json.dumps(at_rest(self.to_dict()), indent=2)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BuildPlan:
        """The BuildPlan a record's plan.json holds (the inverse of `to_dict`; keys this
        version does not know are left out, missing ones take their defaults)."""

        def known(kind: Any, values: Mapping[str, Any]) -> dict[str, Any]:
            names = {f.name for f in fields(kind)}
            return {k: v for k, v in values.items() if k in names}

        kw = known(cls, data)
        kw["steps"] = [Step(**{**known(Step, s), "argv": tuple(s["argv"])})
                       for s in data["steps"]]
        kw["bazel_flags"] = [Flag(**known(Flag, f)) for f in data["bazel_flags"]]
        kw["mounts"] = [Mount(**known(Mount, m)) for m in data["mounts"]]
        return cls(**kw)


def resolve_release(recipe: Recipe, kb: KnowledgeBase) -> Release:
    """The release the recipe names (UsageError naming the known ones when none)."""
    release = kb.release_for(recipe)
    if release is None:
        raise UsageError(
            _("tensorflow.version: {version!r} is not a release tfwizard knows").format(
                version=recipe.tensorflow.version or "master"),
            _("Known: {versions}").format(versions=", ".join(kb.release_versions())))
    return release


def _no_gpu_for_auto(key: str, build_host: HostProfile | None,
                     target_host: HostProfile | None, vendor: str) -> UsageError:
    if target_host is not None:
        message = _('{key} = ["auto"] takes the GPUs of the target profile, but it lists no '
                    "{vendor} GPU").format(key=key, vendor=vendor)
    elif build_host is not None:
        message = _('{key} = ["auto"] takes the GPUs of the machine it is built on (the recipe '
                    "names no target.host_profile), but it has no {vendor} GPU").format(
                        key=key, vendor=vendor)
    else:
        message = _('{key} = ["auto"] takes the GPUs of the target machine, but no host '
                    "profile is known").format(key=key)
    return UsageError(message, _("Name the GPU targets in {key}, or set target.host_profile to "
                                 "a `tfwizard detect --json` file of the machine that will run "
                                 "the wheel.").format(key=key))


def resolve_ccs(recipe: Recipe, build_host: HostProfile | None = None,
                target_host: HostProfile | None = None) -> list[str]:
    """cuda.compute_capabilities with "auto" replaced by the GPUs of `auto_host()`.

    UsageError when "auto" finds no NVIDIA GPU: an empty list would make configure.py fall
    back to 3.5,7.0, which CUDA 12 cannot build.
    """
    host = auto_host(build_host, target_host)
    gpus = host.nvidia_ccs() if host is not None else []
    tokens = list(recipe.cuda.compute_capabilities)
    if "auto" in tokens and not gpus:
        raise _no_gpu_for_auto("cuda.compute_capabilities", build_host, target_host, "NVIDIA")
    return ccmod.expand(tokens, gpus)


def resolve_amd_targets(recipe: Recipe, build_host: HostProfile | None = None,
                        target_host: HostProfile | None = None) -> list[str]:
    """rocm.amdgpu_targets with "auto" replaced by the gfx targets of `auto_host()`."""
    host = auto_host(build_host, target_host)
    gpus = host.amd_targets() if host is not None else []
    if "auto" in recipe.rocm.amdgpu_targets and not gpus:
        raise _no_gpu_for_auto("rocm.amdgpu_targets", build_host, target_host, "AMD")
    out: list[str] = []
    for t in recipe.rocm.amdgpu_targets:
        for item in gpus if t == "auto" else [t]:
            if item not in out:
                out.append(item)
    return out


def redistribution_mounts(recipe: Recipe, env: dict[str, str],
                          recipe_dir: Path | None) -> list[Mount]:
    """Local CUDA/cuDNN/NCCL redistributions: the same absolute path inside the container,
    read-only, so LOCAL_*_PATH means the same thing on both sides (fills those answers
    in `env`)."""
    mounts: list[Mount] = []
    if recipe.backend.kind != "cuda":
        return mounts
    for key, name in (("local_cuda_path", "LOCAL_CUDA_PATH"),
                      ("local_cudnn_path", "LOCAL_CUDNN_PATH"),
                      ("local_nccl_path", "LOCAL_NCCL_PATH")):
        local = recipe.resolve_path(f"cuda.{key}", base=recipe_dir)
        if local is None:
            continue
        mounts.append(Mount(str(local), str(local), "bind", read_only=True))
        if env.get(name):
            env[name] = str(local)
    return mounts


def wheel_output(release: Release, kind: str, arch: str | None) -> tuple[str, str, str]:
    """(Bazel target, container folder of the wheel, wheel name) for the release's style."""
    # TF's CI names its aarch64 CPU wheel "tensorflow", not tensorflow_cpu (envs/linux_arm64)
    wheel_name = ("tensorflow" if kind in ("cuda", "rocm") or arch == "aarch64"
                  else "tensorflow_cpu")
    if release.wheel_style == "wheel":
        return "//tensorflow/tools/pip_package:wheel", f"{SRC}/{WHEEL_DIR_WHEEL}", wheel_name
    return "//tensorflow/tools/pip_package:build_pip_package", PKG_DIR_LEGACY, wheel_name


def container_env(recipe: Recipe, python: str) -> dict[str, str]:
    """The environment of every step: home, user, the wheel's Python, the proxies."""
    # USER: Bazel's client refuses to start for a uid without a passwd entry unless USER is set
    env = {"HOME": HOME, "USER": "tfwizard", "TF_PYTHON_VERSION": python}
    net = recipe.network
    for name, value in (("HTTP_PROXY", net.http_proxy), ("HTTPS_PROXY", net.https_proxy),
                        ("NO_PROXY", net.no_proxy)):
        if value:
            # Bazel's downloader and git read both spellings
            env[name] = value
            env[name.lower()] = value
    return env


def source_of(recipe: Recipe, release: Release,
              recipe_dir: Path | None) -> tuple[str, str | None, str]:
    """(source kind, host checkout or None, git ref): a checkout, a ref, or the release."""
    if recipe.tensorflow.source_dir:
        return "dir", str(recipe.resolve_path("tensorflow.source_dir", base=recipe_dir)), ""
    kind = "ref" if recipe.tensorflow.ref else "release"
    return kind, None, recipe.tensorflow.ref or release.git_tag


def build_mounts(recipe: Recipe, recipe_dir: Path | None, *, redistributions: list[Mount],
                 volumes: dict[str, str], source_dir: str | None) -> list[Mount]:
    """Every mount of the steps: checkout, redistributions, caches, distdir, git mirror,
    the remote services' TLS files."""
    mounts = [Mount(source_dir, SRC, "bind")] if source_dir else []
    mounts.extend(redistributions)
    mounts.extend(Mount(volumes[key], target, "volume")
                  for key, target, _flag in fl.CACHE_MOUNTS if key in volumes)
    distdir = recipe.resolve_path("network.distdir", base=recipe_dir)
    if distdir is not None:
        mounts.append(Mount(str(distdir), DISTDIR, "bind", read_only=True))
    git_url = recipe.tensorflow.git_url
    if source_dir is None and git_url.startswith("file://"):
        # a local mirror (a bare clone): the same path inside the container, read-only
        mirror = git_url[len("file://"):]
        mounts.append(Mount(mirror, mirror, "bind", read_only=True))
    mounts.extend(Mount(str(f.host), f.target, "bind", read_only=True)
                  for f in tls_files(recipe, recipe_dir))
    return mounts


def build_steps(recipe: Recipe, release: Release, *, git_ref: str, source_kind: str,
                configure: dict[str, str], startup: list[str], flags: list[Flag],
                target: str) -> list[Step]:
    """fetch (unless a checkout is mounted), configure, build, and package (TF <= 2.16)."""
    steps: list[Step] = []
    if source_kind != "dir":
        steps.extend(fetch_source_steps(recipe.tensorflow.git_url, git_ref))
    steps.append(Step("configure", "configure", (DEFAULT_PYTHON_BIN, "configure.py"),
                      env=configure, role="configure", needs_record=False))
    steps.append(Step("build", "analyse",
                      ("bazel", *startup, "build", *[f.flag for f in flags], target),
                      role="build", needs_record=True))
    if release.wheel_style == "build_pip_package":
        pkg_args = [f"{SRC}/bazel-bin/tensorflow/tools/pip_package/build_pip_package",
                    PKG_DIR_LEGACY]
        kind = recipe.backend.kind
        if kind == "cpu":
            pkg_args.append("--cpu")
        if kind == "rocm":
            pkg_args.append("--rocm")
        steps.append(Step("package", "package", tuple(pkg_args), needs_network=False,
                          role="package", needs_record=False))
    return steps


def make_plan(
    recipe: Recipe,
    *,
    build_host: HostProfile | None = None,
    target_host: HostProfile | None = None,
    kb: KnowledgeBase | None = None,
    recipe_dir: Path | None = None,
    uid: int | None = None,
    gid: int | None = None,
    image_bazel: bv.BazelVersion | None = None,
    repo_digests: tuple[str, ...] = (),
    source_facts: SourceFacts | None = None,
) -> BuildPlan:
    """Turn a recipe into the build plan (no Docker, no files written; the knowledge base
    is loaded when `kb` is None, the uid/gid are this process's when not given).

    `image_bazel` and `repo_digests` are what the build image said about itself
    (imagefacts.py): the Bazel the remote flags are chosen for, and the digest the
    actions' container-image is pinned by. The release is as the source's files say
    (srcoverlay.py): the checkout's, or `source_facts` read from the clone."""
    kb = kb or load_knowledge()
    view = source_view(recipe, kb, recipe_dir=recipe_dir, facts=source_facts)
    release, kb = (view.release, view.kb) if view else (resolve_release(recipe, kb), kb)
    python = recipe_python(recipe, release)
    kind = recipe.backend.kind
    ccs = resolve_ccs(recipe, build_host, target_host) if kind == "cuda" else []
    amd = resolve_amd_targets(recipe, build_host, target_host) if kind == "rocm" else []
    env = configure_env(recipe, release, compute_capabilities=ccs, amdgpu_targets=amd,
                        python_bin=DEFAULT_PYTHON_BIN)
    redistributions = redistribution_mounts(recipe, env, recipe_dir)
    predicted = simulate_configure(env, hermetic=release.hermetic_cuda)
    arch = _cpu_arch(build_host, target_host)
    target, wheel_dir, wheel_name = wheel_output(release, kind, arch)
    image, notes = _image_and_notes(recipe, release, kb, python, arch)
    toolchain = cxx_toolchain(recipe, release)
    notes.extend(toolchain_notes(toolchain, release, env.get("CLANG_CUDA_COMPILER_PATH", "")))
    bazel = rx.bazel_report(recipe, release, recipe_dir=recipe_dir, image=image_bazel)
    volumes = fl.cache_volumes(recipe)
    if "disk" in volumes and not rx.disk_cache_allowed(recipe.remote, bazel):
        del volumes["disk"]
        notes.append(rx.no_disk_cache_note(bazel))
    flags = plan_flags(recipe, release, kb=kb, python=python, wheel_name=wheel_name,
                       volumes=volumes, build_host=build_host,
                       properties=rx.exec_properties(recipe.remote, image, repo_digests),
                       bazel=bazel.version)
    source_kind, source_dir, git_ref = source_of(recipe, release, recipe_dir)
    uid = os.getuid() if uid is None and hasattr(os, "getuid") else uid
    gid = os.getgid() if gid is None and hasattr(os, "getgid") else gid
    startup = [f"--output_user_root={OUTPUT_USER_ROOT}"]
    return BuildPlan(
        recipe_name=recipe.name, release=release.version, series=release.series,
        backend=kind, image=image, python=python, source_kind=source_kind,
        source_dir=source_dir, git_url=recipe.tensorflow.git_url, git_ref=git_ref,
        configure_env=env, predicted_bazelrc=predicted.lines, bazel_target=target,
        bazel_startup_flags=startup, bazel_flags=flags, wheel_dir=wheel_dir,
        wheel_name=wheel_name, compute_capabilities=ccs, amdgpu_targets=amd,
        mounts=build_mounts(recipe, recipe_dir, redistributions=redistributions,
                            volumes=volumes, source_dir=source_dir),
        container_env=container_env(recipe, python),
        user=f"{uid}:{gid}" if uid is not None else None,
        network_mode=recipe.build.network,
        gpu_passthrough=None,  # building needs no GPU; hermetic CUDA compiles without one
        cache_volumes=volumes,
        steps=build_steps(recipe, release, git_ref=git_ref, source_kind=source_kind,
                          configure=env, startup=startup, flags=flags, target=target),
        labels=own_labels(**{f"{LABEL}.recipe": recipe.name,
                             f"{LABEL}.release": release.version}),
        notes=notes + predicted.messages + (view.plan_notes() if view is not None else []),
        bazel_version=str(bazel.effective) if bazel.effective else "",
        bazel_version_source=bazel.effective.source if bazel.effective else "",
        bazel_versions={s.source: s.text for s in bazel.statements if s.known},
        source_facts=view.to_record() if view is not None else {},
        hermetic_llvm=str(toolchain.clang) if toolchain.hermetic else "",
    )


def _image_and_notes(recipe: Recipe, release: Release, kb: KnowledgeBase, python: str,
                     arch: str | None) -> tuple[str, list[str]]:
    """The build image (the recipe's, else the release's, else TF's arm64 CI image on
    aarch64) and the notes the plan carries about it."""
    notes: list[str] = []
    if release.wheel_style != "wheel":
        notes.append(_("TF <= 2.16 builds build_pip_package, then runs it to write the wheel."))
    image = recipe.build.image or release.image_for(python)
    if arch == "aarch64":
        notes.extend(_aarch64_notes(kb, release, image_chosen=bool(recipe.build.image)))
        if not recipe.build.image:  # the releases' images are x86_64 only
            image = str(kb.platforms["aarch64"]["image"])
    return image, notes


def is_commit(ref: str) -> bool:
    """A full commit hash (SHA-1 or SHA-256): `git clone --branch` cannot take one."""
    return re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", ref) is not None


def fetch_source_steps(git_url: str, git_ref: str) -> list[Step]:
    """The commands that put TensorFlow's source at `git_ref` into /src, one commit deep.

    A branch or tag is one shallow `git clone --branch`. A commit cannot be cloned by name,
    so it is fetched into a new repository (servers such as GitHub serve any commit they
    have; a local mirror serves any reachable one) and checked out.
    """
    if not is_commit(git_ref):
        return [Step("fetch", "fetch", ("git", "clone", "--depth", "1", "--branch", git_ref,
                                        "--", git_url, SRC), workdir="/", role="fetch",
                     needs_record=False)]
    return [
        Step("fetch", "fetch", ("git", "init", "-q", SRC), workdir="/", needs_network=False,
             role="fetch", needs_record=False),
        Step("fetch-commit", "fetch", ("git", "-C", SRC, "fetch", "--depth", "1", "--",
                                       git_url, git_ref), workdir="/", role="fetch", needs_record=False),
        Step("checkout", "fetch", ("git", "-c", "advice.detachedHead=false", "-C", SRC,
                                   "checkout", "-q", "FETCH_HEAD"), workdir="/",
             needs_network=False, role="fetch", needs_record=False),
    ]


def _cpu_arch(build_host: HostProfile | None, target_host: HostProfile | None) -> str | None:
    """The CPU architecture the wheel is built for: builds are native (rules.py reports a
    build host and target of different architectures), so the build host's, else the
    target's."""
    host = build_host if build_host is not None else target_host
    return host.cpu.arch if host is not None else None


def _aarch64_notes(kb: KnowledgeBase, release: Release, *, image_chosen: bool) -> list[str]:
    aarch = kb.platforms["aarch64"]
    notes = [] if image_chosen else [
        _("aarch64: the build image is TF's arm64 CI image {image} (platforms.toml "
          "[aarch64]); the release's default image is x86_64 only.").format(image=aarch["image"])]
    # Not added on purpose: release_* configs carry TF CI's toolchain and settings, whose
    # aarch64 contents tfwizard has not verified; the plan stays on ./configure + opt as on
    # x86_64 (where release_cpu_linux is not added either).
    notes.append(_("aarch64: TF's CI builds aarch64 wheels with --config={config} "
                   "(ci/official/envs/linux_arm64); tfwizard uses ./configure and --config=opt "
                   "as on x86_64. To follow CI exactly, add \"--config={config}\" to "
                   "build.bazel_flags (its contents are UNVERIFIED here).").format(
                       config=aarch["config"]))
    if release.series_version < Version(str(aarch["first_google_wheel_series"])):
        notes.append(_("aarch64: TensorFlow {series} aarch64 wheels were built by AWS, not in "
                       "TF's arm64 image; building this release on aarch64 is "
                       "UNVERIFIED.").format(series=release.series))
    return notes

