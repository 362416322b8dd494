"""The build plan: a recipe turned into exactly what TensorFlow's tooling expects.

Data, not shell strings: the image, the mounts, the configure answers, the Bazel
target and flags (in order, with the reason for each one tfwizard adds), and the
container steps as argv lists. `render_*` turn it into text a person can paste.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .. import cc as ccmod
from .. import secrets
from ..errors import UsageError
from ..host import HostProfile
from ..i18n import _
from ..knowledge import KnowledgeBase, Release, load_knowledge, recipe_python
from ..recipe import Recipe
from ..vocab import Phase
from .configure import DEFAULT_PYTHON_BIN, clang_major_of, configure_env, simulate_configure

#: where things live inside the build container
SRC = "/src"
DISK_CACHE = "/cache/disk"
REPO_CACHE = "/cache/repo"
RECORD = "/record"
HOME = "/tmp/tfwizard-home"
OUTPUT_USER_ROOT = "/tmp/tfwizard-bazel"
DISTDIR = "/cache/distdir"
WHEEL_DIR_WHEEL = "bazel-bin/tensorflow/tools/pip_package/wheel_house"
PKG_DIR_LEGACY = "/tmp/tfwizard-pkg"
PROGRESS_FLAGS = ("--curses=no", "--color=no", "--show_progress_rate_limit=1")
LABEL = "io.tfwizard"


@dataclass(frozen=True)
class Mount:
    source: str  # a named volume, or a host path for a bind mount
    target: str
    kind: str  # volume | bind
    read_only: bool = False


@dataclass(frozen=True)
class Step:
    """One command in the build container."""

    name: str  # fetch | configure | build | package
    phase: Phase
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = SRC
    needs_network: bool = True


@dataclass(frozen=True)
class Flag:
    flag: str
    why: str


@dataclass
class BuildPlan:
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

    @property
    def flag_list(self) -> list[str]:
        return [f.flag for f in self.bazel_flags]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["steps"] = [asdict(s) for s in self.steps]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def resolve_release(recipe: Recipe, kb: KnowledgeBase) -> Release:
    release = kb.release_for(recipe)
    if release is None:
        raise UsageError(
            _("tensorflow.version: {version!r} is not a release tfwizard knows").format(
                version=recipe.tensorflow.version or "master"),
            _("Known: {versions}").format(versions=", ".join(kb.release_versions())))
    return release


def auto_host(build_host: HostProfile | None,
              target_host: HostProfile | None) -> HostProfile | None:
    """The machine "auto" GPU targets come from: the target profile, else the build host.

    The one rule for "auto" (check, plan, build, the GUI): a recipe without
    target.host_profile builds for the machine it is built on.
    """
    return target_host if target_host is not None else build_host


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


@dataclass(frozen=True)
class JobSizing:
    """How many Bazel jobs a build host's RAM and CPUs allow (the one sizing rule: the
    plan's --jobs and check's RAM_PER_JOB / RAM_LIMITS_JOBS)."""
    ram_gib: float
    cpus: int
    by_ram: int  # jobs the RAM allows at gib_per_job each
    jobs: int  # min(cpus, by_ram)


def job_sizing(build_host: HostProfile, gib_per_job: float) -> JobSizing | None:
    """The jobs `build_host` allows; None when its RAM is unknown."""
    if not build_host.resources.ram_total_bytes:
        return None
    ram_gib = build_host.resources.ram_total_bytes / 2**30
    cpus = build_host.resources.cpu_count or build_host.cpu.cores or 1
    by_ram = max(1, math.floor(ram_gib / gib_per_job))
    return JobSizing(ram_gib, cpus, by_ram, max(1, min(cpus, by_ram)))


def resource_limits(build_host: HostProfile | None, jobs: int,
                    gib_per_job: float) -> tuple[int | None, int | None, str]:
    """(--jobs, --local_ram_resources in MB, why) from the build host's RAM and CPUs."""
    if jobs > 0:
        return jobs, None, _("jobs set in the recipe")
    sizing = job_sizing(build_host, gib_per_job) if build_host is not None else None
    if sizing is None:
        return None, None, ""
    ram_mb = int(sizing.ram_gib * 1024 * 0.8)
    why = _("{ram:.0f} GiB RAM / ~{per_job} GiB per TensorFlow C++ job -> {by_ram}; "
            "{cpus} CPUs -> --jobs={jobs}").format(ram=sizing.ram_gib, per_job=gib_per_job,
                                                   by_ram=sizing.by_ram, cpus=sizing.cpus,
                                                   jobs=sizing.jobs)
    return sizing.jobs, ram_mb, why


