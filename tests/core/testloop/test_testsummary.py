"""core/testloop/summary.py: the PR summary names every test and its result, the change,
the release and ref, the recipe and the commands; it stays valid Markdown with odd input."""

from __future__ import annotations

import json

from tfwizard.core.recipe import PythonSection, Recipe, TensorflowSection
from tfwizard.core.testloop import run as testrun
from tfwizard.core.testloop.summary import markdown_summary

PASSING = "//tensorflow/core:reduction_ops_test"
FAILING = "//tensorflow/python/kernel_tests:matmul_op_test"
FLAKY = "//tensorflow/core:random_uniform_op_test"
DIFFSTAT = (" tensorflow/core/kernels/reduce_sum_op.cc | 2 +-\n"
            " 1 file changed, 1 insertion(+), 1 deletion(-)\n")


def _ev(kind: str, label: str, body: dict) -> str:
    return json.dumps({"id": {kind: {"label": label}}, kind: body})


def _run() -> testrun.TestRun:
    lines = [
        _ev("testResult", PASSING, {"status": "PASSED", "cachedLocally": True}),
        _ev("testSummary", PASSING, {"overallStatus": "PASSED", "totalRunCount": 1,
                                     "totalNumCached": 1, "totalRunDurationMillis": "63"}),
        _ev("testResult", FAILING, {"status": "FAILED"}),
        _ev("testSummary", FAILING, {"overallStatus": "FAILED", "totalRunCount": 1,
                                     "totalRunDurationMillis": "1250"}),
        _ev("testSummary", FLAKY, {"overallStatus": "FLAKY", "totalRunCount": 2,
                                   "totalRunDurationMillis": "50"}),
        json.dumps({"id": {"buildFinished": {}}, "finished": {
            "exitCode": {"name": "TESTS_FAILED", "code": 3}}}),
    ]
    tests, exit_name = testrun.parse_test_events(lines)
    return testrun.TestRun(3, exit_name, 4.2, tests)


def _summary(**over: object) -> str:
    recipe = Recipe(tensorflow=TensorflowSection(version="2.18.0"),
                    python=PythonSection(version="3.11"))
    args: dict = dict(recipe_path="recipes/cpu.toml", recipe=recipe, diffstat=DIFFSTAT,
                      ref="v2.18.0", commands=["tfwizard test recipes/cpu.toml"])
    return markdown_summary(_run(), **{**args, **over})


def test_every_test_and_its_result_is_a_table_row():
    text = _summary()
    rows = {line.split("|")[1].strip(): line for line in text.splitlines()
            if line.startswith("| `")}
    assert set(rows) == {f"`{PASSING}`", f"`{FAILING}`", f"`{FLAKY}`"}
    assert "✅ PASSED (cached)" in rows[f"`{PASSING}`"] and "| 0.1 s | 1 |" in rows[
        f"`{PASSING}`"]
    assert "❌ FAILED" in rows[f"`{FAILING}`"] and "| 1.2 s |" in rows[f"`{FAILING}`"]
    assert "✅ FLAKY" in rows[f"`{FLAKY}`"] and rows[f"`{FLAKY}`"].endswith("| 2 |")
    assert "Tests: 2 of 3 passed (Bazel: TESTS_FAILED)" in text


def test_the_change_release_ref_recipe_and_commands_are_named():
    text = _summary()
    assert "```\n tensorflow/core/kernels/reduce_sum_op.cc | 2 +-\n 1 file changed" in text
    assert "- **Release:** 2.18.0" in text and "- **Ref:** `v2.18.0`" in text
    assert "- **Recipe:** `recipes/cpu.toml` (cpu, Python 3.11)" in text
    assert text.rstrip().endswith("```sh\ntfwizard test recipes/cpu.toml\n```")


def test_backticks_in_the_change_get_a_longer_fence_and_commands_stay_verbatim():
    text = _summary(diffstat=" a```b | 1 +\n", commands=["echo 'x | y'"])
    assert "````\n a```b | 1 +\n````" in text and "```sh\necho 'x | y'\n```" in text
    run = testrun.TestRun(0, "SUCCESS", 1.0, [])
    assert "No test ran." in markdown_summary(run, recipe_path="r.toml",
                                              recipe=Recipe(), diffstat="", ref="",
                                              commands=[])


def test_chinese_on_request_english_by_default(monkeypatch):
    monkeypatch.setenv("TFWIZARD_LANG", "zh_CN")
    assert "What changed" in _summary()
    assert "What changed" not in _summary(lang="zh_CN")
