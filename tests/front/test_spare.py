"""The server's spare child (forked ahead of its request) and its host profile refresher
(tfwizard/front/server.py), with real processes: each test has its own run folder."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.front.front_world import Front, alive, wait_for
from tests.front.test_front import RECIPE, _blocked, _reading_stdin


def _children(pid: int) -> list[int]:
    """The live children of process PID."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split() if alive(int(c))]


def _spare(front: Front, server: int, not_: int = -1) -> int:
    """The server's waiting spare (its one child while no command runs), once forked."""
    return wait_for(lambda: [c for c in _children(server) if c != not_][:1]
                    and [c for c in _children(server) if c != not_][0])


def test_a_command_runs_in_the_spare_and_a_new_one_is_forked(front):
    server = front.up()
    spare = _spare(front, server)
    done = front.run("recipe", "validate", str(RECIPE))
    assert done.returncode == 0 and "valid" in done.stdout
    assert f"in child {spare} (spare," in front.log()
    assert not alive(spare)  # used once, never again
    second = _spare(front, server, not_=spare)
    assert second != spare
    assert front.run("recipe", "validate", str(RECIPE)).returncode == 0
    assert f"in child {second} (spare," in front.log()


def test_two_commands_at_once_the_second_is_forked_anew(front):
    server = front.up()
    _spare(front, server)
    n = len(front.child_pids())
    a, b = _blocked(front), _blocked(front)
    try:
        wait_for(lambda: len(front.child_pids()) >= n + 2)
        kinds = sorted(line.split("(")[-1].split(",")[0] for line in front.log().splitlines()
                       if " served " in line)[-2:]
        assert kinds == ["new", "spare"], front.log()
        for proc in (a, b):
            out, _err = proc.communicate(b"", timeout=60)
            assert proc.returncode == 0
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                proc.kill()


def test_a_child_holds_none_of_the_servers_descriptors(front):
    """No listener, spare socket pair, client connection, pidfd, epoll or lock in a served
    child (spare or new): only its client's fds and its own dup of the server's log."""
    server = front.up()
    _spare(front, server)
    n = len(front.child_pids())
    procs = [_blocked(front), _blocked(front)]  # the spare, and a new fork beside it
    try:
        children = wait_for(lambda: len(front.child_pids()) >= n + 2
                            and front.child_pids()[n:n + 2])
        for child in children:
            wait_for(lambda c=child: _reading_stdin(c))
            fd_dir = Path(f"/proc/{child}/fd")
            links = {fd.name: os.readlink(fd) for fd in fd_dir.iterdir()}
            odd = {fd: link for fd, link in links.items()
                   if link.startswith(("socket:", "anon_inode:")) or link.endswith(".lock")}
            assert odd == {}, links
            assert {"0", "1", "2"} <= set(links)
            assert all(link.startswith("pipe:") or link.endswith("server.log")
                       or link.startswith("/dev/") or fd in ("0", "1", "2")
                       for fd, link in links.items()), links
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_the_spare_is_no_job_and_dies_with_the_server(tmp_path):
    idle = Front(tmp_path / "idle")
    idle.run("recipe", "validate", str(RECIPE), env={"TFWIZARD_FRONTEND_IDLE": "1"})
    server = wait_for(idle.server_pid)
    spare = _spare(idle, server)
    wait_for(lambda: not alive(server), timeout=60)  # the spare did not keep it up
    assert "idle for 1 s: exiting" in idle.log()
    wait_for(lambda: not alive(spare), timeout=10)

    stopped = Front(tmp_path / "stopped")
    server = stopped.up()
    spare = _spare(stopped, server)
    stopped.stop()
    wait_for(lambda: not alive(spare), timeout=10)

    killed = Front(tmp_path / "killed")
    server = killed.up()
    spare = _spare(killed, server)
    os.kill(server, signal.SIGKILL)
    wait_for(lambda: not alive(spare), timeout=10)  # its end of the pair closed


@pytest.mark.docker
def test_a_build_has_its_old_host_profile_refreshed_after_it(front, tmp_path):
    """After a `build` (here `build --help`: the server knows the command, not its end),
    a profile older than TTL_S / 2 is detected again off the command's path, and one
    younger is left alone."""
    from tfwizard.core.build import hostcache

    data = tmp_path / "data"
    env = {"TFWIZARD_DATA_DIR": str(data)}
    front.up()
    assert front.run("build", "--help", env=env).returncode == 0
    kept = data / hostcache.FILE
    wait_for(lambda: kept.exists() and "host profile refreshed" in front.log())
    first = json.loads(kept.read_text())
    assert first["key"] == hostcache.host_key({**front.env, **env},
                                              hostcache.BOOT_ID.read_text().strip())
    assert front.run("build", "--help", env=env).returncode == 0
    time.sleep(1.0)  # the refresher looked, and found it young
    assert front.log().count("host profile refreshed") == 1
    first["at"] -= hostcache.TTL_S / 2 + 1
    kept.write_text(json.dumps(first))
    assert front.run("build", "--help", env=env).returncode == 0
    wait_for(lambda: front.log().count("host profile refreshed") == 2)
    assert json.loads(kept.read_text())["at"] > first["at"] + hostcache.TTL_S / 2


def test_an_upgraded_dependency_makes_the_server_stale(front):
    """`pip install -U docker` changes the site-packages folder (its dist-info folders):
    the server answers stale and a new one, with the new dependency, serves."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    front.stale_after_touching(site, RECIPE)


def test_the_servers_objects_are_frozen_out_of_a_childs_collections(front):
    """A child's first full collection would scan (and unshare) every object the server
    preloaded: the server froze them (gc.freeze), and its children report it."""
    import re

    front.up()
    assert front.run("recipe", "validate", str(RECIPE)).returncode == 0
    frozen, full = map(int, re.findall(r"gc (\d+) frozen (\d+) full", front.log())[-1])
    assert frozen > 10_000 and full == 0, front.log()


def test_a_child_becomes_the_caller_before_its_go_and_shows_nothing_without_it(front,
                                                                               tmp_path):
    """The setup (fds, folder, environment) overlaps the client's "started"/"go" round
    trip; a child whose go never comes runs nothing and writes nothing to its fds."""
    import socket as socketlib

    from tests.front.front_world import TFWIZARD
    from tfwizard.front import wire

    front.up()
    (tmp_path / "sub").mkdir()
    request = {"argv": ["recipe", "new", "r.toml"], "argv0": TFWIZARD,
               "cwd": str(tmp_path / "sub"), "env": front.env, "umask": 0o022}
    read_end, write_end = os.pipe()
    try:
        with socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(front.socket))
            wire.send_message(sock, request, [0, write_end, write_end])
            answer, _fds = wire.recv_message(sock)
            child = int(answer["started"])
            wait_for(lambda: os.readlink(f"/proc/{child}/cwd") == str(tmp_path / "sub"))
            assert os.readlink(f"/proc/{child}/fd/1") == os.readlink(f"/proc/self/fd/{write_end}")
            assert not (tmp_path / "sub" / "r.toml").exists()
        wait_for(lambda: not alive(child), timeout=10)
        os.close(write_end)
        write_end = -1
        assert os.read(read_end, 4096) == b""  # nothing shown
        assert not (tmp_path / "sub" / "r.toml").exists()
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