def resource_flags(release: Release, build_host: HostProfile | None, ram_mb: int | None,
                   kb: KnowledgeBase) -> list[Flag]:
    """The flags that keep Bazel within the build host's memory, in the form the release's
    Bazel takes: --local_resources=memory=/cpu= from Bazel 7.1 (platforms.toml
    [bazel_resources]), --local_ram_resources before."""
    if not ram_mb:
        return []
    why = _("keep Bazel under 80% of the build host's RAM")
    since = Version(str(kb.platforms["bazel_resources"]["local_resources_since"]))
    try:
        modern = Version(release.bazel) >= since
    except InvalidVersion:
        modern = True  # "master" style values: the newest Bazel
    if not modern:
        return [Flag(f"--local_ram_resources={ram_mb}", why)]
    assert build_host is not None  # ram_mb comes from its profile
    cpus = build_host.resources.cpu_count or build_host.cpu.cores or 1
    return [Flag(f"--local_resources=memory={ram_mb}", why),
            Flag(f"--local_resources=cpu={cpus}",
                 _("the build host's CPUs (Bazel >= 7.1 replaces --local_ram_resources and "
                   "--local_cpu_resources with --local_resources)"))]


def make_plan(
    recipe: Recipe,
    *,
    build_host: HostProfile | None = None,
    target_host: HostProfile | None = None,
    kb: KnowledgeBase | None = None,
    recipe_dir: Path | None = None,
    uid: int | None = None,
    gid: int | None = None,
) -> BuildPlan:
    """Turn a recipe into the build plan (pure: no Docker, no files written)."""
    kb = kb or load_knowledge()
    release = resolve_release(recipe, kb)
    python = recipe_python(recipe, release)
    kind = recipe.backend.kind
    ccs = resolve_ccs(recipe, build_host, target_host) if kind == "cuda" else []
    amd = resolve_amd_targets(recipe, build_host, target_host) if kind == "rocm" else []
    env = configure_env(recipe, release, compute_capabilities=ccs, amdgpu_targets=amd,
                        python_bin=DEFAULT_PYTHON_BIN)
    # local CUDA/cuDNN/NCCL redistributions: the same absolute path inside the container,
    # read-only, so LOCAL_*_PATH means the same thing on both sides
    redist_mounts: list[Mount] = []
    for key, name in (("local_cuda_path", "LOCAL_CUDA_PATH"),
                      ("local_cudnn_path", "LOCAL_CUDNN_PATH"),
                      ("local_nccl_path", "LOCAL_NCCL_PATH")):
        local = recipe.resolve_path(f"cuda.{key}", base=recipe_dir)
        if kind != "cuda" or local is None:
            continue
        redist_mounts.append(Mount(str(local), str(local), "bind", read_only=True))
        if env.get(name):
            env[name] = str(local)
    predicted = simulate_configure(env, hermetic=release.hermetic_cuda)
    flags: list[Flag] = [Flag(f, _("progress a program can read")) for f in PROGRESS_FLAGS]
    flags.append(Flag(f"--build_event_json_file={RECORD}/bep.json",
                      _("Build Event Protocol file: structure and the authoritative exit")))
    flags.append(Flag("--config=opt", _("optimised build with the recipe's opt_flags")))
    notes: list[str] = []
    arch = _cpu_arch(build_host, target_host)
    # TF's CI names its aarch64 CPU wheel "tensorflow", not tensorflow_cpu (envs/linux_arm64)
    wheel_name = ("tensorflow" if kind in ("cuda", "rocm") or arch == "aarch64"
                  else "tensorflow_cpu")
    if release.wheel_style == "wheel":
        target = "//tensorflow/tools/pip_package:wheel"
        flags.append(Flag(f"--repo_env=WHEEL_NAME={wheel_name}",
                          _("the :wheel target names the wheel from WHEEL_NAME (TF >= 2.17)")))
        wheel_dir = f"{SRC}/{WHEEL_DIR_WHEEL}"
    else:
        target = "//tensorflow/tools/pip_package:build_pip_package"
        wheel_dir = PKG_DIR_LEGACY
        notes.append(_("TF <= 2.16 builds build_pip_package, then runs it to write the wheel."))
    if kind == "cuda":
        flags.append(Flag("--config=cuda", _("CUDA build")))
        if release.cuda_wheel_config:
            flags.append(Flag("--config=cuda_wheel", _("GPU wheel packaging (TF >= 2.18)")))
    if kind == "rocm":
        flags.append(Flag("--config=rocm", _("ROCm build")))
    if release.use_pywrap_rules:
        flags.append(Flag("--repo_env=USE_PYWRAP_RULES=1",
                          _("required by TF >= 2.20 wheel builds")))
    if release.hermetic_cuda or release.wheel_style == "wheel":
        flags.append(Flag(f"--repo_env=HERMETIC_PYTHON_VERSION={python}",
                          _("hermetic Python: the wheel's Python version")))
    elif release.series == "2.16":
        flags.append(Flag(f"--repo_env=TF_PYTHON_VERSION={python}",
                          _("the wheel's Python version (2.16-era name)")))
    clang_major = _compiler_clang_major(env)
    clang = kb.clang(clang_major) if clang_major else None
    if clang_major and clang_major >= 18 and clang and clang.offsetof_warning:
        flags.append(Flag("--copt=-Wno-gnu-offsetof-extensions",
                          _("configure.py adds this only for clang 16/17, but clang {major} "
                            "hits the same upb error (tensorflow#78613, #79756)").format(
                              major=clang_major)))
    if clang and clang.c23_warning:
        flags.append(Flag("--copt=-Wno-c23-extensions",
                          _("clang {major} also fails on -Wc23-extensions "
                            "(tensorflow#90459)").format(major=clang_major)))
    volumes = {
        "disk": f"{recipe.cache.volume_prefix}-bazel-disk-cache",
        "repo": f"{recipe.cache.volume_prefix}-bazel-repo-cache",
    }
    mounts: list[Mount] = list(redist_mounts)
    if recipe.cache.disk_cache:
        flags.append(Flag(f"--disk_cache={DISK_CACHE}",
                          _("actions cached in volume {volume} across builds").format(
                              volume=volumes["disk"])))
        mounts.append(Mount(volumes["disk"], DISK_CACHE, "volume"))
    else:
        volumes.pop("disk")
    if recipe.cache.repository_cache:
        flags.append(Flag(f"--repository_cache={REPO_CACHE}",
                          _("downloads cached in volume {volume}").format(
                              volume=volumes["repo"])))
        mounts.append(Mount(volumes["repo"], REPO_CACHE, "volume"))
    else:
        volumes.pop("repo")
    jobs, ram_mb, why = resource_limits(build_host, recipe.build.jobs,
                                        float(kb.platforms["memory"]["gib_per_job"]))
    if jobs:
        flags.append(Flag(f"--jobs={jobs}", why))
    flags.extend(resource_flags(release, build_host, ram_mb, kb))
    remote = recipe.remote
    if remote.cache:
        flags.append(Flag(f"--remote_cache={remote.cache}",
                          _("shared remote cache (recipe [remote])")))
        flags.append(Flag(f"--remote_upload_local_results={'true' if remote.upload else 'false'}",
                          _("write results to the remote cache") if remote.upload else
                          _("read-only use of the remote cache")))
    if remote.executor:
        flags.append(Flag(f"--remote_executor={remote.executor}", _("remote execution")))
    if remote.instance_name:
        flags.append(Flag(f"--remote_instance_name={remote.instance_name}",
                          _("remote instance")))
    if remote.bes_backend:
        flags.append(Flag(f"--bes_backend={remote.bes_backend}", _("Build Event Service")))
    if remote.bes_results_url:
        flags.append(Flag(f"--bes_results_url={remote.bes_results_url}",
                          _("build results UI")))
    if remote.cache or remote.executor or remote.bes_backend:
        for header in remote.headers:
            flags.append(Flag(f"--remote_header={header}",
                              _("header for the remote services (secret resolved at start)")))
    if recipe.network.distdir:
        flags.append(Flag(f"--distdir={DISTDIR}",
                          _("pre-downloaded archives for offline builds")))
    for extra in recipe.build.bazel_flags:
        flags.append(Flag(extra, _("from the recipe (build.bazel_flags), last so it wins")))

    source_dir = None
    if recipe.tensorflow.source_dir:
        source_kind = "dir"
        source_dir = str(recipe.resolve_path("tensorflow.source_dir", base=recipe_dir))
        mounts.insert(0, Mount(source_dir, SRC, "bind"))
        git_ref = ""
    else:
        source_kind = "ref" if recipe.tensorflow.ref else "release"
        git_ref = recipe.tensorflow.ref or release.git_tag
    image = recipe.build.image or release.image_for(python)
    if arch == "aarch64":
        notes.extend(_aarch64_notes(kb, release, image_chosen=bool(recipe.build.image)))
        if not recipe.build.image:  # the releases' images are x86_64 only
            image = str(kb.platforms["aarch64"]["image"])
    uid = os.getuid() if uid is None and hasattr(os, "getuid") else uid
    gid = os.getgid() if gid is None and hasattr(os, "getgid") else gid
    # USER: Bazel's client refuses to start for a uid without a passwd entry unless USER is set
    container_env = {"HOME": HOME, "USER": "tfwizard", "TF_PYTHON_VERSION": python}
    net = recipe.network
    for name, value in (("HTTP_PROXY", net.http_proxy), ("HTTPS_PROXY", net.https_proxy),
                        ("NO_PROXY", net.no_proxy)):
        if value:
            # Bazel's downloader and git read both spellings
            container_env[name] = value
            container_env[name.lower()] = value
    distdir = recipe.resolve_path("network.distdir", base=recipe_dir)
    if distdir is not None:
        mounts.append(Mount(str(distdir), DISTDIR, "bind", read_only=True))
    git_url = recipe.tensorflow.git_url
    if source_kind != "dir" and git_url.startswith("file://"):
        # a local mirror (a bare clone): the same path inside the container, read-only
        mirror = git_url[len("file://"):]
        mounts.append(Mount(mirror, mirror, "bind", read_only=True))
    steps: list[Step] = []
    if source_kind != "dir":
        steps.extend(fetch_source_steps(git_url, git_ref))
    steps.append(Step("configure", "configure", (DEFAULT_PYTHON_BIN, "configure.py"), env=env))
    startup = [f"--output_user_root={OUTPUT_USER_ROOT}"]
    steps.append(Step("build", "analyse",
                      ("bazel", *startup, "build", *[f.flag for f in flags], target)))
    if release.wheel_style == "build_pip_package":
        pkg_args = [f"{SRC}/bazel-bin/tensorflow/tools/pip_package/build_pip_package",
                    PKG_DIR_LEGACY]
        if kind == "cpu":
            pkg_args.append("--cpu")
        if kind == "rocm":
            pkg_args.append("--rocm")
        steps.append(Step("package", "package", tuple(pkg_args), needs_network=False))
    labels = {LABEL: "1", f"{LABEL}.recipe": recipe.name, f"{LABEL}.release": release.version}
    return BuildPlan(
        recipe_name=recipe.name,
        release=release.version,
        series=release.series,
        backend=kind,
        image=image,
        python=python,
        source_kind=source_kind,
        source_dir=source_dir,
        git_url=git_url,
        git_ref=git_ref,
        configure_env=env,
        predicted_bazelrc=predicted.lines,
        bazel_target=target,
        bazel_startup_flags=startup,
        bazel_flags=flags,
        wheel_dir=wheel_dir,
        wheel_name=wheel_name,
        compute_capabilities=ccs,
        amdgpu_targets=amd,
        mounts=mounts,
        container_env=container_env,
        user=f"{uid}:{gid}" if uid is not None else None,
        network_mode=recipe.build.network,
        gpu_passthrough=None,  # building needs no GPU; hermetic CUDA compiles without one
        cache_volumes=volumes,
        steps=steps,
        labels=labels,
        notes=notes + predicted.messages,
    )


