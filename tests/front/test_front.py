"""The front end (tfwizard/front/) with real processes: the `tfwizard` console script, a
real server forked per command, real signals. Each test has its own run folder."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

from tests.front.front_world import LOG, ROOT, TFWIZARD, Front, alive, wait_for

RECIPE = ROOT / "recipes" / "tf218-cuda-laptop.toml"


def _here(*argv: str, **kw) -> subprocess.CompletedProcess[str]:
    """The same command in its own process (TFWIZARD_FRONTEND=0)."""
    env = {**os.environ, "TFWIZARD_FRONTEND": "0", **kw.pop("env", {})}
    return subprocess.run([TFWIZARD, *argv], env=env, text=True, capture_output=True,
                          timeout=120, check=False, **kw)


def test_exit_status_and_output_are_the_commands(front, tmp_path):
    front.up()
    before = front.served()
    for argv in (["recipe", "validate", str(RECIPE)], ["recipe", "validate", "missing.toml"],
                 ["plan", str(RECIPE), "--json"]):
        got, want = front.run(*argv, cwd=tmp_path), _here(*argv, cwd=tmp_path)
        assert (got.returncode, got.stdout, got.stderr) == (
            want.returncode, want.stdout, want.stderr), argv
    assert front.served() == before + 3
    assert {front.run("recipe", "validate", "missing.toml").returncode,
            front.run("recipe", "validate", str(RECIPE)).returncode} == {2, 0}


def test_stdout_to_a_file_and_stderr_to_a_pipe(front, tmp_path):
    front.up()
    out = tmp_path / "out.txt"
    with out.open("w") as f:
        done = front.run("recipe", "validate", str(RECIPE), stdout=f, stderr=subprocess.PIPE,
                         capture_output=False)
    assert done.returncode == 0 and "valid" in out.read_text()
    with out.open("w") as f:
        done = front.run("recipe", "validate", "nope.toml", stdout=f, stderr=subprocess.PIPE,
                         capture_output=False)
    assert done.returncode == 2 and "no such recipe file" in done.stderr
    assert out.read_text() == ""


def test_cwd_umask_and_language_are_the_callers(front, tmp_path):
    front.up()
    (tmp_path / "sub").mkdir()
    done = front.run("recipe", "new", "r.toml", cwd=tmp_path / "sub", umask=0o077)
    made = tmp_path / "sub" / "r.toml"
    assert done.returncode == 0, done.stderr
    assert made.is_file() and stat.S_IMODE(made.stat().st_mode) == 0o600
    env = {k: v for k, v in front.env.items() if k not in ("TFWIZARD_LANG", "LC_ALL",
                                                           "LC_MESSAGES")}
    zh = subprocess.run([TFWIZARD, "recipe", "validate", "nope.toml"], text=True,
                        capture_output=True, env={**env, "LANG": "zh_CN.UTF-8"}, check=False)
    assert "没有这个配方文件" in zh.stderr, zh.stderr
    en = front.run("recipe", "validate", "nope.toml")  # the server's language did not stick
    assert "no such recipe file" in en.stderr
    assert front.served() == 3  # the first command (up) ran in its own process


def test_stdin_is_the_callers(front):
    front.up()
    data = LOG.read_bytes()
    got = subprocess.run([TFWIZARD, "diagnose", "-"], input=data, capture_output=True,
                         env=front.env, timeout=60, check=False)
    want = subprocess.run([TFWIZARD, "diagnose", "-"], input=data, capture_output=True,
                          env={**front.env, "TFWIZARD_FRONTEND": "0"}, timeout=60, check=False)
    assert got.stdout and (got.returncode, got.stdout) == (want.returncode, want.stdout)
    assert "diagnose" in front.log()


def _blocked(front: Front | None) -> subprocess.Popen[bytes]:
    """`tfwizard diagnose -` waiting on an open stdin."""
    env = front.env if front else {**os.environ, "TFWIZARD_FRONTEND": "0"}
    return subprocess.Popen([TFWIZARD, "diagnose", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _reading_stdin(pid: int) -> bool:
    """Whether the process waits in read(0, ...): the command is in its main by then."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().startswith("0 0x0 ")
    except OSError:
        return False


def test_sigint_is_forwarded_and_ends_as_in_process(front):
    front.up()
    results = []
    for f in (front, None):
        n = len(front.child_pids())
        proc = _blocked(f)
        # the process that runs the command: the server's child, or the process itself
        runs = wait_for(lambda n=n: front.child_pids()[n:] and front.child_pids()[n]) if f \
            else proc.pid
        wait_for(lambda runs=runs: _reading_stdin(runs), timeout=60)
        proc.send_signal(signal.SIGINT)
        # stdin stays open until the command ended: the relayed signal takes a few ms more
        # than a direct one, and an EOF first would end `diagnose -` before it arrives
        proc.wait(timeout=30)
        out, err = proc.communicate(timeout=30)
        results.append((proc.returncode, err.decode().splitlines()[-1:], out[-300:]))
    assert [r[:2] for r in results] == [(130, ["tfwizard: interrupted"])] * 2, \
        (results, front.log()[-3000:])


