"""Every user-visible string is in the gettext catalog, and zh_CN translates it all.

The texts are what Babel extracts (`tests/tools/catalog.py`: `_`, `N_`, `tr`, `ngettext` in
the package, and the knowledge base's shown texts); an `ast` walk of the package checks
that Babel missed no marked text. The .po holds exactly those texts, each translated (every
plural form), none fuzzy, with the same `{placeholders}`; the committed .mo is what the .po
compiles to. Then the GUI and the CLI are run in Chinese.
"""

from __future__ import annotations

import ast
import gettext
import io
import string
from pathlib import Path

import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from tests.tools import catalog as tool
from tfwizard.core import i18n

ROOT = Path(__file__).resolve().parent.parent
PO = tool.po_path("zh_CN")


def marked_strings() -> dict[str, list[str]]:
    """{english text: ["path:line", ...]} for every tr()/_()/N_()/ngettext() call with a
    literal text (both of ngettext's)."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tfwizard").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name not in ("tr", "_", "N_", "ngettext"):
                continue
            for arg in node.args[:2 if name == "ngettext" else 1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    found.setdefault(arg.value, []).append(where)
    return found


def placeholders(text: str) -> set[str]:
    return {field for _lit, field, _spec, _conv in string.Formatter().parse(text)
            if field is not None}


def texts(message) -> list[str]:
    """A message's source texts: its msgid, and a plural's msgid_plural."""
    return list(message.id) if message.pluralizable else [message.id]


def forms(message) -> list[str]:
    """A message's translations: one, or one per plural form."""
    return list(message.string) if message.pluralizable else [message.string]


@pytest.fixture(scope="module")
def template():
    """What the code marks now, extracted by pybabel (about a second)."""
    return tool.template()


@pytest.fixture(scope="module")
def po():
    with PO.open("rb") as f:
        return read_po(f, locale="zh_CN", abort_invalid=True)  # a syntax error raises


def entries(catalog) -> dict[str, object]:
    return {m.id if isinstance(m.id, str) else m.id[0]: m for m in catalog if m.id}


def test_the_package_marks_strings(template):
    found = marked_strings()
    assert len(found) > 200  # the GUI and the CLI both
    assert "Welcome to tfwizard" in found and "show this help message and exit" in found
    ids = entries(template)
    assert "{count} errors" in found and ids["{count} error"].id == ("{count} error",
                                                                     "{count} errors")


def test_babel_finds_every_marked_string(template):
    """A mark Babel cannot see (inside an f-string before Python 3.12) never reaches the
    catalog: look the text up outside the f-string."""
    extracted = {text for m in template if m.id for text in texts(m)}
    missed = {text: where for text, where in marked_strings().items() if text not in extracted}
    assert not missed, "pybabel extract does not find:\n" + "\n".join(
        f"  {text!r}  ({', '.join(where)})" for text, where in sorted(missed.items()))


def test_the_knowledge_texts_shown_are_extracted(template):
    from tfwizard.core.knowledge import display_texts

    shown = display_texts()
    ids = entries(template)
    assert len(shown) > 100 and not sorted(shown - set(ids))
    assert any(loc[0].startswith("resources/knowledge/failures.toml")
               for t in shown for loc in ids[t].locations)


def test_the_catalog_holds_every_text_and_no_other(template, po):
    want, have = entries(template), entries(po)
    missing = sorted(set(want) - set(have))
    unused = sorted(set(have) - set(want))
    fix = " (run `python -m tests.tools.catalog`)"
    assert not missing, f"not in {PO.name}{fix}: {missing}"
    assert not unused, f"in {PO.name} but no code marks them{fix}: {unused}"
    plural = sorted(k for k in want if want[k].pluralizable != have[k].pluralizable)
    assert not plural, f"singular in one, plural in the other{fix}: {plural}"
    assert not po.obsolete, f"obsolete entries kept: {sorted(po.obsolete)}"


def test_no_json_translation_file_is_left():
    """A merged branch's `resources/i18n/zh_CN-<branch>.json` is loaded by nothing."""
    left = sorted(p.name for p in (ROOT / "resources" / "i18n").glob("*.json"))
    assert not left, f"merge them into the .po: `python -m tests.tools.json_to_po` ({left})"