#: printed by the fetch plan's repository-cache listing steps: "<marker> SIZE PATH"
REPO_CACHE_MARKER = "tfwizard-repo-cache"


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
                                        "--", git_url, SRC), workdir="/")]
    return [
        Step("fetch", "fetch", ("git", "init", "-q", SRC), workdir="/", needs_network=False),
        Step("fetch-commit", "fetch", ("git", "-C", SRC, "fetch", "--depth", "1", "--",
                                       git_url, git_ref), workdir="/"),
        Step("checkout", "fetch", ("git", "-c", "advice.detachedHead=false", "-C", SRC,
                                   "checkout", "-q", "FETCH_HEAD"), workdir="/",
             needs_network=False),
    ]


def make_fetch_plan(recipe: Recipe, **kwargs: Any) -> BuildPlan:
    """The download phase only: make_plan's steps with `bazel build --nobuild`.

    `--nobuild` loads and analyses the target with exactly the build's flags, configure
    answers and caches, so every external repository analysis needs is fetched into the
    repository cache (and network.distdir is honoured) and the real build later finds
    them there; nothing is compiled. With a repository cache, listing steps before and
    after say which archives are new. No wheel comes out (wheel_dir is empty).
    """
    plan = make_plan(recipe, **kwargs)
    steps: list[Step] = []
    listing = recipe.cache.repository_cache
    for step in plan.steps:
        if step.name == "package":
            continue
        if step.name == "build":
            if listing:
                steps.append(_repo_cache_listing("before"))
            at = step.argv.index("build") + 1
            steps.append(dataclasses.replace(
                step, argv=(*step.argv[:at], "--nobuild", *step.argv[at:]), phase="fetch"))
            if listing:
                steps.append(_repo_cache_listing("after"))
            continue
        steps.append(step)
    notes = [*plan.notes, _("fetch only: `bazel build --nobuild` downloads what loading and "
                            "analysis need (nearly all of TensorFlow's external repositories) "
                            "and compiles nothing")]
    if not listing:
        notes.append(_("cache.repository_cache is false: the downloads are not kept for the "
                       "build; only the Build Event Protocol's fetch events list them"))
    return dataclasses.replace(plan, steps=steps, wheel_dir="", notes=notes,
                               labels={**plan.labels, f"{LABEL}.fetch": "1"})


