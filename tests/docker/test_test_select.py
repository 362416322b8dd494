"""`tfwizard test RECIPE` without targets (issue 23, core/testloop/select.py, cli/testsel.py)
against the real engine: the fixture workspace as a git checkout, one kernel source edited,
and exactly the tests that depend on it selected (git diff + `bazel query rdeps` inside the
warm container), run, and named with their results in the pull-request summary.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.docker import kit
from tfwizard.cli import capture

pytestmark = [pytest.mark.docker, pytest.mark.slow]

EDITED = "tensorflow/core/kernels/reduce_sum_op.cc"
CC = "//tensorflow/core:reduction_ops_test"
PY = kit.FAILING_TESTS[1]
BENCH = "//tensorflow/core:reduction_ops_benchmark_test"  # depends on it too: benchmark-test


@pytest.fixture(scope="module")
def tw(warm_test_world, tmp_path_factory):
    return kit.data_dir(warm_test_world, tmp_path_factory, "testsel")


def _test(tw, *args: str) -> tuple[int, str, str]:
    status, out, err = capture(["test", str(tw.recipe), *args],
                               env_vars={**os.environ, "TFWIZARD_DATA_DIR": str(tw.data)})
    return int(status), out, err


def _listed(err: str) -> set[str]:
    return {ln.split()[0] for ln in err.splitlines() if ln.startswith("  //")}


def test_nothing_changed_nothing_selected(tw):
    status, out, err = _test(tw, "--list")
    assert status == 0, err[-3000:]
    assert "0 changed files against HEAD; 0 tests depend on the change" in err, err[-3000:]
    assert _listed(err) == set()


def test_one_edited_kernel_runs_exactly_its_tests(tw):
    src = tw.workspace / EDITED
    src.write_text(src.read_text() + "\nextern \"C\" int tfw_edit_marker() { return 1; }\n")
    status, out, err = _test(tw, "--json")
    assert status == 1, err[-3000:]  # PY fails on purpose (TFW_FIXTURE_FAIL)
    assert "1 changed file against HEAD; 3 tests depend on the change" in err, err[-3000:]
    assert f"left out by the tag filters: {BENCH} (benchmark-test)" in err
    assert _listed(err) == {CC, PY}
    run = json.loads(out)
    assert run["argv"][-3:] == ["--", CC, PY]
    assert {t["label"]: t["status"] for t in run["tests"]} == {CC: "PASSED", PY: "FAILED"}


def test_the_query_answer_is_kept_until_the_target_graph_changes(tw):
    src = tw.workspace / EDITED
    src.write_text(src.read_text() + "\nextern \"C\" int tfw_edit_marker2() { return 2; }\n")
    _status, _out, err = _test(tw, "--list")
    assert "(bazel query: kept answer, the BUILD files are unchanged)" in err, err[-3000:]
    assert _listed(err) == {CC, PY}
    rc = tw.workspace / ".bazelrc"  # outside every package: the query is the same, the
    rc.write_text(rc.read_text() + "\n# a comment\n")  # graph's files are not
    _status, _out, err = _test(tw, "--list")
    assert "2 changed files against HEAD; 3 tests depend on the change (bazel query: " in err
    assert "not in any Bazel package: .bazelrc" in err and "kept answer" not in err
    assert _listed(err) == {CC, PY}


def test_filter_max_and_package_narrow_and_widen(tw):
    _status, _out, err = _test(tw, "--list", "--filter", "python/")
    assert _listed(err) == {PY} and "1 left out by --filter" in err, err[-3000:]
    _status, _out, err = _test(tw, "--list", "--max", "1")
    assert len(_listed(err)) == 1 and "1 left out by --max 1" in err, err[-3000:]
    _status, _out, err = _test(tw, "--list", "--package")
    # the whole package tensorflow/core (kernels/ has no BUILD file), after the tag filters
    wide = _listed(err)
    assert {CC, PY, "//tensorflow/core:matmul_op_test", "//tensorflow/core:tensor_shape_test"
            } <= wide, err[-3000:]
    assert BENCH not in wide and "//tensorflow/core:concat_op_test" not in wide


def test_the_summary_names_every_test_and_its_result(tw):
    path = tw.base / "summary.md"
    status, out, err = _test(tw, "--summary", str(path))
    assert status == 1, err[-3000:]
    text = path.read_text("utf-8")
    rows = [ln for ln in text.splitlines() if ln.startswith("| `//")]
    assert len(rows) == 2, text
    assert any(f"`{CC}`" in r and "PASSED" in r for r in rows), text
    assert any(f"`{PY}`" in r and "FAILED" in r for r in rows), text
    assert f"{EDITED} | 4 ++++" in text and ".bazelrc" in text and "2 files changed" in text
    assert "- **Ref:** `HEAD (" in text and "- **Release:** 2.21.0" in text
    assert f"tfwizard test {tw.recipe} {CC} {PY}" in text
    assert "Tests: 1 of 2 passed (Bazel: TESTS_FAILED)" in text
    (record,) = [p for p in (tw.data / "tests").iterdir() if (p / "summary.md").is_file()]
    assert (record / "summary.md").read_text("utf-8") == text
