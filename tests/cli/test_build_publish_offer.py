"""After a build that made a wheel, `tfwizard build` says how to publish it, when a
wheelhouse is named (the recipe's [wheelhouse] url, else TFWIZARD_WHEELHOUSE)."""

from __future__ import annotations

import io
from types import SimpleNamespace

from tests.core.wheelhouse import kit
from tfwizard.cli.build import offer_publish
from tfwizard.cli.context import Environment
from tfwizard.core.recipe import load_recipe


def _offer(recipe, result, env, *, as_json=False):
    out = io.StringIO()
    offer_publish(Environment(stdout=out, env=env), recipe, result, as_json=as_json)
    return out.getvalue()


def test_the_build_names_the_publish_command_only_with_a_wheelhouse_and_a_wheel(tmp_path):
    plain = load_recipe(kit.recipe_file(tmp_path / "plain.toml"))
    named = load_recipe(kit.recipe_file(tmp_path / "named.toml",
                                        extra='[wheelhouse]\nurl = "wheels"\n'))
    built = SimpleNamespace(wheel="/r/t.whl", build_id="20260101-000000-abcdef")
    line = "Publish it to the team's wheelhouse: `tfwizard publish 20260101-000000-abcdef`\n"
    assert _offer(named, built, {}) == line
    assert _offer(plain, built, {"TFWIZARD_WHEELHOUSE": "http://wheels:8080/simple/"}) == line
    assert _offer(plain, built, {}) == ""  # no wheelhouse named
    assert _offer(named, SimpleNamespace(wheel="", build_id="b"), {}) == ""  # no wheel
    assert _offer(named, built, {}, as_json=True) == ""  # --json prints events only
