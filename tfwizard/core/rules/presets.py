"""Compute-capability presets the GUI offers, decided by the rules themselves."""

from __future__ import annotations

from .. import cc as ccmod
from ..knowledge import KnowledgeBase, load_knowledge
from ..recipe import Recipe
from .catalog import evaluate


def portable_compute_capabilities(recipe: Recipe, kb: KnowledgeBase | None = None) -> list[str]:
    """The "portable" preset: a cubin for the oldest desktop CC of every GPU generation the
    recipe's CUDA and compiler can build, plus PTX for the newest.

    A cubin for X.0 runs on every desktop X.y, so this covers each generation; whether a
    generation can be built is the rules' own verdict on that target alone.
    """
    kb = kb or load_knowledge()
    oldest: dict[int, tuple[int, int]] = {}
    for cc in kb.known_ccs():
        parsed = ccmod.parse_cc(cc)
        if parsed is None or kb.is_tegra(cc) or parsed[0] in oldest:
            continue
        token = ccmod.token(*parsed)
        candidate = recipe.with_changes({"cuda.compute_capabilities": [token]})
        # with one token and no host, every error on the key is about that token (not
        # f.message.startswith(token): messages are translated)
        blocked = any(f.severity == "error" and f.key == "cuda.compute_capabilities"
                      for f in evaluate(candidate, kb=kb))
        if not blocked:
            oldest[parsed[0]] = parsed
    return ccmod.cc_tokens(f"{major}.{minor}" for major, minor in oldest.values())
