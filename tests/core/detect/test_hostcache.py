"""The build's host profile kept a short while (core/detect/cache.py, issue 17)."""

from __future__ import annotations

import os

from tfwizard.core.detect import cache as hostcache
from tfwizard.core.detect import detect_host


def _counting(env, docker_ok=True):
    calls = []

    def detect():
        calls.append(1)
        found = detect_host(env=env)  # this machine, for real
        if docker_ok:
            found.docker.status = "ok"  # as when the engine answers (tests run without one)
        return found

    return detect, calls


def _env(tmp_path, **more):
    return {**os.environ, "TFWIZARD_DATA_DIR": str(tmp_path / "data"), **more}


def test_a_profile_is_used_again_within_the_ttl_only(tmp_path):
    env = _env(tmp_path)
    detect, calls = _counting(env)
    first = hostcache.cached_host(env, detect, now=1000.0)
    again = hostcache.cached_host(env, detect, now=1000.0 + hostcache.TTL_S - 1)
    assert len(calls) == 1 and again.to_dict() == first.to_dict()
    hostcache.cached_host(env, detect, now=1000.0 + hostcache.TTL_S + 1)
    assert len(calls) == 2
    hostcache.cached_host(env, detect, now=999.0)  # a clock set back: detect
    assert len(calls) == 3


def test_another_environment_or_boot_detects_again(tmp_path):
    env = _env(tmp_path)
    detect, calls = _counting(env)
    hostcache.cached_host(env, detect, now=1000.0)
    hostcache.cached_host({**env, "CUDA_VISIBLE_DEVICES": "1"}, detect, now=1001.0)
    assert len(calls) == 2
    boot = tmp_path / "boot_id"
    boot.write_text("another-boot\n")
    hostcache.cached_host(env, detect, now=1002.0, boot_id_path=boot)
    assert len(calls) == 3
    hostcache.cached_host(env, detect, now=1003.0, boot_id_path=tmp_path / "none")
    hostcache.cached_host(env, detect, now=1004.0, boot_id_path=tmp_path / "none")
    assert len(calls) == 5  # no boot id: nothing cached


def test_a_docker_that_did_not_answer_is_not_kept(tmp_path):
    env = _env(tmp_path, DOCKER_HOST=f"unix://{tmp_path}/no-docker.sock")
    detect, calls = _counting(env, docker_ok=False)
    assert hostcache.cached_host(env, detect, now=1000.0).docker.status != "ok"
    hostcache.cached_host(env, detect, now=1001.0)
    assert len(calls) == 2


def test_a_damaged_cache_file_is_detected_over(tmp_path):
    env = _env(tmp_path)
    detect, calls = _counting(env)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / hostcache.FILE).write_text('{"key": 1, "at": "x"}')
    assert hostcache.cached_host(env, detect, now=1000.0).docker.status == "ok"
    assert len(calls) == 1


def _detect_reads():
    """The variable names core/detect reads by name (env.get("X"), env["X"])."""
    import re
    from pathlib import Path

    import tfwizard.core.detect as detect_pkg

    names = set()
    for source in Path(detect_pkg.__file__).parent.glob("*.py"):
        names |= set(re.findall(r"""env(?:iron)?(?:\.get\(|\[)["']([A-Z_][A-Z0-9_]*)["']""",
                                source.read_text("utf-8")))
    return names


def test_each_variable_detection_reads_changes_the_key():
    reads = _detect_reads()
    assert {"DOCKER_HOST", "PATH", "HSA_OVERRIDE_GFX_VERSION", "WSL_DISTRO_NAME"} <= reads
    base = {"PATH": "/usr/bin", "HOME": "/home/a"}
    for name in sorted(reads | {"CUDA_VISIBLE_DEVICES", "DOCKER_TLS_VERIFY", "LC_ALL",
                                "TFWIZARD_DATA_DIR", "LD_LIBRARY_PATH", "https_proxy"}):
        changed = {**base, name: base.get(name, "") + "-other"}
        assert hostcache.host_key(changed, "boot") != hostcache.host_key(base, "boot"), name


def test_unrelated_variables_keep_the_key(tmp_path):
    base = {"PATH": "/usr/bin", "HOME": "/home/a", "DOCKER_HOST": "unix:///d.sock"}
    for name in ("OLDPWD", "SHLVL", "_", "TERM", "PWD"):
        assert (hostcache.host_key({**base, name: "x"}, "boot")
                == hostcache.host_key(base, "boot")), name
    env = _env(tmp_path)
    detect, calls = _counting(env)
    hostcache.cached_host(env, detect, now=1000.0)
    hostcache.cached_host({**env, "OLDPWD": "/elsewhere", "SHLVL": "3"}, detect, now=1001.0)
    assert len(calls) == 1