def test_sigkill_of_the_client_kills_its_child(front):
    front.up()
    n = len(front.child_pids())
    proc = _blocked(front)
    child = wait_for(lambda: front.child_pids()[n:] and front.child_pids()[n])
    assert alive(child)
    proc.kill()
    proc.wait()
    wait_for(lambda: not alive(child), timeout=10)
    assert "vanished: SIGKILL" in front.log()
    assert front.run("recipe", "validate", str(RECIPE)).returncode == 0  # still serving


def test_two_clients_at_once(front):
    front.up()
    n = len(front.child_pids())
    a, b = _blocked(front), _blocked(front)
    wait_for(lambda: len(front.child_pids()) >= n + 2)
    data = LOG.read_bytes()
    outs: dict[str, bytes] = {}
    threads = [threading.Thread(target=lambda p=p, k=k: outs.__setitem__(
        k, p.communicate(data, timeout=60)[0])) for k, p in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert a.returncode == b.returncode == 0
    assert outs["a"] == outs["b"] and b"compile-error" in outs["a"]


def test_stale_code_replaces_the_server_and_the_command_is_right(front):
    front.stale_after_touching(ROOT / "tfwizard" / "front" / "__init__.py", RECIPE)


def test_idle_server_exits(tmp_path):
    f = Front(tmp_path / "run")
    f.run("recipe", "validate", str(RECIPE), env={"TFWIZARD_FRONTEND_IDLE": "1"})
    pid = wait_for(f.server_pid)
    wait_for(lambda: not alive(pid), timeout=60)
    assert "idle for 1 s: exiting" in f.log()
    assert not f.socket.exists()


def test_frontend_0_runs_in_process_and_starts_nothing(tmp_path):
    f = Front(tmp_path / "run")
    done = f.run("recipe", "validate", str(RECIPE), env={"TFWIZARD_FRONTEND": "0"})
    assert done.returncode == 0
    assert not f.folder.exists()


def test_run_folder_is_private_and_a_shared_one_is_refused(front, tmp_path):
    front.up()
    assert stat.S_IMODE(front.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(front.socket.stat().st_mode) == 0o600
    open_dir = Front(tmp_path / "open")
    open_dir.folder.mkdir(mode=0o755)
    open_dir.folder.chmod(0o755)
    done = open_dir.run("recipe", "validate", str(RECIPE))
    assert done.returncode == 0 and "valid" in done.stdout  # run in process, not refused
    assert list(open_dir.folder.iterdir()) == []


def test_a_stop_request_ends_the_server(front):
    """What `tfwizard clean` sends (it is not run here: it would clean the shared engine)."""
    pid = front.up()
    from tfwizard.front.client import stop_server

    assert stop_server(front.env)
    wait_for(lambda: not alive(pid), timeout=10)
    assert "stop requested" in front.log() and not front.socket.exists()


def test_another_python_setting_gets_another_server(front):
    front.up()
    done = front.run("recipe", "validate", str(RECIPE), env={"PYTHONHASHSEED": "7"})
    assert done.returncode == 0
    socks = wait_for(lambda: len(list(front.folder.glob("*.sock"))) == 2 and
                     list(front.folder.glob("*.sock")))
    assert front.socket in socks  # the first server still serves the first setting
    from tfwizard.front.client import stop_server

    stop_server({**front.env, "PYTHONHASHSEED": "7"})


def test_a_command_runs_only_after_its_clients_go(front, tmp_path):
    """A client that gave up after "started" (it then runs the command itself) or vanished
    before its "go" never has the command run by the server too."""
    import socket as socketlib

    from tfwizard.front import wire

    front.up()
    made = tmp_path / "sub" / "r.toml"
    (tmp_path / "sub").mkdir()
    request = {"argv": ["recipe", "new", "r.toml"], "argv0": TFWIZARD,
               "cwd": str(tmp_path / "sub"), "env": front.env, "umask": 0o022}
    n = len(front.child_pids())
    with socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(front.socket))
        wire.send_message(sock, request, [0, 1, 2])
        answer, _fds = wire.recv_message(sock)
        assert answer and answer.get("started"), answer
        time.sleep(2.0)  # a client that is slow to say "go": the command waits for it
        assert not made.exists()
    child = wait_for(lambda: front.child_pids()[n:] and front.child_pids()[n])
    wait_for(lambda: not alive(child), timeout=10)
    assert not made.exists()  # it never ran
    with socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM) as sock:  # with "go": runs
        sock.settimeout(30)
        sock.connect(str(front.socket))
        wire.send_message(sock, request, [0, 1, 2])
        assert wire.recv_message(sock)[0].get("started")
        wire.send_message(sock, {"go": True})
        answer, _fds = wire.recv_message(sock)
        assert answer == {"exit": 0}, answer
    assert made.is_file()
