"""The notes beside list choices, in Chinese: the language's own parentheses and separator
(seen in the zh_CN Toolchain screenshot: ASCII "(…; …)" in a Chinese line)."""

from __future__ import annotations

from tfwizard.core.knowledge import load_knowledge
from tfwizard.core.views.choice_notes import release_label


def test_release_notes_use_chinese_punctuation(zh_cn_lang):
    kb = load_knowledge()
    newest = kb.latest_release()
    label = release_label(kb, newest.version)
    assert label.startswith(f"{newest.version}（最新；CUDA "), label
    assert label.endswith("）") and "(" not in label and "; " not in label
