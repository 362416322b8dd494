"""Review runs the preflight through the core's session, as `tfwizard build` does: a
recipe the build refuses (here a proxy nothing listens on, found in milliseconds without
Docker) is never "Ready to build" on Review, whose verdict and rows name the refusal; the
command line refuses the same saved recipe with the same finding."""

from __future__ import annotations

import socket

import pytest

from tfwizard.cli import capture
from tfwizard.core.recipe import save_recipe
from tfwizard.core.views.review_verdict import BLOCKED, CHECKING

from ..conftest import HOSTS
from .test_review_verdict import review

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_review_shows_the_preflight_refusal_the_cli_gives(qtbot, make_window, tmp_path):
    proxy = f"http://127.0.0.1:{closed_port()}"
    window = make_window()
    state = window.wizard.state
    state.update({"network.http_proxy": proxy})
    assert not state.errors_for(None)  # the rules pass: only the preflight can refuse it
    page = review(window)
    assert page.verdict.verdict.status in (CHECKING, BLOCKED)  # never "ready" before it

    qtbot.waitUntil(lambda: page.prepared is not None, timeout=20000)
    assert page.verdict.verdict.status == BLOCKED, page.verdict.text()
    assert "Ready to build" not in page.verdict.text()
    codes = [row.finding.code for row in page.preflight.rows]
    assert "PROXY_UNREACHABLE" in codes, codes
    assert page.prepared.refused_by == "preflight"
    # the recipe's own findings panel speaks of the recipe: not "No problems found" or "the
    # build can go ahead" beside that refusal
    summary = page.findings.summary.text()
    assert "in the recipe" in summary, summary
    assert "go ahead" not in summary and "No problems found" not in summary

    # the command line refuses the same recipe, with the same finding
    path = tmp_path / "proxied.toml"
    save_recipe(state.recipe, path)
    status, out, err = capture(["build", str(path), "--host",
                                str(HOSTS / "ada-8.9-driver550.json")])
    assert status == 1, out + err
    assert "PROXY_UNREACHABLE" in err and "preflight found 1 error" in err


def test_a_later_answer_replaces_an_older_one(qtbot, make_window):
    window = make_window()
    page = review(window)
    first = page.generation
    window.wizard.state.update({"network.http_proxy": f"http://127.0.0.1:{closed_port()}"})
    assert page.generation > first  # the changed recipe started its own preflight
    page._preflight_answered(first, "an old answer")  # late: dropped
    assert page.prepared != "an old answer"


def test_the_recipe_panel_speaks_of_the_recipe_from_the_start(make_window):
    """Before any change reaches it, Review's own findings panel already says its
    findings are the recipe's (the screenshots showed "No problems found" beside the
    preflight's refusal)."""
    page = review(make_window())
    summary = page.findings.summary.text()
    assert "in the recipe" in summary and "No problems found" not in summary, summary
