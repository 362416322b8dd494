"""Recipes: one TOML file that says what to build, replayable headlessly.

Loading reports **every** problem at once, each with its key path and line. Saving
keeps the user's comments (tomlkit) and is atomic, with the previous file kept as
a backup. The schema is declared once, in the section dataclasses of `schema`; validation
(`load`), the `recipe new` template and the docs reference are all derived from it.
The names here are the recipe's public face: import them from `tfwizard.core.recipe`.
"""

from __future__ import annotations

from .load import Problem, key_lines, load_recipe, parse_recipe, recipe_error, validate
from .save import save_recipe
from .schema import (
    AND_CUDA,
    HOST_PATH_KEYS,
    MAX_RECIPE_BYTES,
    RECIPE_SCHEMA,
    SECTIONS,
    TOP_KEYS,
    BackendSection,
    BuildSection,
    CacheSection,
    CudaSection,
    InstallSection,
    NetworkSection,
    OutputSection,
    PythonSection,
    Recipe,
    RemoteSection,
    RocmSection,
    TargetSection,
    TensorflowSection,
    ToolchainSection,
    WheelhouseSection,
    extras_for_backend,
    schema_reference,
)

__all__ = [
    "AND_CUDA", "HOST_PATH_KEYS", "MAX_RECIPE_BYTES", "RECIPE_SCHEMA", "SECTIONS", "TOP_KEYS",
    "BackendSection", "BuildSection", "CacheSection", "CudaSection", "InstallSection",
    "NetworkSection", "OutputSection", "Problem", "PythonSection", "Recipe", "RemoteSection",
    "RocmSection", "TargetSection", "TensorflowSection", "ToolchainSection",
    "WheelhouseSection", "extras_for_backend", "key_lines", "load_recipe", "parse_recipe",
    "recipe_error", "save_recipe", "schema_reference", "validate",
]