def test_every_text_has_a_chinese_translation_and_none_is_fuzzy(po):
    assert po.num_plurals == 1 and po.plural_expr == "0"  # Chinese: one form for every n
    untranslated = sorted(m.id for m in po if m.id and not all(f.strip() for f in forms(m)))
    assert not untranslated, "no zh_CN translation for:\n" + "\n".join(map(repr, untranslated))
    fuzzy = sorted(m.id for m in po if m.id and m.fuzzy)
    assert not fuzzy, "fuzzy (check, then remove the `fuzzy` flag):\n" + "\n".join(
        map(repr, fuzzy))
    assert not po.fuzzy  # a fuzzy header: pybabel compile would skip the whole catalog
    assert all(len(forms(m)) == 1 for m in po if m.id and m.pluralizable)


def test_translations_pass_babel_s_checks(po):
    """pybabel compile's own checks (%-format placeholders, plural form counts)."""
    bad = [(m.id, [str(e) for e in errors]) for m, errors in po.check()]
    assert not bad, bad


def test_translations_keep_the_placeholders(po):
    # every plural form keeps the plural text's fields: Chinese uses its one form for any n
    bad = {m.id: forms(m) for m in po if m.id
           for form in forms(m) if placeholders(texts(m)[-1]) != placeholders(form)}
    assert not bad, "placeholders differ:\n" + "\n".join(f"  {en!r} -> {zh!r}"
                                                         for en, zh in bad.items())


def test_translations_keep_accelerators_and_percent_signs(po):
    for m in po:
        for en, zh in ((texts(m)[-1], form) for form in forms(m) if m.id):
            assert ("&" in en) == ("&" in zh), (en, zh)
            assert en.count("%") == zh.count("%"), (en, zh)  # argparse and QProgressBar formats


def test_the_committed_mo_is_the_po_compiled(po):
    """The .mo is committed (a fresh clone's editable install needs it, and the wheel
    ships it as tracked); a .po edited without `python -m tests.tools.catalog compile`
    fails here. Compared by content: Babel writes its own version into the header."""
    out = io.BytesIO()
    write_mo(out, po)
    out.seek(0)
    built = gettext.GNUTranslations(out)
    with tool.mo_path("zh_CN").open("rb") as f:
        committed = gettext.GNUTranslations(f)
    header = ""
    assert {k: v for k, v in committed._catalog.items() if k != header} == \
        {k: v for k, v in built._catalog.items() if k != header}, \
        "the .mo is stale: run `python -m tests.tools.catalog compile`"
    assert committed.plural(1) == committed.plural(5) == 0


def test_gettext_loads_the_catalog_with_plurals():
    zh = i18n.catalog("zh_CN")
    assert isinstance(zh, i18n.Catalog)
    assert zh.gettext("Welcome to tfwizard") == "欢迎使用 tfwizard"
    assert zh.lookup("Welcome to tfwizard") == "欢迎使用 tfwizard"
    assert zh.lookup("no such text") is None and zh.lookup("") is None
    one, many = "{count} error", "{count} errors"
    assert zh.ngettext(one, many, 1) == zh.ngettext(one, many, 7) == "{count} 个错误"
    en = i18n.catalog("en")
    assert en.ngettext(one, many, 1) == one and en.ngettext(one, many, 0) == many
    assert en.lookup("Welcome to tfwizard") is None
    pseudo = i18n.catalog(i18n.PSEUDO)
    assert pseudo.ngettext(one, many, 2) == "⟦{count} errors⟧"
    old = i18n.language()
    try:
        i18n.set_language("zh_CN")
        assert i18n.ngettext(one, many, 3).format(count=3) == "3 个错误"
        assert i18n.translate("") == ""  # not gettext's header
        i18n.set_language("en")
        assert i18n.ngettext(one, many, 1).format(count=1) == "1 error"
    finally:
        i18n.set_language(old)


def test_a_missing_or_broken_catalog_leaves_english(tmp_path, monkeypatch):
    folder = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (tmp_path / "knowledge").mkdir()
    monkeypatch.setattr(i18n, "find_resources_dir", lambda: tmp_path)
    i18n.catalog.cache_clear()
    try:
        assert isinstance(i18n.catalog("zh_CN"), i18n.Untranslated)  # no .mo
        i18n.catalog.cache_clear()
        (folder / "tfwizard.mo").write_bytes(b"not a catalog")
        broken = i18n.catalog("zh_CN")
        assert isinstance(broken, i18n.Untranslated)
        assert broken.gettext("Welcome to tfwizard") == "Welcome to tfwizard"
    finally:
        i18n.catalog.cache_clear()


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
