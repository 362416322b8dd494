"""One overall verdict at the top of Review (issue 19): blocked by errors, ready with
warnings, or ready; and when the official wheel already serves the machine, it says a
build may not be needed. Real host profiles, the real rules and advice."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtWidgets import QLabel

from tfwizard.core.findings import Finding
from tfwizard.core.views.review_verdict import BLOCKED, READY, WARNINGS, review_verdict
from tfwizard.gui.pages import PageId

from ..conftest import host
from .test_welcome_readiness import without_docker

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def review(window):
    wizard = window.wizard
    wizard.setStartId(int(PageId.REVIEW))
    wizard.restart()
    assert wizard.currentId() == PageId.REVIEW
    return wizard.page(int(PageId.REVIEW))


def first_widget(page) -> QLabel:
    """The topmost visible label of the page's form."""
    labels = [w for w in page.content.findChildren(QLabel) if w.isVisibleTo(page)]
    return min(labels, key=lambda w: w.mapTo(page.content, w.rect().topLeft()).y())


def test_errors_block_and_the_verdict_is_on_top(make_window):
    window = make_window()
    window.wizard.state.update({"cuda.compute_capabilities": ["3.5"]})
    page = review(window)
    assert page.verdict.verdict.status == BLOCKED
    errors = len(window.wizard.state.errors_for(None))
    word = "error" if errors == 1 else "errors"
    assert errors >= 1 and f"fix the {errors} {word} listed" in page.verdict.text()
    assert first_widget(page) is page.verdict
    assert page.verdict.property("status") == "blocked"


def test_docker_down_blocks_at_review(make_window):
    page = review(make_window(host=without_docker("ada-8.9-driver550")))
    assert page.verdict.verdict.status == BLOCKED


def test_official_wheel_serving_is_said(make_window):
    window = make_window()
    page = review(window)
    verdict = page.verdict.verdict
    assert verdict.status in (READY, WARNINGS)
    assert verdict.official  # the RTX 4070 on driver 550: tensorflow[and-cuda] serves it
    assert "A build may not be needed" in page.verdict.text()
    assert "tensorflow[and-cuda]" in page.verdict.text()
    # a fix on this page changes the verdict at once
    window.wizard.state.update({"cuda.compute_capabilities": ["3.5"]})
    assert page.verdict.verdict.status == BLOCKED


def test_verdict_words():
    warn = Finding("W", "warning", "a warning")
    note = Finding("N", "info", "a note")
    assert review_verdict([note]).status == READY
    assert review_verdict([note]).text == "Ready to build: no problems found."
    assert review_verdict([warn, note]).status == WARNINGS
    assert "with 1 warning worth" in review_verdict([warn]).text
    assert "with 2 warnings worth" in review_verdict([warn, warn]).text
    error = dataclasses.replace(warn, severity="error")
    assert review_verdict([warn, error]).status == BLOCKED


def test_no_gpu_server_gets_a_verdict_without_advice_crash(make_window):
    page = review(make_window(host=host("no-gpu-server")))
    assert page.verdict.verdict is not None and page.verdict.text()
