"""Rules on ROCm builds: the release's ROCm and the target's AMD GPUs."""

from __future__ import annotations

from ..findings import Fix
from ..i18n import _
from .context import Ctx


def rule_rocm(ctx: Ctx) -> None:
    """A ROCm build needs a release with ROCm and AMD GPUs it supports."""
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
