"""The Welcome page's readiness checklist (issue 19, item 1): host problems on page 1."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtWidgets import QLabel, QWizard

from tfwizard.core.views.readiness import FAIL, KEYS, PASS, WARN
from tfwizard.gui.pages import PageId

from ..conftest import host

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def without_docker(name: str, status: str = "not_running"):
    """A real host profile whose Docker engine does not answer (as with a DOCKER_HOST that
    names no socket)."""
    profile = host(name)
    profile.docker = dataclasses.replace(
        profile.docker, status=status, server_version=None, api_version=None,
        message="Cannot connect to the Docker daemon at unix:///nowhere/docker.sock")
    return profile


def test_docker_not_running_fails_on_page_one(qtbot, make_window):
    window = make_window(host=without_docker("ada-8.9-driver550"))
    wizard = window.wizard
    assert wizard.currentId() == PageId.WELCOME
    checklist = wizard.welcome.readiness
    assert checklist.isVisibleTo(wizard.welcome)
    assert checklist.status_of("docker") == FAIL
    row = wizard.welcome.findChild(QLabel, "readiness-docker")
    assert row is not None and "does not answer" in row.text()
    assert "unix:///nowhere/docker.sock" in row.text()
    codes = [r.finding.code for r in wizard.welcome.findings.rows]
    assert "DOCKER_UNAVAILABLE" in codes  # the finding shows here, not on Build options
    assert "No problems found" not in wizard.welcome.findings.summary.text()
    wizard.go_to(PageId.OPTIONS)
    assert "DOCKER_UNAVAILABLE" not in [r.finding.code for r in
                                        wizard.options_page.findings.rows]
    # a recipe can still be prepared; the build itself is refused at Review
    assert wizard.go_to(PageId.BUILD) == PageId.REVIEW
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()


def test_every_row_on_a_ready_host(qtbot, make_window):
    window = make_window(host=host("ada-8.9-driver550"))
    checks = {c.key: c for c in window.wizard.welcome.readiness.checks}
    assert tuple(checks) == KEYS
    assert checks["docker"].status == PASS
    assert checks["target"].status == PASS
    # the figures the rows speak of are the profile's
    assert "GiB" in checks["disk"].text and "CPUs" in checks["resources"].text


def test_small_host_warns_and_target_row_follows_import(qtbot, make_window):
    from ..conftest import HOSTS

    window = make_window(host=host("small-laptop"))
    welcome = window.wizard.welcome
    assert welcome.readiness.status_of("resources") in (WARN, FAIL)
    path = str(HOSTS / "h100-driver560.json")
    assert welcome.import_target(path)
    target = next(c for c in welcome.readiness.checks if c.key == "target")
    assert path in target.text and "H100" in target.text