def _repo_cache_listing(when: str) -> Step:
    return Step(f"cache-{when}", "fetch",
                ("find", REPO_CACHE, "-type", "f", "-name", "file", "-printf",
                 f"{REPO_CACHE_MARKER}-{when} %s %P\\n"), workdir="/", needs_network=False)


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


def _compiler_clang_major(env: dict[str, str]) -> int | None:
    for key in ("CLANG_CUDA_COMPILER_PATH", "CLANG_COMPILER_PATH"):
        if env.get(key):
            return clang_major_of(env[key])
    return None


# -- rendering -----------------------------------------------------------------------


def secret_references(plan: BuildPlan) -> list[str]:
    """Names of the ${ENV_VAR} secrets the plan needs at container start."""
    return secrets.references([*plan.flag_list, *plan.container_env.values()])


def resolve_secrets(plan: BuildPlan, env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """(bazel flags, container env) with ${ENV_VAR} references replaced, for starting the
    container only: never write the result to a record or a log."""
    missing = [n for n in secret_references(plan) if n not in env]
    if missing:
        raise UsageError(_("the recipe refers to unset environment variable(s): {names}").format(
                             names=", ".join(missing)),
                         _("export them before building"))
    return ([secrets.substitute(f, env) for f in plan.flag_list],
            {k: secrets.substitute(v, env) for k, v in plan.container_env.items()})


def render_env(plan: BuildPlan) -> str:
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in plan.configure_env.items())


