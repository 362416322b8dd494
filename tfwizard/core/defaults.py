"""A sensible starting recipe for a machine (what `recipe new` writes and the wizard
starts from), and the choices a backend or a target machine implies."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import tomlkit
from packaging.version import Version

from . import cc as ccmod
from .compat import cuda_support
from .errors import UsageError
from .host import HostProfile
from .i18n import _, translate
from .knowledge import KnowledgeBase, Release, default_python, load_knowledge
from .recipe import RECIPE_SCHEMA, SECTIONS, Recipe, extras_for_backend
from .toolchain import has_hermetic_cc, llvm_default

#: the backends a recipe can build
BACKENDS = ("cpu", "cuda", "rocm")
#: words of a GPU's name that say nothing about the machine (every NVIDIA card has them)
_VENDOR_WORDS = {"nvidia", "geforce", "gpu", "amd", "radeon", "graphics", "corporation"}


def default_recipe(host: HostProfile | None = None, kb: KnowledgeBase | None = None, *,
                   target: HostProfile | None = None, target_path: str = "",
                   backend: str | None = None) -> Recipe:
    """The latest release for the machine the wheel runs on (`target`, else `host`): its
    GPUs choose the backend (unless `backend` is given), a CUDA its driver runs and its
    compute capabilities; named after the release, the backend and the target.

    The one starting recipe of `recipe new` (--from-host, --target, --backend) and the
    wizard (its first recipe, a detected host, an imported target profile).
    """
    kb = kb or load_knowledge()
    release = kb.latest_release()
    recipe = Recipe(name=f"tf{release.series.replace('.', '')}-cpu")
    recipe.tensorflow.version = release.version
    recipe.python.version = default_python(release)
    if has_hermetic_cc(release):  # the LLVM the release's own toolchain compiles with
        recipe.toolchain.clang = str(llvm_default(release))
    elif release.default_clang:
        recipe.toolchain.clang = str(release.default_clang)
    if target is not None:
        recipe.target.host_profile = target_path
    recipe = recipe.with_changes(backend_choices(
        recipe, backend or backend_for(target or host), host, target, kb))
    return recipe.with_changes(name_choices(recipe, target, target_path, kb))


def backend_for(machine: HostProfile | None) -> str:
    """The backend a machine's GPUs call for: cuda for NVIDIA, rocm for AMD, else cpu."""
    if machine is not None and machine.nvidia.gpus and machine.nvidia_ccs():
        return "cuda"
    if machine is not None and machine.amd_targets():
        return "rocm"
    return "cpu"


def release_cuda_lists(kb: KnowledgeBase, rel: Release) -> tuple[list[str], list[str]]:
    """The CUDA and cuDNN versions a release can build with: its hermetic lists, else
    the one tested pair."""
    redist = kb.redist.get(rel.cuda_list or "")
    if rel.hermetic_cuda and redist is not None:
        return list(redist.cuda), list(redist.cudnn)
    return [rel.tested_cuda], [rel.tested_cudnn]


def driver_cuda(rel: Release, cudas: list[str], machine: HostProfile | None) -> str:
    """TensorFlow's default CUDA when the machine's driver runs it natively (or its
    driver is unknown), else the newest of `cudas` it does run."""
    default = rel.hermetic_cuda_default or rel.tested_cuda
    driver = machine.nvidia.cuda_driver_version if machine is not None else None
    if cuda_support(driver, default) in (None, "native"):
        return default
    runs = [c for c in cudas if cuda_support(driver, c) == "native"]
    return max(runs, key=lambda c: Version(c)) if runs else default


