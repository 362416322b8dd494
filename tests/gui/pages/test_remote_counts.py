"""The Build page shows where a remote build's actions ran (issue 21, item 4 on the page).

The summaries come from the core's own parser over Bazel's "processes:" lines: the first
line is what Bazel 4.2.3 printed for the fixture's wheel on the BuildGrid test service
(tests/docker/test_remote_preflight.py); the second is the shape of the fresh container's
build served from the remote action cache (tests/docker/test_reapi_service.py checks the
counts match)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tfwizard.core.building.run.events import Artifact, BuildResult, Finished
from tfwizard.core.building.run.progress import ProgressParser, cache_summary
from tfwizard.gui.jobs import Jobs
from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

REMOTE_RUN = "INFO: 29 processes: 6 internal, 23 remote."
REMOTE_HITS = "INFO: 29 processes: 6 internal, 23 remote cache hit."


def _cache(line: str) -> dict:
    parser = ProgressParser()
    parser.feed(line)
    summary = cache_summary(parser.stats, disk_cache=False, remote_cache=True)
    assert summary is not None
    return summary.to_dict()


def _job(line: str):
    class RemoteBuild:
        result = None

        def __init__(self, state):
            self.state = state

        def cancel(self):
            pass

        async def events(self):
            yield Artifact("record", "/tmp/fake-record")
            self.result = BuildResult("b1", "succeeded", "/tmp/fake-record", wheel="/tmp/w.whl",
                                      message="wheel: ok", cache=_cache(line))
            yield Finished(self.result)

    return RemoteBuild


@pytest.mark.parametrize(("line", "words"), [
    (REMOTE_RUN, ("0 ran here", "0 from the remote cache", "23 ran remotely", "6 internal")),
    (REMOTE_HITS, ("0 ran here", "23 from the remote cache", "0 ran remotely")),
])
def test_build_page_shows_local_remote_and_remote_cache_counts(qtbot, make_window, line, words):
    window = make_window(jobs=Jobs(build=_job(line)))
    window.wizard.go_to(PageId.BUILD)
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None, timeout=5000)
    text = page.cache_label.text()
    assert text.startswith("Actions: 29 in all"), text
    for word in words:
        assert word in text, text
