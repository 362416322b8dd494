"""The estimate's assumptions in Chinese: the knowledge base's caveats (advise.toml) go
through the catalog too, so the Review page does not mix in English sentences."""

from __future__ import annotations

import re

from tests.core.building.test_history import plan_of
from tfwizard.core.building.report import cost

#: six English words in a row: an untranslated sentence (names and numbers are fine)
ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?:[ ,:;()-]+[A-Za-z]{2,}){5}")


def test_the_estimates_assumptions_are_all_chinese(zh_cn_lang):
    for name in ("tf221-cpu-portable.toml", "tf220-cuda-h100-from-gpuless-server.toml"):
        kb, host, plan = plan_of(name)
        found = cost.build_cost(kb, host, plan)
        english = [a for a in found.assumptions if ENGLISH_RUN.search(a)]
        assert english == [], english
        assert any("这是模型而非实测" in a for a in found.assumptions), found.assumptions
