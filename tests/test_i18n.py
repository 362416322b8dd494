"""Every user-visible string is translatable and translated (issue 10).

The strings are the literal first arguments of `tr(...)`, `self.tr(...)` and `_(...)` in
the package, found with `ast`; each needs an entry in resources/i18n/zh_CN.json with the
same `{placeholders}`. Then the GUI and the CLI are run in Chinese.
"""

from __future__ import annotations

import ast
import json
import string
from pathlib import Path

import pytest

from tfwizard.core import i18n

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "resources" / "i18n" / "zh_CN.json"


def marked_strings() -> dict[str, list[str]]:
    """{english text: ["path:line", ...]} for every tr()/_() call with a literal text."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tfwizard").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name not in ("tr", "_", "N_"):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.setdefault(arg.value, []).append(where)
    return found


def placeholders(text: str) -> set[str]:
    return {field for _lit, field, _spec, _conv in string.Formatter().parse(text)
            if field is not None}


def catalog_files() -> list[Path]:
    files = [CATALOG, *sorted(CATALOG.parent.glob("zh_CN-*.json"))]
    assert all(path.parent == CATALOG.parent for path in i18n.catalog_files("zh_CN"))
    return files


def load_catalog() -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in catalog_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data, dict), path
        clash = {k for k in data if k in merged and merged[k] != data[k]}
        assert not clash, f"{path.name} translates these differently: {sorted(clash)}"
        merged.update(data)
    return merged


def test_the_package_marks_strings():
    found = marked_strings()
    assert len(found) > 200  # the GUI and the CLI both
    assert "Welcome to tfwizard" in found and "show this help message and exit" in found


def test_every_marked_string_has_a_chinese_translation():
    catalog = load_catalog()
    missing = {text: where for text, where in marked_strings().items()
               if not catalog.get(text, "").strip()}
    assert not missing, "no zh_CN translation for:\n" + "\n".join(
        f"  {text!r}  ({', '.join(where)})" for text, where in sorted(missing.items()))


def test_translations_keep_the_placeholders():
    bad = {en: zh for en, zh in load_catalog().items() if placeholders(en) != placeholders(zh)}
    assert not bad, "placeholders differ:\n" + "\n".join(f"  {en!r} -> {zh!r}"
                                                         for en, zh in bad.items())


def test_translations_keep_accelerators_and_percent_signs():
    for en, zh in load_catalog().items():
        assert ("&" in en) == ("&" in zh), (en, zh)
        assert en.count("%") == zh.count("%"), (en, zh)  # argparse and QProgressBar formats


def test_no_stale_catalog_entries():
    from tfwizard.core.knowledge import display_texts

    used = set(marked_strings()) | display_texts()  # code, and the knowledge base's texts
    stale = sorted(set(load_catalog()) - used)
    assert not stale, f"catalog entries no code uses: {stale}"


@pytest.mark.parametrize(("env", "lang"), [
    ({"TFWIZARD_LANG": "zh_CN", "LANG": "en_US.UTF-8"}, "zh_CN"),
    ({"TFWIZARD_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh_CN"),
    ({"LC_ALL": "zh_TW.UTF-8", "LANG": "C"}, "zh_CN"),
    ({"LANG": "de_DE.UTF-8"}, "en"),
    ({}, "en"),
])
def test_language_from_env(env, lang):
    assert i18n.language_from_env(env) == lang


def test_cli_help_in_chinese():
    from tfwizard.cli import capture

    status, out, _err = capture(["--help"], {"TFWIZARD_LANG": "zh_CN"})
    assert status == 0
    assert "用法" in out and "从源码构建 TensorFlow" in out and "显示此帮助信息并退出" in out
    status, out, _err = capture(["check", "--help"], {"TFWIZARD_LANG": "zh_CN"})
    assert status == 0 and "以 JSON 格式" in out
    status, out, _err = capture(["--help"], {"LANG": "C.UTF-8"})
    assert "usage:" in out and "show this help message and exit" in out
    assert i18n.language() == "en"  # main() leaves the caller's language as it was


def test_gui_in_chinese_then_english_from_the_menu(qtbot, monkeypatch):
    pytest.importorskip("PySide6")
    from PySide6.QtWidgets import QWizard

    from tfwizard.core.host import HostProfile
    from tfwizard.gui import i18n as gui_i18n
    from tfwizard.gui.main_window import MainWindow
    from tfwizard.gui.pages import PageId

    next_button = QWizard.WizardButton.NextButton
    monkeypatch.setenv("TFWIZARD_LANG", "zh_CN")
    assert gui_i18n.install(gui_i18n.initial_language()) == "zh_CN"
    window = None
    try:
        host = HostProfile.load(ROOT / "tests" / "data" / "hosts" / "ada-8.9-driver550.json")
        window = MainWindow(host=host)
        qtbot.addWidget(window)
        wizard = window.wizard
        assert wizard.buttonText(next_button) == "下一步(&N) >"
        assert wizard.welcome.title() == "欢迎使用 tfwizard"
        assert "本机（构建 wheel）" in wizard.welcome.build_label.text()
        assert window.menuBar().actions()[0].text() == "文件(&F)"
        assert window.language_actions["zh_CN"].isChecked()
        assert wizard.go_to(PageId.SOURCE) == PageId.SOURCE
        assert wizard.source.title() == "TensorFlow 版本与源码"
        name = wizard.state.recipe.name

        window.language_actions["en"].trigger()  # the Language menu
        wizard = window.wizard
        assert wizard.currentId() == PageId.SOURCE and wizard.state.recipe.name == name
        assert wizard.source.title() == "TensorFlow release and source"
        assert wizard.buttonText(next_button) == "&Next >"
        assert window.menuBar().actions()[0].text() == "&File"
        assert window.language_actions["en"].isChecked()
        assert i18n.language() == "en"
    finally:
        gui_i18n.install("en")
        if window is not None:
            window.close()


def test_argparse_errors_in_chinese_and_english():
    from tfwizard.cli import capture

    status, _out, err = capture(["check"], {"TFWIZARD_LANG": "zh_CN"})
    assert status == 2
    assert "tfwizard: check: 缺少必需的参数：RECIPE" in err and "参见 `tfwizard check --help`" in err
    status, _out, err = capture(["nosuch"], {"TFWIZARD_LANG": "zh_CN"})
    assert status == 2 and "无效的选择：'nosuch'" in err and "参数 COMMAND" in err
    status, _out, err = capture(["check", "--bogus", "r.toml"], {"TFWIZARD_LANG": "zh_CN"})
    assert status == 2 and "无法识别的参数：--bogus" in err
    # English again in the same process: argparse's own lookup was restored
    status, _out, err = capture(["check"], {"TFWIZARD_LANG": "en"})
    assert "tfwizard: check: the following arguments are required: RECIPE" in err
    import argparse
    assert argparse._("usage: ") == "usage: "  # type: ignore[attr-defined]


def test_every_argparse_text_is_argparse_s_own():
    """ARGPARSE_TEXTS must be argparse's msgids, or the lookup silently misses."""
    import argparse
    import inspect

    from tfwizard.cli import ARGPARSE_TEXTS

    source = inspect.getsource(argparse)
    for text in ARGPARSE_TEXTS:
        assert repr(text)[1:-1] in source or text in source, text
