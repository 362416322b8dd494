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
