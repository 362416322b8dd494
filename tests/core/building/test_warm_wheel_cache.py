"""The build exec's wheel checksum kept in the state folder (core/building/warm/bep.py, issue 17):
the real script under sh with coreutils' stat and sha256sum over real files. A wheel with
an unchanged stamp is not hashed again (sha256sum is counted through a PATH entry that
runs the real one); any rewrite, a same-size one with its mtime put back too, is."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from tfwizard.core.building.warm import container as warm
from tfwizard.core.building.warm.bep import WHEEL_SUMS, BuildReport, new_mark, report_script


def _build(tmp_path: Path, wheel: Path, token: str = "x") -> tuple[BuildReport, int]:
    """One build exec over a BEP naming `wheel` twice: (its report, sha256sum runs)."""
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    bep = state / f"bep-{token}.json"
    busy = state / f"busy.{token}"  # as EXEC_WRAPPER writes it: this build's BEP stays
    busy.write_text("1\n")
    events = [{"id": {"namedSet": {"id": "0"}}, "namedSetOfFiles": {"files": [
        {"uri": f"file://{wheel}"}, {"uri": f"file://{wheel}"}]}}]
    bep.write_text("".join(json.dumps(e) + "\n" for e in events))
    shim, count = tmp_path / "shim", tmp_path / "sha256sum-runs"
    shim.mkdir(exist_ok=True)
    real = shutil.which("sha256sum")
    (shim / "sha256sum").write_text(f'#!/bin/sh\necho x >> "{count}"\nexec {real} "$@"\n')
    (shim / "sha256sum").chmod(0o755)
    before = len(count.read_text().splitlines()) if count.exists() else 0
    mark = new_mark()
    run = subprocess.run(["sh", "-c", report_script(warm.BUILD_SCRIPT), "sh", mark, "-",
                          str(bep), "0", "true"], capture_output=True, text=True, check=False,
                         env={**os.environ, "PATH": f"{shim}:{os.environ['PATH']}"})
    busy.unlink()  # as IDLE_LOOP does once the exec is gone
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    report = BuildReport.parse(lines[next(i for i, x in enumerate(lines) if mark in x):], mark)
    after = len(count.read_text().splitlines()) if count.exists() else 0
    return report, after - before


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_noop_reuses_the_kept_checksum_and_a_rewrite_is_hashed_again(tmp_path):
    wheel = tmp_path / "out" / "tensorflow-2.21.0-cp311-cp311-linux_x86_64.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"first wheel" * 1000)
    report, runs = _build(tmp_path, wheel)
    assert runs == 1 and report.cached == set()  # named twice, hashed once
    assert report.sha256 == {str(wheel): _sha(wheel)}
    assert (tmp_path / "state" / WHEEL_SUMS).read_text().split()[4:] == [_sha(wheel), str(wheel)]

    report, runs = _build(tmp_path, wheel)  # a no-op: the same file
    assert runs == 0 and report.cached == {str(wheel)}
    assert report.sha256 == {str(wheel): _sha(wheel)}

    wheel.write_bytes(b"second, longer wheel" * 1000)  # an edit that changed the wheel
    report, runs = _build(tmp_path, wheel)
    assert runs == 1 and report.cached == set() and report.sha256[str(wheel)] == _sha(wheel)


def test_a_same_size_rewrite_with_its_mtime_put_back_is_hashed_again(tmp_path):
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"a" * 4096)
    _build(tmp_path, wheel)
    st = wheel.stat()
    with wheel.open("r+b") as fh:  # same inode, same size, other bytes
        fh.write(b"b" * 4096)
    os.utime(wheel, ns=(st.st_atime_ns, st.st_mtime_ns))  # only ctime tells
    now = wheel.stat()
    assert (now.st_size, now.st_ino, now.st_mtime_ns) == (st.st_size, st.st_ino, st.st_mtime_ns)
    report, runs = _build(tmp_path, wheel)
    assert runs == 1 and report.cached == set()
    assert report.sha256 == {str(wheel): hashlib.sha256(b"b" * 4096).hexdigest()}


def test_a_kept_line_for_another_path_or_a_torn_checksum_is_not_used(tmp_path):
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"w")
    _build(tmp_path, wheel)
    sums = tmp_path / "state" / WHEEL_SUMS
    stamp = sums.read_text().split()[:4]
    sums.write_text(" ".join([*stamp, "0" * 64, str(tmp_path / "other.whl")]) + "\n"
                    + " ".join([*stamp, "0" * 63, str(wheel)]) + "\n")
    report, runs = _build(tmp_path, wheel)
    assert runs == 1 and report.sha256 == {str(wheel): _sha(wheel)}


def test_earlier_builds_files_go_in_one_rm_and_a_busy_builds_stay(tmp_path):
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"w")
    _build(tmp_path, wheel, token="old")
    state = tmp_path / "state"
    (state / "bep-busy.json").write_text("{}\n")
    (state / "busy.busy").write_text("1\n")
    assert {p.name for p in state.glob("bep-old.*")} == {"bep-old.json", "bep-old.wheels"}
    _build(tmp_path, wheel, token="new")
    assert sorted(p.name for p in state.glob("bep-*")) == [
        "bep-busy.json", "bep-new.json", "bep-new.wheels"]


def _configure_runner(tmp_path: Path):
    """BUILD_SCRIPT with a configure that writes its argument into the output (as TF's
    writes the recipe's answers), in the script's real shell; returns build(want, answer)."""
    out, hash_file = tmp_path / ".tf_configure.bazelrc", tmp_path / "configure.sha256"
    kept, calls = tmp_path / "configure.bazelrc", tmp_path / "configure-runs"
    configure = ["sh", "-c", f'echo ran >> "{calls}"; echo "$1" > "{out}"; exit "$0"']

    def build(want: str, answer: str = "a", code: str = "0") -> subprocess.CompletedProcess[str]:
        conf = [warm.IF_CHANGED, str(hash_file), want, str(out), str(kept), "NOTE: not ours",
                *configure, code, answer]
        return subprocess.run(["sh", "-c", warm.BUILD_SCRIPT, "sh", str(tmp_path / "bep-b.json"),
                               str(len(conf)), *conf, "echo", "built"],
                              capture_output=True, text=True, check=False)

    return build, out, hash_file, kept, calls


def test_the_build_scripts_configure_check_runs_configure_only_when_its_hash_changed(tmp_path):
    build, out, hash_file, kept, calls = _configure_runner(tmp_path)
    first = build("h1")
    assert first.stdout.splitlines() == ["built"] and hash_file.read_text() == "h1\n"
    assert kept.read_text() == out.read_text() == "a\n"  # what configure wrote, kept
    again = build("h1")  # unchanged: the check in the script's own shell, configure not run
    assert again.stdout.splitlines() == [warm.SKIP_LINE, "built"]
    assert calls.read_text().splitlines() == ["ran"]
    failed = build("h2", code="3")  # changed, and configure fails: no build, no hash kept
    assert failed.returncode == 3 and "built" not in failed.stdout and not hash_file.exists()
    out.unlink()
    assert build("h2").stdout.splitlines() == ["built"] and hash_file.read_text() == "h2\n"
    assert len(calls.read_text().splitlines()) == 3


def test_another_recipes_configure_output_makes_configure_run_again(tmp_path):
    """Reliability F3: the inputs' hash is this workspace's, but the file in the shared
    source folder holds another recipe's answers: configure runs again, and says why."""
    build, out, hash_file, kept, calls = _configure_runner(tmp_path)
    assert build("p", "answers-of-p").returncode == 0
    out.write_text("answers-of-q\n")  # Q's build of the same checkout, in between
    again = build("p", "answers-of-p")
    assert again.stdout.splitlines() == ["NOTE: not ours", "built"], again.stdout
    assert out.read_text() == kept.read_text() == "answers-of-p\n"
    assert len(calls.read_text().splitlines()) == 2
    # the same hash and the file its own again: skipped
    assert build("p", "answers-of-p").stdout.splitlines() == [warm.SKIP_LINE, "built"]
    # a workspace that kept no copy yet (made by an earlier tfwizard) reruns without a note
    kept.unlink()
    assert build("p", "answers-of-p").stdout.splitlines() == ["built"]
    assert kept.exists()


def test_configure_in_an_exec_of_its_own_checks_the_same(tmp_path):
    out, hash_file, kept = (tmp_path / ".tf_configure.bazelrc", tmp_path / "h",
                            tmp_path / "kept")
    configure = ["sh", "-c", f'echo "$0" > "{out}"']

    def run(answer: str) -> list[str]:
        done = subprocess.run(["sh", "-c", warm.CONFIGURE_IF_CHANGED, "sh", str(hash_file),
                               "want", str(out), str(kept), "NOTE", *configure, answer],
                              capture_output=True, text=True, check=True)
        return done.stdout.splitlines()

    assert run("p") == [] and kept.read_text() == "p\n"
    assert run("p") == [warm.SKIP_LINE]
    out.write_text("q\n")
    assert run("p") == ["NOTE"] and out.read_text() == "p\n"
