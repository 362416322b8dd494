"""A sensible starting recipe for a machine (what `recipe new --from-host` writes)."""

from __future__ import annotations

from typing import Any

import tomlkit

from .host import HostProfile
from .knowledge import KnowledgeBase, default_python, load_knowledge
from .recipe import RECIPE_SCHEMA, SECTIONS, Recipe, extras_for_backend
from .toolchain import has_hermetic_cc, llvm_default


def default_recipe(host: HostProfile | None = None, kb: KnowledgeBase | None = None) -> Recipe:
    """The latest release, CPU unless the host has a GPU, the clang the release compiles
    with (its hermetic LLVM's default, else its image's)."""
    kb = kb or load_knowledge()
    release = kb.latest_release()
    recipe = Recipe(name=f"tf{release.series.replace('.', '')}-cpu")
    recipe.tensorflow.version = release.version
    recipe.python.version = default_python(release)
    if has_hermetic_cc(release):  # the LLVM the release's own toolchain compiles with
        recipe.toolchain.clang = str(llvm_default(release))
    elif release.default_clang:
        recipe.toolchain.clang = str(release.default_clang)
    if host is not None and host.nvidia.gpus and host.nvidia_ccs():
        recipe.backend.kind = "cuda"
        recipe.name = f"tf{release.series.replace('.', '')}-cuda"
        recipe.cuda.version = release.hermetic_cuda_default or release.tested_cuda
        cudnn = release.hermetic_cudnn_default or release.tested_cudnn
        recipe.cuda.cudnn = cudnn
        recipe.cuda.compute_capabilities = ["auto"]
        recipe.cuda.compiler = "clang"
    elif host is not None and host.amd_targets():
        recipe.backend.kind = "rocm"
        recipe.name = f"tf{release.series.replace('.', '')}-rocm"
        recipe.rocm.version = host.amd.rocm_version or "6.2.0"
        recipe.rocm.amdgpu_targets = ["auto"]
    recipe.install.extras = extras_for_backend(recipe.backend.kind, recipe.install.extras)
    recipe.install.venv = f"~/.venvs/{recipe.name}"
    return recipe


def commented_recipe_toml(recipe: Recipe) -> str:
    """The recipe with every key written out and a comment saying what it means."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment("tfwizard recipe: what to build. Replay it with `tfwizard build FILE`."))
    doc.add(tomlkit.comment("Every key is explained; `tfwizard check FILE` says what would break."))
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
            note = f.metadata["help"] + (f" ({' | '.join(choices)})" if choices else "")
            item.comment(note)
            table.add(f.name, item)
        doc.add(tomlkit.nl())
        doc.add(name, table)
    return tomlkit.dumps(doc)
