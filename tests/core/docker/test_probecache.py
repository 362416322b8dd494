"""The probe cache (core/docker/probecache.py): one look inside per image ID, user and needs."""

from __future__ import annotations

from tfwizard.core.docker.probecache import cache_path, cached_probe, probe_key


def test_a_probe_runs_once_per_image_id_user_and_needs(tmp_path):
    env = {"TFWIZARD_DATA_DIR": str(tmp_path)}
    runs: list[str] = []

    def probe(found: list[str | None]):
        def run() -> list[str | None]:
            runs.append("ran")
            return found
        return run

    args = ["c:gcc", "p:/usr/include/x.h"]
    first = cached_probe("sha256:aa", "1000:1000", args, "script", probe(["/usr/bin/gcc", None]),
                         env=env)
    again = cached_probe("sha256:aa", "1000:1000", args, "script", probe(["other", "other"]),
                         env=env)
    assert first == again == ["/usr/bin/gcc", None] and len(runs) == 1
    # another image, user, need or script: probed again
    cached_probe("sha256:bb", "1000:1000", args, "script", probe(["a", "b"]), env=env)
    cached_probe("sha256:aa", "0:0", args, "script", probe(["a", "b"]), env=env)
    cached_probe("sha256:aa", "1000:1000", args[:1], "script", probe(["a"]), env=env)
    cached_probe("sha256:aa", "1000:1000", args, "script 2", probe(["a", "b"]), env=env)
    assert len(runs) == 5
    # no image ID: never cached
    cached_probe(None, "1000:1000", args, "script", probe(["a", "b"]), env=env)
    cached_probe(None, "1000:1000", args, "script", probe(["a", "b"]), env=env)
    assert len(runs) == 7
    # a damaged entry is probed again and rewritten
    path = cache_path(probe_key("sha256:aa", "1000:1000", args, "script"), env)
    path.write_text("[1, 2", encoding="utf-8")
    assert cached_probe("sha256:aa", "1000:1000", args, "script", probe(["x", None]),
                        env=env) == ["x", None]
    assert len(runs) == 8


def test_a_probe_that_raises_is_not_kept(tmp_path):
    import pytest

    env = {"TFWIZARD_DATA_DIR": str(tmp_path)}

    def boom() -> list[str | None]:
        raise RuntimeError("no /bin/sh")

    with pytest.raises(RuntimeError):
        cached_probe("sha256:aa", None, ["c:sh"], "s", boom, env=env)
    assert not list(tmp_path.rglob("*.json"))
