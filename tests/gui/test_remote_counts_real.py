"""The Build page's local/remote/cache counts from a real remote build (issue 21).

No event source of ours: the Build page runs the core's BuildRunner on the fixture with
`remote.executor` set to the BuildGrid test service (tests/reapi), and the counts it shows
come from Bazel's own `INFO: N processes: ...` line, which the test also finds in the
page's log. New action keys (a random --copt) make the first build run remotely; a second
build of the same keys in a fresh container takes them from the remote cache.
"""

from __future__ import annotations

import re
import uuid

import pytest
from PySide6.QtCore import Qt

from tests import world
from tfwizard.core.recipe import load_recipe
from tfwizard.gui.jobs import Jobs, default_build_job
from tfwizard.gui.main_window import CLOSE_CANCEL
from tfwizard.gui.pages import PageId

from .conftest import host

pytestmark = [pytest.mark.docker, pytest.mark.slow,
              pytest.mark.qt_log_ignore("This plugin does not support")]

BUILD_TIMEOUT_MS = 600_000
_PROCESSES = re.compile(r"^INFO: (\d+) processes?: (.*)\.$", re.M)


def _bazel_counts(log: str) -> tuple[int, dict[str, int]]:
    """Bazel's last `processes:` line in the page's log: (total, {kind: n})."""
    found = _PROCESSES.findall(log)
    assert found, log[-3000:]
    total, parts = found[-1]
    kinds = {}
    for part in parts.split(", "):
        n, _, kind = part.partition(" ")
        kinds[kind] = int(n)
    return int(total), kinds


def _build_on_the_page(qtbot, make_window, recipe_path):
    window = make_window(recipe=load_recipe(recipe_path), host=host("no-gpu-server"),
                         jobs=Jobs(build=default_build_job), ask_close=lambda: CLOSE_CANCEL)
    assert window.wizard.go_to(PageId.BUILD) == PageId.BUILD
    page = window.wizard.build
    qtbot.mouseClick(page.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.result is not None and not page.running,
                    timeout=BUILD_TIMEOUT_MS)
    log = page.log.text.toPlainText()
    assert page.result.status == "succeeded", page.result.message + "\n" + log[-4000:]
    return page, log


def test_build_page_counts_come_from_a_real_remote_build(qtbot, make_window, reapi, tmp_path,
                                                        monkeypatch):
    world.ensure_images()
    monkeypatch.setenv("TFWIZARD_DATA_DIR", str(tmp_path / "data"))
    token = uuid.uuid4().hex[:8]
    prefix = f"tfwizard-test-rxg-{token}"
    extra = (f'[remote]\nexecutor = "{reapi.endpoint}"\n'
             f'instance_name = "{reapi.instance_name}"\n')
    recipes = [world.fixture_recipe(
        tmp_path / f"r{n}.toml", workspace=world.copy_workspace(tmp_path / f"ws{n}"),
        prefix=prefix, network="host", bazel_flags=[f"--copt=-DTFW_REAPI_RUN={token}"],
        extra=extra) for n in (1, 2)]
    try:
        mark = reapi.mark()
        page, log = _build_on_the_page(qtbot, make_window, recipes[0])
        total, kinds = _bazel_counts(log)
        ran = [a for a in reapi.actions(mark) if f"-DTFW_REAPI_RUN={token}" in a.get("argv", [])]
        assert kinds.get("remote", 0) >= len(ran) >= 20, (kinds, len(ran))
        text = page.cache_label.text()
        assert text.startswith(f"Actions: {total} in all; 0 ran here"), text
        assert f"{kinds['remote']} ran remotely" in text, text
        print(f"first build: {text}")

        # the same actions in a fresh container: every one from the remote action cache
        mark = reapi.mark()
        page, log = _build_on_the_page(qtbot, make_window, recipes[1])
        total2, kinds2 = _bazel_counts(log)
        # what the first build ran remotely, and what it found cached already (an action
        # of an earlier build on the shared service, without this run's copt)
        first = kinds["remote"] + kinds.get("remote cache hit", 0)
        assert kinds2.get("remote cache hit") == first, (kinds, kinds2)
        assert "remote" not in kinds2
        text = page.cache_label.text()
        assert f"{first} from the remote cache, 0 ran remotely" in text, text
        assert not [a for a in reapi.actions(mark)
                    if f"-DTFW_REAPI_RUN={token}" in a.get("argv", [])]
        print(f"second build: {text}")
    finally:
        world.remove_prefixed(prefix)
