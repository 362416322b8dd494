"""Where `publish` sends a wheel and with which credentials: found as twine finds them
(TWINE_USERNAME/TWINE_PASSWORD, the URL, ~/.pypirc, keyring with a real backend), and the
password never in a text that is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.wheelhouse import WheelhouseError, wheelhouse_url
from tfwizard.core.wheelhouse.credentials import find_credentials, publish_target

SECRET = "Pw-credentials-test-4417"


def _pypirc(home: Path, text: str) -> dict[str, str]:
    (home / ".pypirc").write_text(text)
    return {"HOME": str(home)}


@pytest.mark.parametrize("to,upload,index", [
    ("http://wheels.lab:8080/simple/", "http://wheels.lab:8080/", "http://wheels.lab:8080/simple/"),
    ("https://devpi.lab/team/prod/+simple", "https://devpi.lab/team/prod/",
     "https://devpi.lab/team/prod/+simple/"),
    ("https://upload.pypi.org/legacy/", "https://upload.pypi.org/legacy/", ""),
])
def test_the_upload_url_of_an_index(to, upload, index, tmp_path):
    target = publish_target(to, {"HOME": str(tmp_path)})
    assert (target.kind, target.upload_url, target.index_url) == ("http", upload, index)


def test_folders_sections_and_credentials_in_the_url(tmp_path):
    env = _pypirc(tmp_path, "[distutils]\nindex-servers = team\n[team]\n"
                            "repository = http://wheels.lab:8080/\nusername = ci\n")
    assert publish_target(str(tmp_path), env).folder == tmp_path
    assert publish_target(tmp_path.as_uri(), env).folder == tmp_path
    team = publish_target("team", env)
    assert (team.upload_url, team.section) == ("http://wheels.lab:8080/", "team")
    inline = publish_target(f"http://ci:{SECRET}@wheels.lab:8080/simple/", env)
    assert inline.upload_url == "http://wheels.lab:8080/"
    assert SECRET not in inline.display + inline.wheelhouse + repr(inline)
    creds = find_credentials(inline, env)
    assert creds is not None and (creds.username, creds.password) == ("ci", SECRET)
    assert SECRET not in str(creds) + repr(creds)
    with pytest.raises(WheelhouseError, match="no wheelhouse to publish to"):
        publish_target("", env)


def test_twine_variables_come_first_then_the_pypirc_section_of_that_url(tmp_path):
    env = _pypirc(tmp_path, "[distutils]\nindex-servers = team\n[team]\n"
                            "repository = http://wheels.lab:8080\nusername = ci\n"
                            f"password = rc-{SECRET}\n")
    target = publish_target("http://wheels.lab:8080/simple/", env)
    from_rc = find_credentials(target, env)
    assert from_rc is not None and (from_rc.username, from_rc.password) == ("ci", f"rc-{SECRET}")
    assert ".pypirc [team]" in from_rc.source
    from_env = find_credentials(target, {**env, "TWINE_PASSWORD": SECRET})
    assert from_env is not None and (from_env.username, from_env.password) == ("ci", SECRET)
    token = find_credentials(publish_target("http://other:1/", env), {**env,
                                                                      "TWINE_PASSWORD": SECRET})
    assert token is not None and token.username == "__token__"


@pytest.fixture
def plain_keyring(tmp_path):
    """keyring with a real backend: keyrings.alt's plain-text file in a temporary folder."""
    keyring = pytest.importorskip("keyring")
    from keyrings.alt.file import PlaintextKeyring

    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring_pass.cfg")
    before = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield keyring
    keyring.set_keyring(before)


def test_keyring_gives_the_password_for_the_upload_url(plain_keyring, tmp_path):
    env = {"HOME": str(tmp_path)}
    target = publish_target("http://wheels.lab:8080/simple/", env)
    assert find_credentials(target, env) is None
    plain_keyring.set_password("http://wheels.lab:8080/", "ci", SECRET)
    creds = find_credentials(target, {**env, "TWINE_USERNAME": "ci"})
    assert creds is not None and (creds.password, creds.source) == (SECRET, "keyring")


def test_where_the_wheelhouse_is_named(tmp_path):
    from tfwizard.core.recipe import parse_recipe

    recipe = parse_recipe('schema = 1\nname = "r"\n[tensorflow]\nversion = "2.21.0"\n'
                          '[wheelhouse]\nurl = "wheels"\n')
    recipe.path = tmp_path / "r.toml"
    env = {"TFWIZARD_WHEELHOUSE": "http://env:1/simple/"}
    assert wheelhouse_url("http://opt/simple/", recipe, env) == "http://opt/simple/"
    assert wheelhouse_url(None, recipe, env) == str(tmp_path / "wheels")
    assert wheelhouse_url(None, None, env) == "http://env:1/simple/"
    assert wheelhouse_url(None, None, {}) == ""


def test_a_recipe_keeps_no_password_in_its_wheelhouse(tmp_path):
    from tfwizard.core.errors import RecipeError
    from tfwizard.core.recipe import parse_recipe

    with pytest.raises(RecipeError, match="a password in the recipe"):
        parse_recipe('schema = 1\nname = "r"\n[tensorflow]\nversion = "2.21.0"\n'
                     f'[wheelhouse]\nurl = "http://ci:{SECRET}@wheels.lab/simple/"\n')
    with pytest.raises(RecipeError, match="not an http"):
        parse_recipe('schema = 1\nname = "r"\n[tensorflow]\nversion = "2.21.0"\n'
                     '[wheelhouse]\nurl = "ssh://wheels.lab/simple/"\nlabel = "ok1"\n')
