"""Words and keys from the UX review's pass: Alt+N goes on from Review as from every other
page, the options field says what it is (configure's CC_OPT_FLAGS, not "optimisation"),
and Review in Chinese is 复核, not 检查 (which is `tfwizard check`)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QWizard

from tfwizard.core.i18n import translate
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_alt_n_goes_on_from_review(qtbot, make_window):
    wizard = make_window().wizard
    assert wizard.go_to(PageId.REVIEW) == PageId.REVIEW
    button = wizard.button(QWizard.WizardButton.NextButton)
    assert "&N" in button.text(), button.text()
    assert button.text().replace("&", "") == "Next: the build >"
    assert translate("&Next: the build >", "zh_CN").endswith("(&N) >")


def test_the_options_flags_field_says_what_it_is(make_window):
    wizard = make_window().wizard
    assert wizard.go_to(PageId.OPTIONS) == PageId.OPTIONS
    page = wizard.options_page
    labels = [w.text() for w in page.findChildren(QLabel)]
    assert "Compiler flags (CC_OPT_FLAGS):" in labels
    assert not any("Optimisation flags" in t for t in labels)
    assert "-march=native" in page.opt_edit.toolTip()


def test_review_is_not_check_in_chinese():
    assert translate("Review", "zh_CN") == "复核"
    assert translate("Review", "zh_CN") != translate("check", "zh_CN")


def test_a_recipe_that_stops_before_review_says_why(make_window, tmp_path):
    from tests.conftest import ROOT

    text = (ROOT / "recipes" / "tf218-cuda-laptop.toml").read_text(encoding="utf-8")
    bad = tmp_path / "cc35.toml"
    bad.write_text(text.replace('compute_capabilities = ["8.6"]',
                                'compute_capabilities = ["3.5"]'), encoding="utf-8")
    window = make_window()
    assert window.open_recipe(bad)
    assert window.wizard.currentId() == PageId.COMPUTE
    message = window.statusBar().currentMessage()
    assert "error on this page" in message and window.wizard.compute.title() in message
    good = tmp_path / "good.toml"
    good.write_text(text, encoding="utf-8")
    assert window.open_recipe(good)
    assert window.wizard.currentId() == PageId.REVIEW
    assert window.statusBar().currentMessage() == ""


def test_auto_jobs_say_how_many_at_once_first(make_window):
    wizard = make_window().wizard  # the ada host: 24 CPUs, 31 GiB
    assert wizard.go_to(PageId.OPTIONS) == PageId.OPTIONS
    page = wizard.options_page
    page.jobs_spin.setValue(0)
    assert wizard.state.recipe.build.jobs == 0
    hint = page.jobs_hint.text()
    assert hint.startswith("auto: Bazel runs 12 compile jobs at once ("), hint
    assert "--jobs=12" in hint  # the reasoning stays, in brackets