def backend_choices(recipe: Recipe, kind: str, host: HostProfile | None,
                    target: HostProfile | None, kb: KnowledgeBase, *,
                    keep: bool = True) -> dict[str, Any]:
    """The recipe changes that building for `kind` takes on the machine the wheel runs on
    (`target`, else `host`): for CUDA a version its driver runs and cuDNN (kept when the
    recipe has one the release lists), the machine's compute capabilities ("auto" on this
    machine, the target profile's own list, else the official wheel's); for ROCm its gfx
    targets; the other backend's settings cleared. `keep`: the recipe's own versions and
    targets stay where they fit (a backend switch); otherwise all are chosen afresh (a new
    target machine)."""
    if kind not in BACKENDS:
        raise UsageError(_("backend must be one of {choices}, not {backend!r}.").format(
            choices=", ".join(BACKENDS), backend=kind))
    changes: dict[str, Any] = {"backend.kind": kind,
                               "install.extras": extras_for_backend(kind, recipe.install.extras)}
    rel = kb.release_for(recipe)
    machine = target or host
    if kind == "cuda" and rel is not None:
        cudas, cudnns = release_cuda_lists(kb, rel)
        c = recipe.cuda
        changes["cuda.version"] = c.version if keep and c.version in cudas else \
            driver_cuda(rel, cudas, machine)
        changes["cuda.cudnn"] = c.cudnn if keep and c.cudnn in cudnns else \
            (rel.hermetic_cudnn_default or rel.tested_cudnn)
        changes["cuda.compiler"] = c.compiler or "clang"
        if not (keep and c.compute_capabilities):
            ccs = machine.nvidia_ccs() if machine is not None else []
            changes["cuda.compute_capabilities"] = (
                ["auto"] if ccs and target is None else ccmod.cc_tokens(ccs) if ccs
                else list(rel.wheel_compute_capabilities))
    elif kind == "rocm":
        gfx = machine.amd_targets() if machine is not None else []
        if not (keep and recipe.rocm.version):
            changes["rocm.version"] = (machine.amd.rocm_version if machine is not None
                                       else None) or "6.2.0"
        if not (keep and recipe.rocm.amdgpu_targets):
            changes["rocm.amdgpu_targets"] = (["auto"] if gfx and target is None else gfx
                                              or list(kb.rocm_default_targets))
    if kind != "cuda":  # ignored by another backend's build, and `check` warns of them
        changes.update({"cuda.version": "", "cuda.cudnn": "", "cuda.compute_capabilities": []})
    return changes


def target_label(target: HostProfile | None, path: str = "") -> str:
    """A short name for the machine the wheel is for, for recipe names: its first GPU's
    model ("rtx-4090-laptop"), else the profile file's name; "" for this machine."""
    if target is None:
        return ""
    names = [g.name for g in target.nvidia.gpus if g.name] + \
        [g.name for g in target.amd.gpus if g.name]
    words = re.findall(r"[a-z0-9]+", (names[0] if names else "").lower())
    label = "-".join(w for w in words if w not in _VENDOR_WORDS)
    if not label and path:
        label = "-".join(re.findall(r"[a-z0-9]+", Path(path).stem.lower()))
    return label[:40].strip("-")


def recipe_name(recipe: Recipe, target: HostProfile | None, target_path: str,
                kb: KnowledgeBase) -> str:
    """"tf221-cuda-rtx-4090-laptop": the release series, the backend and the target."""
    rel = kb.release_for(recipe)
    series = (rel.series if rel is not None and rel.version != "master" else
              (recipe.tensorflow.version or "master")).replace(".", "")
    label = target_label(target, target_path)
    return "-".join(p for p in (f"tf{series}", recipe.backend.kind, label) if p)


def name_choices(recipe: Recipe, target: HostProfile | None, target_path: str,
                 kb: KnowledgeBase) -> dict[str, Any]:
    """The name and venv a recipe gets from its release, backend and target (the venv
    only while it is the one named after the old name, or none)."""
    name = recipe_name(recipe, target, target_path, kb)
    changes: dict[str, Any] = {"name": name}
    if recipe.install.venv in ("", f"~/.venvs/{recipe.name}"):
        changes["install.venv"] = f"~/.venvs/{name}"
    return changes


def commented_recipe_toml(recipe: Recipe) -> str:
    """The recipe with every key written out and a comment saying what it means, in the
    current language (the keys, values and choices stay as they are)."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment(_("tfwizard recipe: what to build. Replay it with "
                              "`tfwizard build FILE`.")))
    doc.add(tomlkit.comment(_("Every key is explained; `tfwizard check FILE` says what would "
                              "break.")))
    doc.add("schema", RECIPE_SCHEMA)
    doc.add("name", recipe.name)
    import dataclasses

    for name, cls in SECTIONS.items():
        table = tomlkit.table()
        section = getattr(recipe, name)
        for f in dataclasses.fields(cls):
            value: Any = getattr(section, f.name)
            item = tomlkit.item(value)
            choices = f.metadata["choices"]
            # the help is marked N_() in the schema and translated here, where it is shown
            note = translate(f.metadata["help"]) + (f" ({' | '.join(choices)})" if choices else "")
            item.comment(note)
            table.add(f.name, item)
        doc.add(tomlkit.nl())
        doc.add(name, table)
    return tomlkit.dumps(doc)
