"""Injection: every recipe string with newlines, NUL, `;`, `$(...)`, backticks or a leading
`--` is rejected with a message naming its key, or provably inert (it reaches only argv
elements, never a shell, never an option position); every path that becomes a mount or an
output is checked; no name from a container escapes the output folder."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.run.artifacts import extract_wheels as _extract_wheels
from tfwizard.core.building.run.artifacts import wheel_member_name
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.errors import RecipeError
from tfwizard.core.recipe import parse_recipe, schema_reference
from tfwizard.core.rules import evaluate
from tfwizard.core.safety import check_mount_source, check_output_dir

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "tests" / "data" / "hosts" / "no-gpu-server.json"
BAD = {
    "newline": "a\nb",
    "nul": "a\x00b",
    "semicolon": "x;touch /tmp/pwned",
    "subst": "$(touch /tmp/pwned)",
    "backtick": "`touch /tmp/pwned`",
    "option": "--upload-pack=touch /tmp/pwned",
}
ALWAYS_REJECTED = ("newline", "nul")
#: free text (a multi-line description is fine): it reaches no command, file or env at all
FREE_TEXT = ("description",)
#: keys whose values reach a command line, a bazelrc or a URL: every bad value is refused
STRICT = ("name", "tensorflow.version", "tensorflow.ref", "tensorflow.git_url",
          "python.version", "build.image", "build.bazel_flags", "build.opt_flags",
          "remote.cache", "remote.executor", "remote.bes_backend", "remote.headers",
          "network.http_proxy", "network.https_proxy", "install.index_url",
          "cuda.version", "cuda.compute_capabilities", "toolchain.clang", "toolchain.gcc")
BASE = {"schema": 1, "name": "inj",
        "tensorflow": {"version": "2.21.0"}, "backend": {"kind": "cpu"},
        "toolchain": {"gcc": "12", "clang": ""}}
SHELLS = {"sh", "bash", "dash", "zsh", "ash", "/bin/sh", "/bin/bash", "/usr/bin/env"}
CASES = [(row["key"], name) for row in schema_reference()
         if row["kind"] in ("str", "list") and not row["choices"] for name in BAD]


def _doc(key: str, value: object) -> str:
    data = json.loads(json.dumps(BASE))
    section, _, field = key.partition(".")
    if field:
        data.setdefault(section, {})[field] = value
    else:
        data[section] = value
    lines = []
    for k, v in data.items():
        if not isinstance(v, dict):
            lines.append(f"{k} = {json.dumps(v)}")
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{kk} = {json.dumps(vv)}" for kk, vv in v.items()]
    return "\n".join(lines) + "\n"


def _assert_inert(plan, value: str) -> None:
    """The value never reaches a shell nor stands where an option is read."""
    for step in plan.steps:
        assert step.argv[0] not in SHELLS, step.argv
        options_end = False
        for arg in step.argv:
            if arg == "--":
                options_end = True
                continue
            if value not in arg:
                continue
            if arg.startswith("--") and "=" in arg:
                assert arg.index(value) > arg.index("="), arg  # a flag's own value
            else:
                assert options_end or not arg.startswith("-"), (step.name, arg)


@pytest.mark.parametrize(("key", "bad"), CASES)
def test_every_string_key_rejects_or_neutralises_shell_syntax(key, bad, tmp_path):
    row = next(r for r in schema_reference() if r["key"] == key)
    value = BAD[bad]
    doc = _doc(key, [value] if row["kind"] == "list" else value)
    try:
        recipe = parse_recipe(doc, "inj.toml")
    except RecipeError as exc:
        keys = {p.key_path.split("[")[0] for p in exc.problems}
        assert key in keys or any(k.startswith(key) for k in keys), (key, exc.problems)
        assert str(exc).strip()
        return
    assert key in FREE_TEXT or bad not in ALWAYS_REJECTED, f"{key} accepted a {bad}"
    assert key not in STRICT, f"{key} accepted {value!r}"
    try:
        plan = make_plan(recipe, recipe_dir=tmp_path, uid=1000, gid=1000)
    except Exception as exc:  # noqa: BLE001 - a refusal at plan time is fine too
        assert type(exc).__name__ in ("UsageError", "UnsafeValue"), exc
        return
    _assert_inert(plan, value)
    if key in FREE_TEXT:
        data = plan.to_dict()
        used = json.dumps({k: data[k] for k in ("steps", "mounts", "container_env",
                                                "configure_env", "bazel_flags")})
        assert json.dumps(value)[1:-1] not in used


def test_every_plan_step_is_an_argv_list_without_a_shell(tmp_path):
    recipe = parse_recipe(_doc("build.bazel_flags", ["--copt=-O2"]), "inj.toml")
    plan = make_plan(recipe, recipe_dir=tmp_path)
    for step in plan.steps:
        assert isinstance(step.argv, tuple) and all(isinstance(a, str) for a in step.argv)
        assert step.argv[0] not in SHELLS
    fetch = plan.steps[0]
    assert fetch.name == "fetch" and "--" in fetch.argv  # the URL comes after end-of-options


# -- paths -------------------------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX system folders")
@pytest.mark.parametrize("path", ["/", "/etc", "/etc/tfwizard", "/usr/lib/wheels", "/var",
                                  "/var/lib/docker/x", "/run/user/0/w", "/proc/self",
                                  "/tmp/../etc/x"])
def test_output_dir_in_a_system_folder_is_refused(path):
    problem = check_output_dir(path)
    assert problem and "system folder" in problem


def test_output_dir_through_a_symlink_or_dotdot_is_resolved_first(tmp_path):
    (tmp_path / "link").symlink_to("/etc")
    assert "system folder /etc" in (check_output_dir(tmp_path / "link" / "wheels") or "")
    rel = tmp_path / ".." / ".." / ".." / ".." / ".." / ".." / "etc"
    assert "system folder /etc" in (check_output_dir(rel) or "")


def test_output_dir_that_is_a_file_or_not_writable_is_refused(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    assert check_output_dir(tmp_path / "file") == "is a file, not a folder"
    assert "is a file" in (check_output_dir(tmp_path / "file" / "sub") or "")
    assert check_output_dir(tmp_path / "new" / "sub") is None  # created when needed
    # root may write anywhere: the unwritable case is simulated through os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False)
    assert "not writable" in (check_output_dir(tmp_path) or "")


@pytest.mark.parametrize("path", ["/", "/var", "/var/run", "/var/run/docker.sock", "/run",
                                  "/etc", "/usr", "/var/lib/docker"])
def test_a_system_folder_is_never_mounted(path):
    assert "system folder" in (check_mount_source(path) or "")


def test_mount_sources_must_be_folders(tmp_path):
    assert check_mount_source(tmp_path) is None
    assert check_mount_source(tmp_path / "absent") == "is not a folder"
    (tmp_path / "run").symlink_to("/run")
    assert "system folder /run" in (check_mount_source(tmp_path / "run") or "")


def _plan(tmp_path: Path, source_dir: str):
    doc = _doc("tensorflow.source_dir", source_dir).replace('version = "2.21.0"',
                                                            'version = "2.21.0"')
    return make_plan(parse_recipe(doc, "inj.toml"), recipe_dir=tmp_path)


def _result(runner: BuildRunner):
    import asyncio

    async def main():
        return [e async for e in runner.events()][-1].result

    return asyncio.run(main())


def test_the_runner_refuses_bad_paths_before_touching_docker(tmp_path):
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-docker-here.sock"}
    (tmp_path / "src").mkdir()
    runner = BuildRunner(_plan(tmp_path, str(tmp_path / "src")), out_dir=Path("/etc/wheels"),
                         data_root=tmp_path / "data", env=env)
    result = _result(runner)
    assert result.status == "error" and "system folder /etc" in result.message
    assert "Docker" not in result.message  # refused before connecting
    runner = BuildRunner(_plan(tmp_path, "/var/run"), data_root=tmp_path / "data", env=env)
    result = _result(runner)
    assert result.status == "error" and "/var/run" in result.message
    assert "never mounts system folders" in result.message


def test_build_cli_refuses_an_output_folder_that_is_a_file_or_a_system_folder(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "configure.py").write_text("")  # a checkout, as check wants one
    recipe = tmp_path / "r.toml"
    recipe.write_text(_doc("tensorflow.source_dir", str(tmp_path / "src"))
                      .replace("[toolchain]", '[build]\nnetwork = "none"\n[toolchain]'))
    (tmp_path / "afile").write_text("x")
    for out, words in ((str(tmp_path / "afile"), "is a file"), ("/etc", "system folder /etc")):
        status, stdout, stderr = capture(["build", str(recipe), "--host", str(HOST), "--out",
                                          out], env_vars={**os.environ,
                                                          "TFWIZARD_DATA_DIR": str(tmp_path)})
        assert status == ExitStatus.USAGE, stdout + stderr
        assert words in stderr and "--out DIR" in stderr
    assert not (tmp_path / "builds").exists()  # nothing started


# -- names from the container ------------------------------------------------------------------


class _FakeContainer:
    """get_archive returning a crafted tar (what a hostile build image could produce)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def get_archive(self, path: str):
        return iter([self.data[i:i + 1000] for i in range(0, len(self.data), 1000)]), {}


