"""The wizard as the app starts it (no jobs injected): the Build, Install and Verify pages
hold the core's real jobs, so the real build, install and verification can start."""

from __future__ import annotations

import pytest

from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def test_the_default_jobs_are_available(make_window):
    wizard = make_window().wizard  # Jobs() as run_gui makes it: the real core modules
    from tfwizard.gui import jobs

    assert wizard.build.factory is jobs.default_build_job
    assert wizard.install.factory is jobs.default_install
    assert wizard.verify.factory is jobs.default_verify
    assert wizard.go_to(PageId.BUILD) == PageId.BUILD
    assert wizard.build.start_button.isEnabled()
