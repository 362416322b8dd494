"""tomlcache.py: a TOML file is parsed once per content; an edit is read again."""

from __future__ import annotations

import pytest
import tomllib

from tfwizard.core import tomlcache
from tfwizard.core.knowledge import load_knowledge_from
from tfwizard.core.resources import resource_path


def test_the_same_bytes_come_from_the_cache_and_an_edit_is_parsed_again(tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv(tomlcache.CACHE_ENV, str(tmp_path / "cache"))
    f = tmp_path / "k.toml"
    f.write_text('a = 1\n[t]\nb = ["x", 2.5, true]\n', "utf-8")
    first = tomlcache.load_toml(f)
    assert first == tomllib.loads(f.read_text("utf-8"))
    entries = list((tmp_path / "cache").glob("k-*.marshal"))
    assert len(entries) == 1
    # the entry is what is read while the bytes are the same: one changed on purpose
    # shows that the file was not parsed again
    import marshal

    entries[0].write_bytes(marshal.dumps({"a": 99}))
    assert tomlcache.load_toml(f) == {"a": 99}
    f.write_text("a = 2\n", "utf-8")  # an edit: parsed, a new entry, the old one gone
    assert tomlcache.load_toml(f) == {"a": 2}
    assert [p for p in (tmp_path / "cache").glob("k-*.marshal")] != entries
    assert len(list((tmp_path / "cache").glob("k-*.marshal"))) == 1


def test_dates_are_not_cached_and_errors_are_tomllibs(tmp_path, monkeypatch):
    monkeypatch.setenv(tomlcache.CACHE_ENV, str(tmp_path / "cache"))
    f = tmp_path / "d.toml"
    f.write_text("when = 2025-01-02\n", "utf-8")
    assert str(tomlcache.load_toml(f)["when"]) == "2025-01-02"
    assert not list((tmp_path / "cache").glob("d-*"))
    bad = tmp_path / "bad.toml"
    bad.write_text("a = \n", "utf-8")
    with pytest.raises(tomllib.TOMLDecodeError):
        tomlcache.load_toml(bad)
    with pytest.raises(OSError):
        tomlcache.load_toml(tmp_path / "missing.toml")


def test_the_shipped_knowledge_is_the_same_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(tomlcache.CACHE_ENV, str(tmp_path / "cache"))
    parsed = load_knowledge_from(resource_path("knowledge"))
    assert list((tmp_path / "cache").glob("releases-*.marshal"))
    cached = load_knowledge_from(resource_path("knowledge"))
    assert cached.raw == parsed.raw
    assert cached.releases == parsed.releases
