"""Going Back, or opening a recipe after the pages were visited, keeps the recipe's
choices: QWizard's default cleanupPage reset the Source page's registered fields and their
signals wrote the first release into the recipe (found while taking the screenshots: the
2.18.0 example recipe reached Review as 2.21.0)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWizard

from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

RECIPE = "recipes/tf218-cuda-laptop.toml"


def test_back_from_source_keeps_the_release(make_window):
    from tests.conftest import ROOT

    window = make_window()
    assert window.open_recipe(ROOT / RECIPE)
    wizard = window.wizard
    assert wizard.state.recipe.tensorflow.version == "2.18.0"
    assert wizard.go_to(PageId.BACKEND) == PageId.BACKEND
    wizard.back()
    assert wizard.currentId() == PageId.SOURCE
    wizard.button(QWizard.WizardButton.BackButton).click()
    assert wizard.currentId() == PageId.WELCOME
    assert wizard.state.recipe.tensorflow.version == "2.18.0"
    assert wizard.state.recipe.name == "tf218-cuda"


def test_walking_the_pages_keeps_an_opened_recipe(make_window):
    from tests.conftest import ROOT

    window = make_window()
    wizard = window.wizard
    assert wizard.go_to(PageId.SOURCE) == PageId.SOURCE  # Source visited once
    assert window.open_recipe(ROOT / RECIPE)
    for page in (PageId.SOURCE, PageId.BACKEND, PageId.REVIEW):
        wizard.go_to(page)
        assert wizard.state.recipe.tensorflow.version == "2.18.0", page
    assert wizard.currentId() == PageId.REVIEW
