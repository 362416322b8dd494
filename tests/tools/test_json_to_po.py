"""The converter the lead runs after merging a branch with a `zh_CN-<branch>.json`: on a
copy of the repository, a new text of the branch's code gets its translation in the .po
and the .mo, the file goes, and what cannot go in stays in the file, named."""

from __future__ import annotations

import gettext
import json
import shutil
from pathlib import Path

import pytest

from tests.test_packaging import tracked
from tests.tools import catalog, json_to_po


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A copy of what pybabel reads and writes, with the tools pointed at it."""
    root = tmp_path / "repo"
    for name in tracked("tfwizard", "resources/knowledge", "resources/locale", "babel.cfg",
                        "tests/__init__.py", "tests/tools/__init__.py",
                        "tests/tools/catalog.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(catalog.ROOT / name, root / name)
    monkeypatch.setattr(catalog, "ROOT", root)
    monkeypatch.setattr(catalog, "LOCALE", root / "resources" / "locale")
    monkeypatch.setattr(json_to_po, "JSON_DIR", root / "resources" / "i18n")
    return root


def test_a_branch_s_json_goes_into_the_po_and_mo(repo, capsys):
    # the merged branch's code: a new text (the JSON carries its translation)
    vocab = repo / "tfwizard" / "core" / "vocab.py"
    vocab.write_text(vocab.read_text() + '\n\ndef _merged() -> str:\n'
                     '    return _("A text the merged branch added")\n')
    folder = repo / "resources" / "i18n"
    folder.mkdir()
    good, mixed = folder / "zh_CN-good.json", folder / "zh_CN-mixed.json"
    good.write_text(json.dumps({"A text the merged branch added": "合并的分支新增的文本"}))
    mixed.write_text(json.dumps({
        "Welcome to tfwizard": "欢迎使用 tfwizard",  # the same as the .po's: fine
        "No code marks this text at all": "没有代码使用",
        "Rebuild": "另一种译法",  # the .po has its own
        "{count} error": "{count} 个错误",  # a plural now
    }, ensure_ascii=False))

    assert json_to_po.main([]) == 1
    out = capsys.readouterr().out
    assert "zh_CN-good.json: 1 of 1 entries merged" in out
    assert "zh_CN-mixed.json: 1 of 4 entries merged" in out
    assert not good.exists()
    left = json.loads(mixed.read_text())
    assert set(left) == {"No code marks this text at all", "Rebuild", "{count} error"}
    assert "no code marks this text" in out and "translates it differently" in out
    assert "now a plural" in out

    po = catalog.po_path("zh_CN").read_text()
    assert 'msgid "A text the merged branch added"\nmsgstr "合并的分支新增的文本"' in po
    assert "No code marks this text" not in po
    with catalog.mo_path("zh_CN").open("rb") as f:
        mo = gettext.GNUTranslations(f)
    assert mo.gettext("A text the merged branch added") == "合并的分支新增的文本"
    assert mo.gettext("Rebuild") != "另一种译法"

    mixed.unlink()  # the lead dealt with the leftovers; another branch merged
    good.write_text(json.dumps({"A text the merged branch added": "合并的分支新增的文本"}))
    assert json_to_po.main([]) == 0
    assert not folder.exists()  # nothing left to convert: the folder goes too