def render_bazelrc(plan: BuildPlan) -> str:
    return "".join(line + "\n" for line in plan.predicted_bazelrc)


def _comment(text: str) -> str:
    """A shell comment line; a translation cannot break out of it with a line break."""
    return "# " + " ".join(text.splitlines())


def render_commands(plan: BuildPlan) -> str:
    """Plain commands a person could paste: docker run, ./configure, bazel build."""
    q = shlex.quote
    lines = [_comment(_("tfwizard plan for {name}: TensorFlow {release} ({backend})").format(
                 name=plan.recipe_name, release=plan.release, backend=plan.backend)),
             _comment(_("Start the build container:"))]
    run = ["docker", "run", "--rm", "-it", "--name", f"tfwizard-{plan.recipe_name}"]
    if plan.user:
        run += ["--user", plan.user]
    for k, v in plan.container_env.items():
        run += ["-e", f"{k}={v}"]
    for m in plan.mounts:
        spec = f"{m.source}:{m.target}" + (":ro" if m.read_only else "")
        run += ["-v", spec]
    if plan.source_kind != "dir":
        run += ["-v", f"tfwizard-src-{plan.recipe_name}:{SRC}"]
    run += ["-w", SRC, plan.image, "bash"]
    lines.append(" ".join(q(a) for a in run))
    lines.append(_comment(_("Inside the container:")))
    for step in plan.steps:
        if step.name == "configure":
            lines.append(_comment(_("answer every configure question with environment "
                                    "variables:")))
            for k, v in step.env.items():
                lines.append(f"export {k}={q(v)}")
            lines.append("./configure")
        else:
            lines.append(" \\\n    ".join([" ".join(q(a) for a in step.argv[:4])] +
                                          [q(a) for a in step.argv[4:]])
                         if step.name == "build" else " ".join(q(a) for a in step.argv))
    lines.append(_comment(_("The wheel: {path}").format(path=f"{plan.wheel_dir}/*.whl")))
    return "\n".join(lines) + "\n"


