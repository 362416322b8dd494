"""The build side speaks the user's language: plans, progress, install, bundle, preflight,
Docker errors and the runner's own log lines are all marked for translation.

Run in the pseudo language (every translated text comes back as ⟦text⟧), what a person
would read must hold no English prose outside the marks (`tests/i18n_scan.unmarked`).
What stays English on purpose is named where it is allowed: shell commands, Bazel's own
messages, operating-system error texts, and the `step NAME:` line the record parses.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import socket
import sys
import uuid
from pathlib import Path

import pytest

from tests.core.building.test_bundle import ENV as BUNDLE_ENV
from tests.core.building.test_bundle import HOST as BUNDLE_HOST
from tests.core.building.test_bundle import write_record
from tests.core.install.test_install import make_wheel
from tests.i18n_scan import strip_marked, unmarked
from tfwizard.cli.words import progress_text  # the CLI's line
from tfwizard.core import i18n
from tfwizard.core.building.plan.fetchplan import make_fetch_plan
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.plan.render import render_bazelrc, render_commands, render_env
from tfwizard.core.building.report.bundle import make_bundle, read_bundle
from tfwizard.core.building.run.containers import resolve_secrets
from tfwizard.core.building.run.preflight import preflight
from tfwizard.core.building.run.progress import ProgressParser
from tfwizard.core.building.run.record import find_record
from tfwizard.core.building.run.runner import BuildRunner
from tfwizard.core.desktop import desktop_entry, quote_exec_arg, uninstall_desktop_entry
from tfwizard.core.docker import client as dockerutil
from tfwizard.core.errors import InstallFailed, TfWizardError, UsageError
from tfwizard.core.host import HostProfile
from tfwizard.core.install.job import (
    Installation,
    InstallTarget,
    InterpreterTags,
    PipProgress,
    check_wheel,
    create_venv,
    install_cancelled,
    install_phase_name,
    install_wheel,
    interpreter_tags,
    pip_freeze,
    resolve_target,
)
from tfwizard.core.recipe import load_recipe
from tfwizard.core.vocab import PHASES, build_outcome, eta_text, phase_name

ROOT = Path(__file__).resolve().parents[3]
HOSTS = ROOT / "tests" / "data" / "hosts"
RECIPES = sorted((ROOT / "recipes").glob("*.toml"))
LAPTOP = load_recipe(ROOT / "recipes" / "tf218-cuda-laptop.toml")


def hosts_for(name: str) -> tuple[HostProfile, HostProfile]:
    """(build host, target host) profiles that give each example recipe its notes."""
    if "aarch64" in name:
        host = HostProfile.load(HOSTS / "aarch64-server.json")
        return host, host
    build = HostProfile.load(HOSTS / "no-gpu-server.json")
    target = {"rocm": "rocm-mi210.json", "h100": "h100-driver560.json"}
    for key, file in target.items():
        if key in name:
            return build, HostProfile.load(HOSTS / file)
    return build, HostProfile.load(HOSTS / "laptop-rtx3060-550.json")


def comments(text: str) -> str:
    """The comment lines of a rendered plan: the commands themselves are never translated."""
    return "\n".join(line for line in text.splitlines() if line.startswith("#"))


def scan(text: str) -> list[str]:
    """`unmarked` for text whose translated parts may span lines (a message and its hint
    inside one marked template, a paragraph): the marks are taken out of the whole first."""
    return unmarked(strip_marked(text))


def error_text(exc: TfWizardError) -> str:
    return f"{exc.message}\n{exc.hint}"


def chinese(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


# -- plans ------------------------------------------------------------------------------------


@pytest.mark.parametrize("recipe_path", RECIPES, ids=lambda p: p.stem)
def test_rendered_plans_mark_their_human_parts(recipe_path, pseudo_lang):
    recipe = load_recipe(recipe_path)
    build, target = hosts_for(recipe_path.stem)
    plan = make_plan(recipe, build_host=build, target_host=target,
                     recipe_dir=recipe_path.parent, uid=1000, gid=1000)
    text = render_commands(plan)
    assert comments(text).count("⟦") >= 4  # title, container, inside, wheel
    assert unmarked(comments(text)) == []
    # the commands stay what a shell runs
    assert "docker run --rm -it" in text and "\n./configure\n" in text and "⟦" not in \
        "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    for line in render_env(plan).splitlines():  # KEY=value, read by configure.py
        assert "=" in line and "⟦" not in line
    for line in render_bazelrc(plan).splitlines():  # read by Bazel
        assert "⟦" not in line and (line.startswith(("build", "test")) or not line)
    # the reasons for the flags and the notes (shown in the wizard's plan view)
    assert unmarked("\n".join(f.why for f in plan.bazel_flags)) == []
    assert unmarked("\n".join(plan.notes)) == []
    fetch = make_fetch_plan(recipe, build_host=build, target_host=target,
                            recipe_dir=recipe_path.parent, uid=1000, gid=1000)
    assert unmarked("\n".join(fetch.notes)) == []


def test_aarch64_notes_and_plan_errors_are_marked(pseudo_lang):
    recipe = load_recipe(ROOT / "recipes" / "tf221-aarch64-cpu.toml").with_changes(
        {"build.image": "", "tensorflow.version": "2.15.0", "python.version": "3.11"})
    host = HostProfile.load(HOSTS / "aarch64-server.json")
    plan = make_plan(recipe, build_host=host, target_host=host, uid=1000, gid=1000)
    assert sum(n.startswith("⟦aarch64") for n in plan.notes) == 3
    assert unmarked("\n".join(plan.notes)) == []
    with pytest.raises(UsageError) as info:
        make_plan(LAPTOP.with_changes({"tensorflow.version": "1.0.0"}))
    assert unmarked(error_text(info.value)) == []
    secret = LAPTOP.with_changes({"network.https_proxy": "${TFW_NO_SUCH_PROXY}"})
    with pytest.raises(UsageError) as info:
        resolve_secrets(make_plan(secret, uid=1000, gid=1000), {})
    assert unmarked(error_text(info.value)) == []


def test_a_plan_comment_in_chinese(zh_cn_lang):
    text = render_commands(make_plan(LAPTOP, uid=1000, gid=1000))
    assert "# 启动构建容器（wheel 会出现在 ./tfwizard-out 中）：" in text and "# 在容器内：" in text
    assert "# 用环境变量回答 configure 的每个问题：" in text
    assert "docker run --rm -it" in text and "\nexport TF_NEED_CUDA=1\n" in text


# -- progress ---------------------------------------------------------------------------------


def test_progress_phase_and_eta_texts_are_marked(pseudo_lang):
    now = [0.0]
    parser = ProgressParser(clock=lambda: now[0])
    shown = []
    lines = ["Analyzing: target //tensorflow/tools/pip_package:wheel (12 packages loaded, "
             "34 targets configured)",
             "INFO: Analyzed target //tensorflow/tools/pip_package:wheel (100 packages "
             "loaded, 2000 targets configured).",
             "[1 / 400] Compiling tensorflow/core/a.cc; 1s local",
             "[200 / 400] Compiling tensorflow/core/b.cc; 3s local"]
    for line in lines:
        now[0] += 30.0
        p = parser.feed(line)
        assert p is not None
        # Bazel's own action text stays as Bazel printed it
        bazel = p.message if p.message.startswith("Compiling") else ""
        text = progress_text(p)
        shown.append(text)
        assert unmarked(text, allow=(bazel,) if bazel else ()) == [], text
    assert "⟦Analysing {target}⟧".replace("{target}", "target //tensorflow/tools/"
                                          "pip_package:wheel") == parser.feed(lines[0]).message
    assert "ETA" in shown[-1] and "200/400" in shown[-1]
    for seconds in (None, 7, 125.0, 4000):
        assert unmarked(eta_text(seconds)) == [] and eta_text(seconds).startswith("⟦ETA")
    for phase in PHASES:
        assert phase_name(phase) == f"⟦{phase}⟧"


def test_phase_names_and_eta_in_english_and_chinese(zh_cn_lang):
    assert phase_name("compile") == "编译" and eta_text(3725) == "预计剩余：1 小时 02 分"
    i18n.set_language("en")
    assert [phase_name(p) for p in PHASES] == list(PHASES)
    assert eta_text(125) == "ETA: 2 min 05 s" and eta_text(None) == "ETA: estimating…"


# -- install ----------------------------------------------------------------------------------


def test_install_errors_without_network_are_marked(tmp_path, pseudo_lang):
    texts = []
    for kwargs in ({}, {"venv": sys.prefix}, {"venv": tmp_path / "absent"},
                   {"python": tmp_path / "no-python"}, {"python": sys.executable, "create": True}):
        with pytest.raises(UsageError) as info:
            resolve_target(**kwargs)
        texts.append(error_text(info.value))
    full = tmp_path / "full"
    (full / "x").mkdir(parents=True)
    with pytest.raises(UsageError) as info:
        resolve_target(venv=full, create=True)
    texts.append(error_text(info.value))

    wheel = make_wheel(tmp_path / "w", "tinypkg", tag="cp39-cp39-win_amd64")
    linux = InterpreterTags("/t/bin/python", "3.11.9", "CPython", "linux", "x86_64",
                            ("cp311-cp311-manylinux_2_17_x86_64", "cp311-abi3-linux_x86_64",
                             "py3-none-any"))
    with pytest.raises(InstallFailed) as failed:
        check_wheel(wheel, linux)
    texts.append(error_text(failed.value))
    assert "win_amd64" in failed.value.message and "cp39-cp39" in failed.value.message
    with pytest.raises(UsageError) as info:
        check_wheel(tmp_path / "not-a-wheel.whl", linux)
    texts.append(error_text(info.value))

    missing = tmp_path / "no-python"
    with pytest.raises(InstallFailed) as failed:  # the OS says why it cannot run
        interpreter_tags(missing)
    texts.append(error_text(failed.value))
    with pytest.raises(InstallFailed) as failed:  # a "python" that answers nothing
        interpreter_tags("/bin/true")
    texts.append(error_text(failed.value))
    with pytest.raises(InstallFailed) as failed:
        pip_freeze("/bin/false")
    texts.append(error_text(failed.value))
    with pytest.raises(InstallFailed) as failed:
        create_venv(InstallTarget(tmp_path / "v" / "bin" / "python", tmp_path / "v", True,
                                  Path("/bin/false")))
    texts.append(error_text(failed.value))

    target = InstallTarget(Path(sys.executable))
    for wheel_path, extras in ((tmp_path / "absent.whl", ()), (wheel, ("bad extra!",))):
        with pytest.raises(UsageError) as info:
            asyncio.run(_drain(Installation(wheel_path, target, extras)))
        texts.append(error_text(info.value))
    for text in texts:
        assert "⟦" in text and unmarked(text) == [], text


async def _drain(installation: Installation) -> None:
    async for _event in installation.events():
        pass


def test_pip_summary_and_phases_are_marked(pseudo_lang):
    progress = PipProgress()
    for line in ("Processing /w/fakeflow-1.0-py3-none-any.whl",
                 "  Downloading numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl (18.3 MB)",
                 "  Using cached six-1.16.0-py2.py3-none-any.whl (11 kB)",
                 "Requirement already satisfied: wheel in ./lib/python3.11/site-packages",
                 "Installing collected packages: numpy, fakeflow"):
        snap = progress.feed(line)
    assert snap is not None
    summary = snap.summary()
    assert summary.startswith("[⟦install⟧] ") and summary.count("⟦") == 6
    assert unmarked(summary) == []
    assert [install_phase_name(p) for p in ("resolve", "download", "done")] == \
        ["⟦resolve⟧", "⟦download⟧", "⟦done⟧"]


@pytest.mark.slow
def test_a_failed_install_in_a_new_venv_reports_in_the_language(tmp_path, pseudo_lang):
    bad = make_wheel(tmp_path / "w", "brokenflow", requires=("tfwizard-no-such-package-xyz",))
    folder = tmp_path / "venv"
    result = install_wheel(bad, resolve_target(venv=folder, create=True), [], no_index=True,
                           find_links=[str(tmp_path / "w")])
    assert result.status == "failed" and not folder.exists()
    assert result.message.count("⟦") == 2 and unmarked(result.message) == []
    cancelled = install_cancelled(result)
    assert unmarked(cancelled.message) == []


def test_an_install_error_in_chinese(zh_cn_lang, tmp_path):
    with pytest.raises(UsageError) as info:
        resolve_target()
    assert info.value.message == "没有安装目标：请指定一个虚拟环境或解释器"
    assert "--venv DIR" in info.value.hint and chinese(info.value.hint)
    with pytest.raises(UsageError) as info:
        resolve_target(venv=tmp_path / "absent")
    assert info.value.message.endswith("）") and "那里没有虚拟环境" in info.value.message


# -- bundle -----------------------------------------------------------------------------------


def test_bundle_readme_and_summaries_are_marked(tmp_path, pseudo_lang):
    record = write_record(tmp_path)
    bundle = make_bundle(record, tmp_path / "b.tar.gz", host=HostProfile.load(BUNDLE_HOST),
                         env=BUNDLE_ENV)
    files = read_bundle(bundle.path)
    readme = files["README.txt"]
    assert readme.count("⟦") >= 10 and scan(readme) == []
    head = files["log-tail.txt"].splitlines()[0]
    assert head.startswith("# ⟦") and unmarked(head) == []
    failed = files["failed-actions.txt"].splitlines()
    assert failed[0] == "--- ⟦log line {line}⟧".replace("{line}", "40")
    # diagnosis.txt: tfwizard's labels (the excerpt lines are the log's own)
    labels = [line for line in files["diagnosis.txt"].splitlines()
              if line.startswith("  ") and not line.startswith("  > ")]
    assert labels and unmarked("\n".join(labels)) == []
    manifest = json.loads(files["manifest.json"])
    assert manifest["status"] == "failed" and "README.txt" in manifest["files"]  # keys stay
    assert unmarked(manifest["host_source"]) == []


def test_a_bare_record_bundle_says_what_is_missing(tmp_path, pseudo_lang):
    bare = tmp_path / "builds" / "20990101-000000-abcdef"
    bare.mkdir(parents=True)
    (bare / "result.json").write_text('{"status": "error"}')
    files = read_bundle(make_bundle(bare, tmp_path / "bare.zip",
                                    host=HostProfile.load(BUNDLE_HOST), env={}).path)
    readme = files["README.txt"]
    assert "⟦Missing:⟧" in readme and readme.count("the record has no") == 3
    assert scan(readme) == []
    assert unmarked("\n".join(json.loads(files["manifest.json"])["notes"])) == []
    for build in ("no-such-build", None):
        with pytest.raises(UsageError) as info:
            find_record(build, env={"TFWIZARD_DATA_DIR": str(tmp_path / "empty")})
        assert unmarked(error_text(info.value)) == []
    with pytest.raises(UsageError) as info:
        make_bundle(tmp_path / "absent")
    assert unmarked(error_text(info.value)) == []


# -- preflight --------------------------------------------------------------------------------


def test_preflight_findings_are_marked(tmp_path, pseudo_lang):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens: the connect is refused at once
    recipe = LAPTOP.with_changes({
        "network.http_proxy": f"http://127.0.0.1:{port}",
        "network.https_proxy": "${TFW_NO_SUCH_PROXY}",
        "network.distdir": str(tmp_path / "no-archives"),
        "remote.cache": f"grpc://127.0.0.1:{port}",
    })
    found = preflight(recipe, {}, timeout_s=1.0)
    assert sorted(f.code for f in found) == ["PATH_MISSING", "PROXY_UNREACHABLE",
                                             "PROXY_UNSET", "REMOTE_UNREACHABLE"]
    for f in found:
        assert f.message.startswith("⟦") and unmarked(f.message) == [], f.message
    no_port = LAPTOP.with_changes({"network.http_proxy": "socks4://proxy.example"})
    [f] = preflight(no_port, {})
    assert f.code == "PROXY_UNREACHABLE" and unmarked(f.message) == []
    assert "⟦no host:port in the URL⟧" in f.message


# -- Docker errors, desktop entry, runner texts without Docker --------------------------------


def test_docker_errors_and_hints_are_marked(tmp_path, pseudo_lang):
    import docker.errors
    import requests.exceptions

    doing = "⟦connecting to Docker⟧"
    errors = [
        docker.errors.ImageNotFound("404", explanation="no such image: x"),
        docker.errors.APIError("500", explanation='could not select device driver "" with '
                                                  "capabilities: [[gpu]]"),
        docker.errors.APIError("409", explanation="conflict"),
        docker.errors.DockerException("Error while fetching server API version: "
                                      "PermissionError(13, 'Permission denied')"),
        requests.exceptions.ConnectionError("Connection aborted."),
        requests.exceptions.ReadTimeout("Read timed out."),
    ]
    for exc in errors:
        for connected in (False, True):
            err = dockerutil.translate(exc, doing, connected=connected)
            assert unmarked(error_text(err)) == [], error_text(err)
    for code in (errno.ENOSPC, errno.EACCES, errno.EIO):
        err = dockerutil.output_error(OSError(code, os.strerror(code)), tmp_path / "x.whl")
        assert err.hint and unmarked(error_text(err)) == []


def test_desktop_entry_errors_are_marked_and_the_entry_is_not(tmp_path, pseudo_lang):
    with pytest.raises(UsageError) as info:
        quote_exec_arg("/a\nb")
    assert unmarked(error_text(info.value)) == []
    apps = tmp_path / "applications"
    apps.mkdir()
    (apps / "tfwizard.desktop").write_text(desktop_entry("/opt/other/tfwizard-gui"))
    with pytest.raises(UsageError) as info:
        uninstall_desktop_entry(tmp_path)
    assert unmarked(error_text(info.value)) == []
    # the file the desktop reads keeps its keys and values as the spec wants them
    assert "⟦" not in desktop_entry("tfwizard-gui")


def test_runner_texts_without_a_docker_engine(tmp_path, pseudo_lang):
    plan = make_plan(LAPTOP, uid=os.getuid(), gid=os.getgid())
    runner = BuildRunner(plan, data_root=tmp_path, env={
        **os.environ, "DOCKER_HOST": f"unix://{tmp_path}/absent.sock"})
    events = asyncio.run(_events(runner))
    result = events[-1].result
    assert result.status == "error" and unmarked(result.message) == []
    said = [line for e in events if e.type == "log" for line in e.lines]
    assert len(said) >= 3 and said[0].startswith("⟦")
    assert scan("\n".join(said)) == []
    # the record keeps the same lines; its machine parts (tags, result.json keys) stay
    log = (runner.record.path / "log.txt").read_text()
    assert log.startswith("tfw | ⟦") and len(log.splitlines()) >= 3
    assert scan("\n".join(line[6:] for line in log.splitlines())) == []
    assert json.loads((runner.record.path / "result.json").read_text())["status"] == "error"
    for status in ("succeeded", "failed", "cancelled", "error"):
        assert unmarked(build_outcome(status, "x")) == []


async def _events(runner: BuildRunner) -> list:
    return [event async for event in runner.events()]


# -- the runner against Docker ----------------------------------------------------------------


@pytest.fixture(scope="module")
def dw(tmp_path_factory):
    from tests.docker import kit

    yield from kit.docker_world(tmp_path_factory, "i18n")


@pytest.mark.docker
@pytest.mark.slow
def test_runner_log_lines_and_results_are_marked(dw, tmp_path, pseudo_lang):
    from tests.docker import kit
    from tfwizard.core.docker.leftovers import find_leftovers

    plan = kit.busybox_plan(tmp_path, kit.make_wheel_script(), prefix=dw.prefix)
    runner = BuildRunner(plan, out_dir=tmp_path / "out", data_root=tmp_path, client=dw.client)
    dw.builds.append(runner.build_id)
    events = kit.run(runner)
    result = events[-1].result
    assert result.status == "succeeded" and unmarked(result.message) == []
    said = [line for e in events if e.type == "log" and e.channel == "tfwizard"
            for line in e.lines]
    # "step build: sh -c ..." stays English: the record finds a step's start by it
    steps = [line for line in said if line.startswith("step build: ")]
    assert len(steps) == 1
    assert scan("\n".join(line for line in said if line not in steps)) == []
    assert runner.record is not None and runner.record.step_line_counts("build")["stdout"] == 0

    (tmp_path / "f").mkdir()
    failing = kit.busybox_plan(tmp_path / "f", "echo broken; exit 3", prefix=dw.prefix)
    runner = BuildRunner(failing, data_root=tmp_path, client=dw.client)
    dw.builds.append(runner.build_id)
    result = kit.run(runner)[-1].result
    assert result.status == "failed" and result.exit_code == 3
    assert unmarked(result.message) == []

    (tmp_path / "m").mkdir()
    missing = kit.busybox_plan(tmp_path / "m", "true", prefix=dw.prefix)
    missing.image = f"tfwizard-test-no-such-image-{uuid.uuid4().hex[:8]}:1"
    runner = BuildRunner(missing, data_root=tmp_path, client=dw.client, pull=False)
    dw.builds.append(runner.build_id)
    result = kit.run(runner)[-1].result
    assert result.status == "error" and unmarked(result.message) == []

    with pytest.raises(UsageError) as info:
        BuildRunner.attach("20990101-000000-abcdef", client=dw.client, data_root=tmp_path)
    assert unmarked(error_text(info.value)) == []
    for item in find_leftovers(dw.client):
        assert unmarked(item.skipped) == []


def test_runner_result_in_chinese(tmp_path, zh_cn_lang):
    plan = make_plan(LAPTOP, uid=os.getuid(), gid=os.getgid())
    runner = BuildRunner(plan, data_root=tmp_path, env={
        **os.environ, "DOCKER_HOST": f"unix://{tmp_path}/absent.sock"})
    result = asyncio.run(_events(runner))[-1].result
    assert result.message.startswith("正在连接 Docker：无法连接 Docker 引擎")
    assert "Docker 守护进程在运行吗？" in result.message
