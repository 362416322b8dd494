"""The CLI commands' own texts are all marked for translation, and shown in Chinese.

Each command runs through `capture` in the pseudo language (every translated text comes
back as ⟦text⟧) along paths that need no Docker build: check, plan and build/fetch
--dry-run on recipes/, the check and preflight gates, install into a venv it creates,
verify, bundle of a build record, clean of volumes the test labels itself, the desktop
entry in a temporary XDG_DATA_HOME, diagnose of a real log, and the build printers fed
real build events. `tests/i18n_scan.unmarked` must then find no English prose outside
the marks, except:

- text that is never ours to translate (EXTERNAL: pip's and the compiler's lines, the
  log lines of a build, Python's exception text), and
- core texts still being converted (CORE_PENDING); they come back English until the
  helpers converting tfwizard/core finish.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import uuid
from pathlib import Path

import pytest

from tests import world
from tests.core.building.test_bundle import ENV as BUNDLE_ENV
from tests.core.building.test_bundle import HOST as BUNDLE_HOST
from tests.core.building.test_bundle import write_record
from tests.core.install.test_install import make_wheel
from tests.i18n_scan import unmarked
from tfwizard.cli import Environment, ExitStatus, build_parser, capture
from tfwizard.core import i18n
from tfwizard.core.building.run.events import (
    BuildResult,
    Finished,
    LogLines,
    PhaseChanged,
    Progress,
)
from tfwizard.core.diagnosis.build import diagnose_file
from tfwizard.core.diagnosis.types import DiagnosisEvent
from tfwizard.core.paths import LABEL, own_labels

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "recipes"
HOSTS = ROOT / "tests" / "data" / "hosts"
LOGS = ROOT / "tests" / "data" / "logs"
NO_GPU = HOSTS / "no-gpu-server.json"
OLD_DRIVER = HOSTS / "ada-8.9-driver520.json"  # tf218-cuda-laptop: DRIVER_TOO_OLD (an error)
PSEUDO = {"TFWIZARD_LANG": "pseudo"}
ZH = {"TFWIZARD_LANG": "zh_CN"}

#: never translated, whatever the language: what other programs print, quoted as it is
EXTERNAL = (
    r"^  pip \| .*$",  # pip's own lines (install)
    r"^\[⟦\w+⟧\] .*?⟧: (.*)$",  # pip's last line after install's progress summary
    r"^  > .*$",  # the log excerpt of a diagnosis (compiler and Bazel lines)
    r"\w+Error: No module named .*$",  # Python's exception text, quoted by verify
)

# ---------------------------------------------------------------------------------------
# CORE_PENDING: texts made in tfwizard/core, which other helpers were converting while this
# test was written. Their English would be allowed here ONLY while that work goes on; the
# lead removes any allowance when the core is done. None is needed any more: every core text
# these screens show (findings, plan comments, install progress, verify's report, the
# core's UsageErrors) is already marked. Add a regex here (with its core module) only for a
# core text still English; group 1, when the pattern has one, is the allowed part.
CORE_PENDING: tuple[str, ...] = ()
# ---------------------------------------------------------------------------------------


def check_marked(text: str, *, allow: tuple[str, ...] = ()) -> None:
    """No English prose outside ⟦ ⟧ in `text`, but for EXTERNAL and CORE_PENDING texts."""
    found = [m.group(m.lastindex or 0) for pattern in (*EXTERNAL, *CORE_PENDING)
             for m in re.finditer(pattern, text, re.MULTILINE)]
    bad = unmarked(text, allow=(*allow, *sorted(set(found), key=len, reverse=True)))
    assert bad == [], "unmarked text:\n" + "\n".join(bad) + "\n--- in:\n" + text


def run(argv: list[str], extra: dict[str, str] | None = None, **kw):
    env = {**os.environ, **PSEUDO, **(extra or {})}
    return capture(argv, env, **kw)


@pytest.fixture(autouse=True)
def _english_after():
    yield
    assert i18n.language() == "en"  # main() leaves the caller's language as it was
    i18n.set_language("en")


# -- check, plan, build --dry-run, fetch --dry-run -----------------------------------------------


@pytest.mark.parametrize("recipe", sorted(p.name for p in RECIPES.glob("*.toml")))
def test_check_and_plan_of_every_example_recipe(recipe):
    status, out, err = run(["check", str(RECIPES / recipe), "--host", str(NO_GPU), "-v"])
    if status == ExitStatus.USAGE:  # its target profile is not in this checkout
        check_marked(out + err)
        return
    assert status in (ExitStatus.OK, ExitStatus.ERROR), err
    assert re.search(r"^⟦[^⟧]+: ⟦\d+ errors?⟧, ⟦\d+ warnings?⟧", out, re.M), out  # summary, marked
    check_marked(out + err)
    for argv in (["plan"], ["build", "--dry-run"], ["fetch", "--dry-run"]):
        status, out, err = run([*argv, str(RECIPES / recipe), "--host", str(NO_GPU)])
        assert status == ExitStatus.OK, err
        assert "bazel" in out
        check_marked(comments(out) + err)


def comments(plan: str) -> str:
    """The comment lines of a printed plan: the rest are shell commands, never translated."""
    return "".join(line + "\n" for line in plan.splitlines() if line.startswith("#"))


def test_check_errors_and_the_build_gate():
    recipe = str(RECIPES / "tf218-cuda-laptop.toml")
    status, out, err = run(["check", recipe, "--host", str(OLD_DRIVER)])
    assert status == ExitStatus.ERROR
    assert "⟦ERROR⟧ DRIVER_TOO_OLD:" in out and "⟦fix: " in out
    check_marked(out + err)
    for argv in (["build", "--dry-run"], ["fetch", "--dry-run"], ["build"]):
        status, out, err = run([*argv, recipe, "--host", str(OLD_DRIVER)])
        assert status == ExitStatus.ERROR
        assert "⟦ERROR⟧ DRIVER_TOO_OLD:" in err and "in the recipe; fix" in err
        check_marked(out + err)
    status, out, err = run(["build", recipe, "--host", str(OLD_DRIVER)], {"TFWIZARD_LANG": "en"})
    assert "ERROR DRIVER_TOO_OLD:" in err  # English as before
    status, out, err = run(["check", recipe, "--host", str(OLD_DRIVER)], ZH)
    assert re.search(r"^错误 +DRIVER_TOO_OLD: ", out, re.M), out


def test_the_preflight_gate_stops_before_docker(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text((RECIPES / "tf221-cpu-portable.toml").read_text()
                      + f'\n[network]\ndistdir = "{tmp_path / "absent"}"\n')
    status, out, err = run(["build", str(recipe), "--host", str(NO_GPU)])
    assert status == ExitStatus.ERROR
    assert "⟦ERROR⟧ PATH_MISSING" in err and "⟦preflight found 1 error; fix it" in err
    check_marked(out + err)
    status, out, err = run(["fetch", str(recipe), "--host", str(NO_GPU)], ZH)
    assert status == ExitStatus.ERROR and "错误 PATH_MISSING" in err


def test_usage_errors_of_build_and_diagnose(tmp_path):
    status, out, err = run(["build"])
    assert status == ExitStatus.USAGE and "⟦tfwizard build needs a RECIPE" in err
    check_marked(out + err)
    status, out, err = run(["build", str(RECIPES / "tf221-cpu-portable.toml"), "--host",
                            str(NO_GPU), "--out", "/proc"])
    assert status == ExitStatus.USAGE and "⟦the output folder /proc" in err
    check_marked(out + err)
    status, out, err = run(["diagnose", str(tmp_path / "none.log")])
    assert status == ExitStatus.USAGE
    check_marked(out + err)


# -- diagnose ----------------------------------------------------------------------------------


def test_diagnose_of_a_failed_and_a_clean_log():
    status, out, err = run(["diagnose", str(LOGS / "fixture-break.log.txt")])
    assert status == ExitStatus.OK
    assert "compile-error: " in out and "⟦log lines: " in out and "⟦cause: " in out
    check_marked(out + err)
    status, out, err = run(["diagnose", str(LOGS / "fixture-cold.log.txt")])
    assert status == ExitStatus.OK and "no known failure signature" in out
    check_marked(out + err)


# -- the build printers ------------------------------------------------------------------------

LOG = ("INFO: Analyzed target //tensorflow/tools/pip_package:wheel (612 packages loaded).",
       "ERROR: /src/tensorflow/core/BUILD:33:11: Compiling matmul_op.cc failed: (Exit 1)")


def _events(status: str) -> list:
    found = diagnose_file(LOGS / "fixture-break.log.txt") if status != "succeeded" else []
    result = BuildResult("20260101-000000-abcdef", status, "/tmp/rec",
                         wheel="/tmp/out/t-2.21.0-cp312-linux_x86_64.whl"
                         if status == "succeeded" else None,
                         message="" if status == "succeeded" else "step build exited with 1")
    return [PhaseChanged("analyse", "build"), LogLines("stderr", LOG, 1),
            Progress("compile", done=10, total=200, eta_s=3725.0, message="Compiling x.cc"),
            Progress("link", done=150, total=200),
            *[DiagnosisEvent(d.id, d.title, d.cause, d.next_step, tuple(d.lines),
                           dict(d.recipe_fix)) for d in found],
            Finished(result)]


@pytest.mark.parametrize("printer", ["PlainPrinter", "RichPrinter"])
@pytest.mark.parametrize("status", ["succeeded", "failed", "cancelled", "error"])
def test_the_build_printers(printer, status):
    from tfwizard.cli import follow

    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, env={})
    i18n.set_language("pseudo")
    try:
        with getattr(follow, printer)(env) as shown:
            for event in _events(status):
                if printer == "PlainPrinter" and isinstance(event, Progress):
                    shown._last_progress = -10.0  # each progress line, not one per 5 s
                shown.event(event)
    finally:
        i18n.set_language("en")
    text = out.getvalue() + err.getvalue()
    if status == "succeeded":
        assert "⟦Wheel: /tmp/out/" in text
    else:
        assert f"⟦Build {status}: step build exited with 1⟧" in text
        assert "⟦cause: " in text and "⟦Record: /tmp/rec" in text
    if printer == "RichPrinter":
        assert f"⟦{status}⟧" in text  # the progress bar's last state
    else:
        assert "tfwizard: ⟦phase ⟦analyse⟧⟧" in text
        assert "⟦progress ⟦compile⟧ 10/200 actions, ⟦ETA: ⟦1 h 02 min⟧⟧⟧" in text
    check_marked(text, allow=LOG)


def test_the_build_printers_in_chinese():
    from tfwizard.cli.follow import PlainPrinter

    out = io.StringIO()
    i18n.set_language("zh_CN")
    try:
        with PlainPrinter(Environment(stdout=out, stderr=out, env={})) as shown:
            for event in _events("failed"):
                shown._last_progress = -10.0
                shown.event(event)
    finally:
        i18n.set_language("en")
    text = out.getvalue()
    assert "tfwizard: 阶段 分析" in text and "构建失败：step build exited with 1" in text
    assert "进度 编译 10/200 个动作，预计剩余：1 小时 02 分" in text


# -- install, verify ---------------------------------------------------------------------------


@pytest.mark.slow
def test_install_and_verify(tmp_path):
    good = make_wheel(tmp_path / "wheels", "tinypkg")
    junk = tmp_path / "junk-1.0-py3-none-any.whl"
    junk.write_text("not a zip\n")
    target = tmp_path / "venv"
    status, out, err = run(["install", str(good), "--venv", str(target), "--create",
                            "--no-index"])
    assert status == ExitStatus.OK, out + err
    assert f"⟦created venv {target}⟧" in out and "⟦Installed " in out
    assert "⟦Next: `tfwizard verify --python" in out
    check_marked(out + err)

    status, out, err = run(["install", str(junk), "--venv", str(target), "--no-index"])
    assert status == ExitStatus.ERROR and "⟦Install failed: " in out
    check_marked(out + err)
    status, out, err = run(["install", str(junk), "--venv", str(target), "--no-index"], ZH)
    assert status == ExitStatus.ERROR
    assert re.search(r"^安装失败：", out, re.M), out  # the Chinese line of install

    status, out, err = run(["install", str(tmp_path / "absent.whl"), "--venv", str(target)])
    assert status == ExitStatus.USAGE  # a bad wheel path: the core's message
    check_marked(out + err)

    saved = tmp_path / "verify.json"
    status, out, err = run(["verify", "--venv", str(target), "--host", str(NO_GPU),
                            "--save", str(saved)])
    assert status == ExitStatus.ERROR and saved.is_file()  # no TensorFlow in it
    assert f"⟦Report saved to {saved}⟧" in out
    check_marked(out + err)


def test_verify_usage_errors(tmp_path):
    status, out, err = run(["verify"], {"TFWIZARD_DATA_DIR": str(tmp_path)})
    assert status == ExitStatus.USAGE and "⟦no interpreter to verify⟧" in err
    check_marked(out + err)
    status, out, err = run(["verify", "--python", sys.executable, "--build", "nosuch"],
                           {"TFWIZARD_DATA_DIR": str(tmp_path)})
    assert status == ExitStatus.USAGE and "⟦nosuch: no such build id or build record folder⟧" in err
    check_marked(out + err)


# -- bundle ------------------------------------------------------------------------------------


def test_bundle_of_a_record(tmp_path):
    env = {**BUNDLE_ENV, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    status, out, err = run(["bundle", "--host", str(BUNDLE_HOST)], env, cwd=tmp_path)
    assert status == ExitStatus.USAGE  # no records yet: the core's message
    check_marked(out + err)
    write_record(tmp_path / "data", "20261122-080000-000002")
    status, out, err = run(["bundle", "--host", str(BUNDLE_HOST)], env, cwd=tmp_path)
    assert status == ExitStatus.OK, err
    assert "⟦Wrote " in out and "⟦Read its README.txt" in out
    check_marked(out + err)
    status, out, err = run(["bundle", "--host", str(BUNDLE_HOST), "--out", "b.zip"],
                           {**env, **ZH}, cwd=tmp_path)
    assert status == ExitStatus.OK and "敏感信息已屏蔽" in out


# -- the desktop entry -------------------------------------------------------------------------


def test_install_desktop_entry_and_uninstall(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    gui = tmp_path / "bin" / "tfwizard-gui"
    status, out, err = run(["install-desktop-entry", "--exec", str(gui)], env)
    assert status == ExitStatus.OK, err
    assert "⟦Installed " in out and "⟦It appears in the application menu" in out
    check_marked(out + err)
    status, out, err = run(["install-desktop-entry", "--uninstall"], env)
    assert status == ExitStatus.OK and "⟦Removed 5 files under" in out
    check_marked(out + err)
    status, out, err = run(["install-desktop-entry", "--uninstall"], {**env, **ZH})
    assert status == ExitStatus.OK and "下没有需要删除的内容" in out


# -- clean -------------------------------------------------------------------------------------


@pytest.mark.docker
def test_clean_lists_and_removes_in_the_current_language():
    world.require_docker()
    from tfwizard.core.docker import client as dockerutil

    client = dockerutil.connect(os.environ)
    tag = uuid.uuid4().hex[:6]
    build_id = f"20990101-000000-{tag}"
    mine = client.volumes.create(name=f"tfwizard-i18n-src-{tag}", labels=own_labels(**{
        f"{LABEL}.build": build_id, f"{LABEL}.volume": "src"}))
    cache = client.volumes.create(name=f"tfwizard-i18n-cache-{tag}", labels=own_labels(**{
        f"{LABEL}.volume": "repo"}))
    try:
        status, out, err = run(["clean", "--dry-run"])
        assert status == ExitStatus.OK, err
        assert f"⟦would remove ⟦volume {mine.name} (build {build_id}, src)⟧⟧" in out
        assert f"⟦kept ⟦volume {cache.name} (repo)⟧: " in out
        assert re.search(r"^⟦Would remove \d+ of \d+ tfwizard objects?;", out, re.M)
        check_marked(out + err)
        status, out, err = run(["clean", "--dry-run"], ZH)
        assert f"将删除卷 {mine.name}（构建 {build_id}，src）" in out  # the Chinese of clean
        assert f"保留卷 {cache.name}（repo）：" in out

        # remove for real only when nothing but this test's volume would go: the engine is
        # shared with whatever else runs on this machine
        status, out, _err = capture(["clean", "--dry-run", "--json"], os.environ)
        going = {i["name"] for i in json.loads(out)["items"] if not i["skipped"]}
        if going == {mine.name}:
            status, out, err = run(["clean"])
            assert status == ExitStatus.OK, err
            assert f"⟦removed ⟦volume {mine.name} (build {build_id}, src)⟧⟧" in out
            assert re.search(r"^⟦Removed 1 of \d+ tfwizard objects?;", out, re.M)
            check_marked(out + err)
            status, out, err = run(["clean"])  # nothing (of ours) to clean now
            assert status == ExitStatus.OK and re.search(r"^⟦Removed 0 of ", out, re.M)
            check_marked(out + err)
    finally:
        for volume in (mine, cache):
            try:
                volume.remove(force=True)
            except Exception:  # noqa: BLE001 - already removed by `clean`
                pass
        client.close()


# -- recipe new --------------------------------------------------------------------------------


def _new_recipe(folder: Path, lang: str) -> str:
    out = folder / f"{lang}.toml"
    status, _out, err = run(["recipe", "new", str(out), "--backend", "cuda"],
                            {"TFWIZARD_LANG": lang})
    assert status == ExitStatus.OK, err
    return out.read_text(encoding="utf-8")


def test_recipe_new_comments_in_the_user_s_language(tmp_path):
    """The written recipe explains its keys in the user's language; keys, values and choices
    stay as they are, so each language's file is the same recipe."""
    from tfwizard.core.recipe import SECTIONS, parse_recipe

    en, zh, pseudo = (_new_recipe(tmp_path, lang) for lang in ("en", "zh_CN", "pseudo"))
    assert "# tfwizard recipe: what to build. Replay it with `tfwizard build FILE`." in en
    assert 'kind = "cuda" # what the wheel runs on (cpu | cuda | rocm)' in en
    assert "# Bazel --jobs; 0 = decide from RAM and CPUs" in en
    assert not re.search(r"[\u4e00-\u9fff]", en)
    assert "# tfwizard 配方：要构建什么。用 `tfwizard build FILE` 重放它。" in zh
    assert 'kind = "cuda" # wheel 运行在哪种后端上 (cpu | cuda | rocm)' in zh
    assert "# Bazel 的 --jobs；0 = 按内存和 CPU 决定" in zh
    assert "# 封闭式（hermetic）CUDA 版本" in zh
    assert parse_recipe(zh) == parse_recipe(en)
    # every comment goes through the catalog: the two at the top and one for each key
    notes = re.findall(r"(?:^|\s)# (.*)$", pseudo, re.M)
    assert len(notes) == 2 + sum(len(cls.__dataclass_fields__) for cls in SECTIONS.values())
    assert all(n.startswith("⟦") for n in notes), notes


# -- --help of every command -------------------------------------------------------------------


def _commands() -> list[list[str]]:
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = [[]]
    for name, sub in subs.choices.items():
        found.append([name])
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += [[name, inner] for inner in action.choices]
    return found


def test_every_command_is_listed():
    names = {" ".join(c) for c in _commands()}
    assert {"install", "bundle", "clean", "install-desktop-entry", "fetch", "build",
            "check", "plan", "diagnose", "verify", "recipe new"} <= names


@pytest.mark.parametrize("command", [" ".join(c) for c in _commands()])
def test_help_of_every_command_is_marked(command, monkeypatch):
    monkeypatch.setenv("COLUMNS", "10000")  # argparse: one line per help text, unwrapped
    argv = [*command.split(), "--help"]
    status, out, err = run(argv)
    assert status == ExitStatus.OK and "⟦options⟧" in out
    helps = re.findall(r"^  (?:-\S+|[A-Z_.]+)(?:,? \S+)*  +(.*)$", out, re.M)
    assert all(h.startswith("⟦") and h.endswith("⟧") for h in helps), helps
    check_marked(out + err, allow=(f"tfwizard {command}".rstrip(),))  # the usage line