def _tar(members: list[tuple[str, bytes | None, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, link, data in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type = tarfile.SYMTYPE if not link.startswith(b"hard:") else tarfile.LNKTYPE
                info.linkname = link.decode().removeprefix("hard:")
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_no_wheel_name_from_a_container_escapes_the_output_folder(tmp_path):
    out = tmp_path / "a" / "b" / "out"
    out.mkdir(parents=True)
    data = _tar([
        ("./good-1.0-py3-none-any.whl", None, b"good"),
        ("../evil1.whl", None, b"x"),
        ("../../../../evil2.whl", None, b"x"),
        ("/tmp/evil3.whl", None, b"x"),
        ("sub/../../evil4.whl", None, b"x"),
        ("sub/nested-1.0-py3-none-any.whl", None, b"x"),
        ("./link-1.0-py3-none-any.whl", b"/etc/passwd", b""),
        ("./hard-1.0-py3-none-any.whl", b"hard:good-1.0-py3-none-any.whl", b""),
        ("./.hidden.whl", None, b"x"),
        ("./new\nline.whl", None, b"x"),
        ("./-rf.whl", None, b"x"),
        ("./x.whl.tmp", None, b"x"),
    ])
    copied = _extract_wheels(_FakeContainer(data), "/w", out, None)
    assert [p.name for p in copied] == ["good-1.0-py3-none-any.whl"]
    assert sorted(p.name for p in out.iterdir()) == ["good-1.0-py3-none-any.whl"]
    everything = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert everything == ["a", "a/b", "a/b/out", "a/b/out/good-1.0-py3-none-any.whl"]


@pytest.mark.parametrize(("name", "ok"), [
    ("tensorflow-2.21.0-cp311-cp311-linux_x86_64.whl", True),
    ("./tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_17_x86_64.whl", True),
    ("../x.whl", False), ("a/x.whl", False), (".x.whl", False), ("x.whl/", False),
    ("x\x00.whl", False), ("x y.whl", False), ("x.zip", False), ("..", False)])
def test_wheel_member_names(name, ok):
    info = tarfile.TarInfo(name)
    assert (wheel_member_name(info) is not None) == ok


# -- the host network ---------------------------------------------------------------------------


def test_host_network_is_a_warning_with_a_fix_unless_a_loopback_service_needs_it():
    def findings(extra: str):
        doc = _doc("name", "net").replace("[toolchain]", f"[build]\n{extra}\n[toolchain]")
        return [f for f in evaluate(parse_recipe(doc, "n.toml"))
                if f.code == "HOST_NETWORK_EXPOSES_HOST"]

    (host,) = findings('network = "host"')
    assert host.severity == "warning" and host.key == "build.network"
    assert host.fix is not None and host.fix.changes == {"build.network": "bridge"}
    assert findings('network = "bridge"') == [] and findings('network = "none"') == []
    loop = _doc("name", "net").replace("[toolchain]", '[build]\nnetwork = "host"\n[remote]\n'
                                       'cache = "grpc://127.0.0.1:9092"\n[toolchain]')
    (host,) = [f for f in evaluate(parse_recipe(loop, "n.toml"))
               if f.code == "HOST_NETWORK_EXPOSES_HOST"]
    assert host.fix is None  # bridge would break the 127.0.0.1 cache


def test_a_folder_holding_a_socket_or_the_runtime_folder_is_never_mounted(tmp_path):
    import socket

    src = tmp_path / "home"
    (src / ".gnupg").mkdir(parents=True)
    (src / "code").mkdir()
    assert check_mount_source(src, env={}) is None
    agent = socket.socket(socket.AF_UNIX)
    try:
        agent.bind(str(src / ".gnupg" / "S.agent"))  # depth 2, as ~/.gnupg's agent
        problem = check_mount_source(src, env={}) or ""
        assert "holds the socket" in problem and "S.agent" in problem
        assert check_mount_source(src / "code", env={}) is None  # a subfolder without one
    finally:
        agent.close()
    runtime = tmp_path / "run-user"
    runtime.mkdir()
    env = {"XDG_RUNTIME_DIR": str(runtime)}
    for path in (runtime, tmp_path):  # the folder itself, a folder holding it
        assert "runtime folder" in (check_mount_source(path, env=env) or "")
    assert check_mount_source(src / "code", env=env) is None


def test_the_socket_scan_is_bounded(tmp_path):
    import socket

    from tfwizard.core.safety import SOCKET_SCAN_DEPTH, find_socket

    deep = tmp_path.joinpath(*["d"] * (SOCKET_SCAN_DEPTH + 1))
    deep.mkdir(parents=True)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(deep / "s"))
        assert find_socket(str(tmp_path)) is None  # below the scanned levels
        assert find_socket(str(deep.parent)) == str(deep / "s")
        assert find_socket(str(deep.parent), budget=0) is None
    finally:
        sock.close()
