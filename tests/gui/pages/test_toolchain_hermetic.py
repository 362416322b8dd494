"""The Toolchain page on a release with TF's hermetic C++ toolchain: the clang list is the
LLVM versions its pin offers (LLVM_VERSION), and a box switches to the image's clang
(toolchain.local_clang); the page only writes the recipe."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tfwizard.gui.pages import PageId

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support")


def _on_toolchain(make_window, version: str):
    wizard = make_window().wizard
    wizard.state.update({"tensorflow.version": version, "backend.kind": "cuda",
                         "python.version": "3.12", "cuda.version": "12.8.1",
                         "cuda.cudnn": "9.8.0" if version == "2.20.0" else "9.10.2"})
    wizard.restart()
    assert wizard.go_to(PageId.TOOLCHAIN) == PageId.TOOLCHAIN
    return wizard, wizard.toolchain


def _values(combo) -> list[str]:
    return [combo.itemData(i) for i in range(combo.count())]


def test_the_hermetic_llvm_versions_are_the_choices(make_window, kb):
    wizard, page = _on_toolchain(make_window, "2.21.0")
    release = kb.release("2.21.0")
    assert _values(page.clang_combo) == ["", *release.hermetic_llvm_versions]
    assert page.clang_combo.itemText(0) == "(default: hermetic LLVM 18)"
    assert page.local_check.isVisibleTo(page) and not page.local_check.isChecked()
    index = page.clang_combo.findData("21")
    page.clang_combo.setCurrentIndex(index)
    page.clang_combo.activated.emit(index)
    assert wizard.state.recipe.toolchain.clang == "21"


def test_the_image_clang_box_writes_local_clang(make_window, kb):
    wizard, page = _on_toolchain(make_window, "2.21.0")
    page.local_check.click()
    assert wizard.state.recipe.toolchain.local_clang is True
    page.sync()
    # the image's clang: every clang the knowledge base knows, as on older releases
    assert _values(page.clang_combo) == ["", *(str(c) for c in sorted(kb.clangs))]
    page.local_check.click()
    assert wizard.state.recipe.toolchain.local_clang is False


def test_a_release_without_the_hermetic_toolchain_has_no_box(make_window):
    _wizard, page = _on_toolchain(make_window, "2.20.0")
    assert not page.local_check.isVisibleTo(page)
    assert "21" in _values(page.clang_combo) and "22" in _values(page.clang_combo)


def test_a_checkout_s_pin_gives_the_choices(make_window, tmp_path):
    """The list is the source's view: a 2.21 checkout pinning rules_ml_toolchain 3cce03c
    offers its LLVM 22, which the table's 2.21.0 entry lacks (tfsource/overlay.py)."""
    tree = tmp_path / "tf"
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "tf_trees" / "2.21", tree)
    pin = tree / "tensorflow" / "workspace0.bzl"
    pin.write_text(pin.read_text().replace("d8cb9c2c168cd64000eaa6eda0781a9615a26ffe",
                                           "3cce03c2becb6d2b56b99dece73b9b95b2f926f4"))
    wizard, page = _on_toolchain(make_window, "2.21.0")
    wizard.state.update({"tensorflow.source_dir": str(tree)})
    page.sync()
    assert _values(page.clang_combo) == ["", "18", "19", "20", "21", "22"]
