"""Rules on a local TensorFlow checkout (tensorflow.source_dir): it must exist, hold
files, and be a TensorFlow checkout. They read this machine's file system, as the build
will mount that folder (a missing or empty folder passed `check` and the GUI)."""

from __future__ import annotations

from ..findings import Fix
from ..i18n import _, translate
from ..tfsource.overlay import FACT_NAMES, SOURCE_KEY
from .context import Ctx


def rule_source_dir(ctx: Ctx) -> None:
    """tensorflow.source_dir names a folder here that is a TensorFlow checkout."""
    key = "tensorflow.source_dir"
    if not ctx.recipe.tensorflow.source_dir:
        return
    path = ctx.recipe.resolve_path(key)
    if path is None:
        return
    if not path.exists():  # the preflight's code for every other path key: one fact, one code
        ctx.add("PATH_MISSING", "error",
                _("{path} does not exist on this machine; choose the folder of your "
                  "TensorFlow checkout, or clone the release instead.").format(path=path),
                ["tf-source-md"], key)
    elif not path.is_dir():
        ctx.add("SOURCE_NOT_FOLDER", "error", _("{path} is a file, not a folder.").format(path=path),
                ["tf-source-md"], key)
    elif not any(path.iterdir()):
        ctx.add("SOURCE_EMPTY", "error",
                _("{path} is empty: clone TensorFlow into it first (`git clone "
                  "https://github.com/tensorflow/tensorflow`), or clone the release "
                  "instead.").format(path=path), ["tf-source-md"], key)
    elif not (path / "configure.py").is_file():
        ctx.add("SOURCE_NOT_TF", "error",
                _("{path} is not a TensorFlow checkout (no configure.py).").format(path=path),
                ["tf-configure-py"], key)


def rule_source_facts(ctx: Ctx) -> None:
    """Where the source's own files disagree with the table, one finding per fact (the
    checks and the plan follow the files); an error when the files lack a config the
    build needs."""
    view = ctx.source
    if view is None:
        return
    for diff in view.differences:
        fix = None
        if diff.fact == "version":
            known = ctx.kb.release(diff.source)
            if known is not None:
                fix = Fix(_("Use {version}").format(version=known.version),
                          {"tensorflow.version": known.version})
        ctx.add("SOURCE_FACT_DIFFERS", "info",
                _("{file} says {fact}: {source}; tfwizard's table for TensorFlow {version} "
                  "says {table}. The plan and the checks follow the file.").format(
                    file=diff.file or view.facts.where, fact=translate(FACT_NAMES[diff.fact]),
                    source=diff.source or "-", version=view.table_release.version,
                    table=diff.table or "-"),
                [SOURCE_KEY], "tensorflow.version" if diff.fact == "version" else
                "tensorflow.source_dir", fix)
    configs = view.facts.configs
    kind = ctx.recipe.backend.kind
    if configs is None or kind not in ("cuda", "rocm"):
        return
    for config in (kind,):  # the backend's config; cuda_wheel follows the file already
        if config not in configs:
            ctx.add("SOURCE_CONFIG_MISSING", "error",
                    _("{file} defines no `{config}` config, which a {kind} build of this "
                      "source uses (--config={config}): Bazel would stop at once. Build "
                      "another backend, or a source that has it.").format(
                        file=view.facts.cite("configs"), config=config, kind=kind),
                    [SOURCE_KEY], "backend.kind")


def rule_source_build_modes(ctx: Ctx) -> None:
    """What the source offers besides the plan's way: Bzlmod (an experimental MODULE.bazel)
    and TF's own CUDA 13 wheel config; notes, the plan builds as the .bazelrc says."""
    view = ctx.source
    if view is None:
        return
    facts = view.facts
    if facts.module_bazel:
        ctx.add("SOURCE_BZLMOD", "info",
                (_("{file} has a MODULE.bazel (Bzlmod support, experimental in TensorFlow) "
                   "and its .bazelrc turns Bzlmod on: the build uses it.") if facts.bzlmod else
                 _("{file} has a MODULE.bazel (Bzlmod support, experimental in TensorFlow); "
                   "its .bazelrc keeps WORKSPACE, and so does the build. TF's CI tries "
                   "Bzlmod with --enable_bzlmod (ci/official/envs/bzlmod), which you can add "
                   "to build.bazel_flags; UNVERIFIED for a wheel.")).format(
                    file=facts.where), [SOURCE_KEY, "tf-ci-official"], "build.bazel_flags")
    cuda = ctx.recipe.cuda.version
    if (ctx.recipe.backend.kind == "cuda" and cuda.split(".")[0] == "13"
            and "cuda13_version" in (facts.configs or ())):
        ctx.add("SOURCE_CUDA13_CONFIG", "info",
                _("{file} defines TF's own CUDA 13 configs: its CI builds the "
                  "tensorflow_cuda13 wheel with --config=cuda_nvcc --config=cuda13_version "
                  "(ci/official/envs/linux_x86_cuda13_nvcc). The plan builds the CUDA "
                  "{cuda} and compiler of the recipe with its own configure answers.").format(
                    file=facts.cite("configs"), cuda=cuda), [SOURCE_KEY, "tf-ci-official"],
                "cuda.version")
