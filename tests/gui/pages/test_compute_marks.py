"""The Compute page marks in the list what the recipe's CUDA cannot build, and writes the
recipe line in TOML (UX review, Compute: "impossible CCs are not marked", "Python syntax")."""

from __future__ import annotations

import pytest
import tomllib

from tfwizard.core.rules.capabilities import buildable
from tfwizard.core.rules.context import Ctx
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_ccs_the_cuda_cannot_build_are_marked(make_window):
    wizard = make_window().wizard
    assert wizard.go_to(PageId.COMPUTE) == PageId.COMPUTE
    page = wizard.compute
    recipe = wizard.state.recipe
    cuda = recipe.cuda.version
    assert cuda.startswith("12.")  # the default recipe's CUDA cannot build Kepler
    items = page.items()
    ctx = Ctx(recipe, wizard.state.kb, None, None, None, True)
    marked = {cc for cc, item in items.items() if f"CUDA {cuda} cannot build it" in item.text()}
    assert {"3.5", "3.7"} <= marked
    assert marked == {cc for cc in items if not buildable(ctx, cc)}
    assert "8.9" not in marked and items["3.5"].toolTip() == f"CUDA {cuda} cannot build it"
    assert items["3.5"].foreground().color() != items["8.9"].foreground().color()


def test_the_recipe_line_is_toml(make_window):
    wizard = make_window().wizard
    assert wizard.go_to(PageId.COMPUTE) == PageId.COMPUTE
    page = wizard.compute
    page.apply_preset("official")
    text = page.tokens_label.text()
    assert "'" not in text, text
    value = text.split(" = ", 1)[1]
    assert tomllib.loads(f"x = {value}")["x"] == list(wizard.state.recipe.cuda.compute_capabilities)


def test_a_compute_row_is_a_cubin_too(make_window):
    """compute_90 is SASS sm_90 and PTX (TF's CUDA rules, tf-cuda-rules): no row of a recipe
    list is "PTX only" any more."""
    wizard = make_window().wizard
    assert wizard.go_to(PageId.COMPUTE) == PageId.COMPUTE
    page = wizard.compute
    page.state.set_recipe(page.state.recipe.with_changes(
        {"cuda.compute_capabilities": ["sm_80", "compute_90"]}))
    page.sync()
    items = page.items()
    assert "PTX only" not in items["9.0"].text()
    assert "PTX only" not in items["8.0"].text()
    assert items["9.0"].checkState() == items["8.0"].checkState()  # both ticked