def render_json(plan: BuildPlan) -> str:
    return plan.to_json()


# -- what a fetch downloaded ---------------------------------------------------------------


@dataclass
class FetchReport:
    """What `tfwizard fetch` downloaded: the BEP's fetch events and the repository cache."""

    urls: list[str] = field(default_factory=list)  # fetched with success (BEP fetch events)
    failed_urls: list[str] = field(default_factory=list)
    new_files: list[tuple[str, int]] = field(default_factory=list)  # (cache path, bytes)
    cache_files_before: int | None = None  # None: no listing (no repository cache)
    cache_files_after: int | None = None

    @property
    def new_bytes(self) -> int:
        return sum(size for _path, size in self.new_files)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "new_bytes": self.new_bytes}


def fetch_report(log_lines: Any, bep_lines: Any = ()) -> FetchReport:
    """Read a fetch's log lines (the listing steps' output) and BEP JSON lines."""
    report = FetchReport()
    listed: dict[str, dict[str, int]] = {"before": {}, "after": {}}
    seen: set[str] = set()
    for line in log_lines:
        for when, files in listed.items():
            prefix = f"{REPO_CACHE_MARKER}-{when} "
            if line.startswith(prefix):
                seen.add(when)
                size, _space, path = line[len(prefix):].partition(" ")
                if size.isdigit() and path:
                    files[path] = int(size)
    if "before" in seen or "after" in seen:
        report.cache_files_before = len(listed["before"])
        report.cache_files_after = len(listed["after"])
        report.new_files = sorted((p, s) for p, s in listed["after"].items()
                                  if p not in listed["before"])
    for raw in bep_lines:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        url = event.get("id", {}).get("fetch", {}).get("url") if isinstance(event, dict) else None
        if not url:
            continue
        # proto3 JSON leaves out false: a fetch without "success" failed
        target = report.urls if event.get("fetch", {}).get("success") else report.failed_urls
        if url not in target:
            target.append(url)
    return report
