"""Live compatibility rules: (recipe, build host, target host) -> findings.

Each finding says what will break (or is worth knowing) before a multi-hour build, why,
where the fact comes from (knowledge-base source keys) and, where possible, a fix as a
recipe change the GUI applies in one click. Facts come from the knowledge base; the
rules only combine them. Evaluation is pure and fast (the GUI re-checks on every change).

Messages and fix labels are made in the current language (`_()`; the knowledge-base texts
a message quotes whole through `translate()`, their translations are the knowledge
area's, see `knowledge.display_texts`); codes, keys, sources and a fix's `changes` are for
machines and stay as they are.

The rules live in one module per family (release, cuda, driver, capabilities, compiler,
platform, rocm, resources, network); `catalog` runs them in order. This package's names
are the public API; the findings they make are core/findings.py's.
"""

from __future__ import annotations

from ..knowledge import load_knowledge
from .catalog import RULES, apply_fix, evaluate
from .presets import portable_compute_capabilities

__all__ = ["RULES", "apply_fix", "evaluate", "load_knowledge", "portable_compute_capabilities"]
