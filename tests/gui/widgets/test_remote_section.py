"""The Build options page's Remote execution section: fields to [remote], secret headers
kept out of the recipe, and Test connection against the BuildGrid test service."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from tests import world
from tfwizard.core.recipe import load_recipe

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")

WAIT = 10000  # ms


def _section(make_window):
    window = make_window()
    page = window.wizard.options_page
    page.initializePage()
    return window, page.remote


def _type(qtbot, edit, text: str) -> None:
    edit.clear()
    qtbot.keyClicks(edit, text)


def test_fields_write_remote_and_a_typed_secret_never_reaches_the_recipe(
        qtbot, make_window, tmp_path):
    window, section = _section(make_window)
    section.environ = {}
    _type(qtbot, section.endpoint, "remote.example.com:443")
    assert section.tls.isChecked()  # no scheme: TLS, as Bazel reads it
    qtbot.mouseClick(section.tls, Qt.MouseButton.LeftButton)
    assert section.endpoint.text() == "grpc://remote.example.com:443"
    _type(qtbot, section.instance, "main")
    qtbot.mouseClick(section.findChild(type(section.test_button), "remote-add-header"),
                     Qt.MouseButton.LeftButton)
    row = section.headers[0]
    _type(qtbot, row.name, "x-buildbuddy-api-key")
    _type(qtbot, row.value, "s3cr3t-value-42")
    assert row.value.echoMode() == row.value.EchoMode.Password
    remote = window.wizard.state.recipe.remote
    assert remote.executor == "grpc://remote.example.com:443"
    assert remote.instance_name == "main"
    assert remote.headers == ["x-buildbuddy-api-key=${TFWIZARD_X_BUILDBUDDY_API_KEY}"]
    assert section.environ == {"TFWIZARD_X_BUILDBUDDY_API_KEY": "s3cr3t-value-42"}
    _type(qtbot, section.properties, "auto Pool=default")
    assert window.wizard.state.recipe.remote.exec_properties == ["auto", "Pool=default"]
    path = tmp_path / "r.toml"
    assert window.save_to(path)
    text = path.read_text()
    assert "s3cr3t-value-42" not in text and "${TFWIZARD_X_BUILDBUDDY_API_KEY}" in text
    assert load_recipe(path).remote.headers == remote.headers


def test_a_recipe_with_headers_shows_them_with_their_variable(qtbot, make_window):
    window, section = _section(make_window)
    section.environ = {"API_KEY": "from-the-shell"}
    window.wizard.state.update({"remote.executor": "grpcs://r.example:443",
                                "remote.headers": ["x-api-key=${API_KEY}"]})
    section.sync()
    row = section.headers[0]
    assert (row.name.text(), row.variable.text()) == ("x-api-key", "API_KEY")
    assert row.value.text() == "from-the-shell" and row.value.displayText() != "from-the-shell"
    assert section.tls.isChecked()


def test_test_connection_without_an_endpoint_says_so(qtbot, make_window, qloop):
    _window, section = _section(make_window)
    qtbot.mouseClick(section.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "endpoint" in section.status.text(), timeout=WAIT)
    assert section.codes() == []


@pytest.mark.docker
def test_test_connection_passes_on_a_good_instance_and_names_a_wrong_one(
        qtbot, make_window, qloop, reapi):
    window, section = _section(make_window)
    window.wizard.state.update({"build.image": world.IMAGE})
    _type(qtbot, section.endpoint, reapi.endpoint)
    _type(qtbot, section.instance, reapi.instance_name)
    qtbot.mouseClick(section.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: section.check is not None, timeout=WAIT)
    assert section.codes() == ["REMOTE_SERVICE"], section.status.text()
    assert section.check is not None and section.check.probe is not None
    assert "answers" in section.status.text()

    _type(qtbot, section.instance, "no-such-instance")
    section.check = None
    t0 = time.monotonic()
    qtbot.mouseClick(section.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: section.check is not None, timeout=WAIT)
    assert time.monotonic() - t0 < 5
    assert section.codes() == ["REMOTE_CAPABILITIES"]
    assert "no-such-instance" in section.status.text()
    assert "remote.instance_name" in section.rows[0].finding.message
