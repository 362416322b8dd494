"""Rules on the build machine's resources and Docker: memory per job, the engine, the
build image and Bazel flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..findings import Fix
from ..i18n import _
from ..knowledge import recipe_python
from ..toolchain import IMAGE
from ..vocab import Severity
from .context import Ctx, toolchain


def rule_resources(ctx: Ctx) -> None:
    """Enough memory for the Bazel jobs the build will run (the plan's own job sizing)."""
    b, r = ctx.build, ctx.recipe
    if b is None:
        return
    from ..sizing import job_sizing  # the one jobs/RAM sizing rule, shared with the plan

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
    low = disk_low(free, mem, gpu=r.is_gpu, path=b.resources.disk_path) if free is not None \
        else None
    if low is not None:
        ctx.add("DISK_LOW", low[0], low[1], mem["sources"], "cache.disk_cache")


def disk_low(free_bytes: int, mem: Mapping[str, Any], *, gpu: bool, path: str | None = None,
             engine: str | None = None) -> tuple[Severity, str] | None:
    """DISK_LOW's (severity, message) when `free_bytes` is less than a build needs
    (platforms.toml's [memory]), else None: free at `path`, on the disk of the Docker
    engine at `engine` (one on another machine, asked by the preflight), or at the data
    folder. An error below half the need, a warning below the need."""
    need = mem["min_free_disk_gib_cuda"] if gpu else mem["min_free_disk_gib_cpu"]
    free_gib = free_bytes / 2**30
    if free_gib >= need:
        return None
    if engine:
        text = _("{free:.0f} GiB free on the disk of the Docker engine at {engine}; a {kind} "
                 "TensorFlow build needs ~{need} GiB there for Bazel's output base and caches.")
    elif path:
        text = _("{free:.0f} GiB free at {path}; a {kind} TensorFlow build needs ~{need} "
                 "GiB for Bazel's output base and caches.")
    else:
        text = _("{free:.0f} GiB free at the data folder; a {kind} TensorFlow build needs "
                 "~{need} GiB for Bazel's output base and caches.")
    severity: Severity = "error" if free_gib < need / 2 else "warning"
    return (severity,
            text.format(free=free_gib, path=path, engine=engine, need=need,
                        kind="GPU" if gpu else "CPU"))


def rule_docker(ctx: Ctx) -> None:
    """Docker must be usable on the build host."""
    b = ctx.build
    if b is None:
        return
    d = b.docker
    if d.status != "ok":
        ctx.add("DOCKER_UNAVAILABLE", "error",
                _("Docker is not usable on the build host ({status}): {message}")
                .format(status=d.status, message=d.message).strip(),
                ["docker-api"], "host.docker")


def rule_image(ctx: Ctx) -> None:
    """The default build image: a tag that may have moved, a clang it probably lacks."""
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
    tc = toolchain(ctx)  # the hermetic LLVM is downloaded: the image's clang is not asked for
    clang = tc.clang if tc.kind == IMAGE else None
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


def _aarch64_build(ctx: Ctx) -> bool:
    """On aarch64 the plan builds in TF's arm64 image, not the release's (see plan.py)."""
    host = ctx.build if ctx.build is not None else ctx.target
    return host is not None and host.cpu.arch == "aarch64"


def rule_bazel_flags(ctx: Ctx) -> None:
    """build.bazel_flags that contradict the backend or other recipe keys."""
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
