"""Bazel's flags for a build, in named groups (the shape of JAX's build/build.py).

Each group is a small function of what it depends on, returning its flags with the reason
tfwizard adds each one; `bazel_flags` joins them in the order Bazel gets them (the
recipe's own flags last, so they win) and stamps each flag with its group's name, which
the plan keeps (plan.json, `tfwizard plan --format json`). Adding a flag means finding its
group here, not a spot in a long function.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.version import InvalidVersion, Version

from ...host import HostProfile
from ...i18n import _
from ...knowledge import KnowledgeBase, Release
from ...paths import owner
from ...recipe import Recipe, RemoteSection
from ...sizing import job_sizing
from ...toolchain import CxxToolchain, has_hermetic_cc, llvm_default

#: where things live inside the build container (the flags name them)
RECORD = "/record"
DISK_CACHE = "/cache/disk"
REPO_CACHE = "/cache/repo"
DISTDIR = "/cache/distdir"
PROGRESS_FLAGS = ("--curses=no", "--color=no", "--show_progress_rate_limit=1")

#: the groups in the order their flags reach Bazel
GROUPS = ("progress", "wheel", "backend", "python", "compiler", "caches", "resources",
          "remote", "network", "user")


@dataclass(frozen=True)
class Flag:
    """One Bazel flag, why tfwizard adds it, and the group that added it."""

    flag: str
    why: str
    group: str = ""


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


def progress_flags() -> list[Flag]:
    """Output a program can read, the Build Event Protocol file, the optimised build."""
    flags = [Flag(f, _("progress a program can read")) for f in PROGRESS_FLAGS]
    flags.append(Flag(f"--build_event_json_file={RECORD}/bep.json",
                      _("Build Event Protocol file: structure and the authoritative exit")))
    flags.append(Flag("--config=opt", _("optimised build with the recipe's opt_flags")))
    return flags


def wheel_flags(release: Release, wheel_name: str) -> list[Flag]:
    """The :wheel target (TF >= 2.17) names its wheel from WHEEL_NAME."""
    if release.wheel_style != "wheel":
        return []
    return [Flag(f"--repo_env=WHEEL_NAME={wheel_name}",
                 _("the :wheel target names the wheel from WHEEL_NAME (TF >= 2.17)"))]


def backend_flags(release: Release, kind: str) -> list[Flag]:
    """--config=cuda (and cuda_wheel from TF 2.18) or --config=rocm; none for a CPU build."""
    if kind == "cuda":
        flags = [Flag("--config=cuda", _("CUDA build"))]
        if release.cuda_wheel_config:
            flags.append(Flag("--config=cuda_wheel", _("GPU wheel packaging (TF >= 2.18)")))
        return flags
    if kind == "rocm":
        return [Flag("--config=rocm", _("ROCm build"))]
    return []


def python_flags(release: Release, python: str) -> list[Flag]:
    """The pywrap rules (TF >= 2.20) and the wheel's Python version, by the release's name."""
    flags = []
    if release.use_pywrap_rules:
        flags.append(Flag("--repo_env=USE_PYWRAP_RULES=1",
                          _("required by TF >= 2.20 wheel builds")))
    if release.hermetic_cuda or release.wheel_style == "wheel":
        flags.append(Flag(f"--repo_env=HERMETIC_PYTHON_VERSION={python}",
                          _("hermetic Python: the wheel's Python version")))
    elif release.series == "2.16":
        flags.append(Flag(f"--repo_env=TF_PYTHON_VERSION={python}",
                          _("the wheel's Python version (2.16-era name)")))
    return flags


#: what `--config=clang_local` needs besides itself for a CUDA build: TF's own
#: release_gpu_linux_clang_local adds the crosstool of local_config_cuda (its .bazelrc)
LOCAL_CUDA_CROSSTOOL = "@local_config_cuda//crosstool:toolchain"


def toolchain_flags(toolchain: CxxToolchain, release: Release, kind: str) -> list[Flag]:
    """The hermetic LLVM's version, or the switch to the build image's clang."""
    if toolchain.hermetic:
        if not toolchain.llvm_version:
            return []
        return [Flag(f"--repo_env=LLVM_VERSION={toolchain.llvm_version}",
                     _("the hermetic LLVM TensorFlow {version} downloads and compiles with "
                       "(rules_ml_toolchain; its default is {default})").format(
                         version=release.version, default=llvm_default(release)))]
    if not has_hermetic_cc(release) or kind == "rocm":
        return []  # the release, or TF's rocm config, compiles with the image's clang anyway
    flags = [Flag("--config=clang_local",
                  _("toolchain.local_clang: compile with the build image's clang instead of "
                    "the hermetic LLVM"))]
    if kind == "cuda" and toolchain.clang is not None:
        flags.append(Flag(f"--crosstool_top={LOCAL_CUDA_CROSSTOOL}",
                          _("the CUDA C++ toolchain configure sets up for the image's clang "
                            "(as TF's release_gpu_linux_clang_local)")))
    return flags


def compiler_flags(toolchain: CxxToolchain, kb: KnowledgeBase) -> list[Flag]:
    """Warnings newer clangs turn into errors in TF's sources (clang.toml says which), for
    the clang that compiles (the hermetic LLVM or the image's)."""
    major = toolchain.clang
    clang = kb.clang(major) if major else None
    flags = []
    if major and major >= 18 and clang and clang.offsetof_warning:
        flags.append(Flag("--copt=-Wno-gnu-offsetof-extensions",
                          _("configure.py adds this only for clang 16/17, but clang {major} "
                            "hits the same upb error (tensorflow#78613, #79756)").format(
                              major=major)))
    if clang and clang.c23_warning:
        flags.append(Flag("--copt=-Wno-c23-extensions",
                          _("clang {major} also fails on -Wc23-extensions "
                            "(tensorflow#90459)").format(major=major)))
    return flags


def cache_volumes(recipe: Recipe) -> dict[str, str]:
    """The cache volumes the recipe keeps across builds: {"disk"|"repo": volume name}.

    Each user's own (PREFIX-uUID-...) unless the recipe shares them on purpose
    (cache.shared): a cache anyone on the engine can write is a cache anyone can poison."""
    prefix = recipe.cache.volume_prefix
    if not recipe.cache.shared and owner():
        prefix = f"{prefix}-u{owner()}"
    volumes = {}
    if recipe.cache.disk_cache:
        volumes["disk"] = f"{prefix}-bazel-disk-cache"
    if recipe.cache.repository_cache:
        volumes["repo"] = f"{prefix}-bazel-repo-cache"
    return volumes


#: (cache, where its volume is mounted, its flag)
CACHE_MOUNTS = (("disk", DISK_CACHE, "--disk_cache"), ("repo", REPO_CACHE, "--repository_cache"))


def cache_flags(volumes: dict[str, str]) -> list[Flag]:
    """--disk_cache / --repository_cache in the volumes `cache_volumes` named."""
    flags = []
    for key, target, flag in CACHE_MOUNTS:
        if key in volumes:
            why = (_("actions cached in volume {volume} across builds") if key == "disk"
                   else _("downloads cached in volume {volume}"))
            flags.append(Flag(f"{flag}={target}", why.format(volume=volumes[key])))
    return flags


def resource_flags(release: Release, build_host: HostProfile | None, jobs: int | None,
                   why_jobs: str, ram_mb: int | None, kb: KnowledgeBase,
                   bazel: Version | None = None) -> list[Flag]:
    """--jobs, and the flags that keep Bazel within the build host's memory, in the form the
    build's Bazel takes (`bazel`, else the release's): --local_resources=memory=/cpu= from
    Bazel 7.1 (platforms.toml [bazel_resources]), --local_ram_resources before."""
    flags = [Flag(f"--jobs={jobs}", why_jobs)] if jobs else []
    if not ram_mb:
        return flags
    # "% o" would read as a %-format to Babel's checker: the number ends the sentence
    why = _("keep Bazel's share of the build host's RAM under 80%")
    since = Version(str(kb.platforms["bazel_resources"]["local_resources_since"]))
    try:
        modern = (bazel or Version(release.bazel)) >= since
    except InvalidVersion:
        modern = True  # "master" style values: the newest Bazel
    if not modern:
        return [*flags, Flag(f"--local_ram_resources={ram_mb}", why)]
    assert build_host is not None  # ram_mb comes from its profile
    cpus = build_host.resources.cpu_count or build_host.cpu.cores or 1
    return [*flags, Flag(f"--local_resources=memory={ram_mb}", why),
            Flag(f"--local_resources=cpu={cpus}",
                 _("the build host's CPUs (Bazel >= 7.1 replaces --local_ram_resources and "
                   "--local_cpu_resources with --local_resources)"))]


def remote_flags(remote: RemoteSection) -> list[Flag]:
    """The recipe's [remote]: cache, executor, instance, Build Event Service, headers."""
    flags = []
    if remote.cache:
        flags.append(Flag(f"--remote_cache={remote.cache}",
                          _("shared remote cache (recipe [remote])")))
        flags.append(Flag(f"--remote_upload_local_results={'true' if remote.upload else 'false'}",
                          _("write results to the remote cache") if remote.upload else
                          _("read-only use of the remote cache")))
    for value, flag, why in ((remote.executor, "--remote_executor", _("remote execution")),
                             (remote.instance_name, "--remote_instance_name",
                              _("remote instance")),
                             (remote.bes_backend, "--bes_backend", _("Build Event Service")),
                             (remote.bes_results_url, "--bes_results_url",
                              _("build results UI"))):
        if value:
            flags.append(Flag(f"{flag}={value}", why))
    if remote.cache or remote.executor or remote.bes_backend:
        flags.extend(Flag(f"--remote_header={header}",
                          _("header for the remote services (secret resolved at start)"))
                     for header in remote.headers)
    return flags


def network_flags(recipe: Recipe) -> list[Flag]:
    """--distdir when the recipe names pre-downloaded archives (offline builds)."""
    if not recipe.network.distdir:
        return []
    return [Flag(f"--distdir={DISTDIR}", _("pre-downloaded archives for offline builds"))]


def user_flags(recipe: Recipe) -> list[Flag]:
    """build.bazel_flags as the recipe writes them, last so they win."""
    return [Flag(extra, _("from the recipe (build.bazel_flags), last so it wins"))
            for extra in recipe.build.bazel_flags]


def grouped(groups: dict[str, list[Flag]]) -> list[Flag]:
    """The groups' flags in GROUPS order, each stamped with its group's name."""
    unknown = set(groups) - set(GROUPS)
    assert not unknown, unknown
    return [replace(f, group=name) for name in GROUPS for f in groups.get(name, [])]
